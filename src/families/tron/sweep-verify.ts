import { createHash } from 'node:crypto';
import { computeAddress, SigningKey } from 'ethers';
import { CHAIN_DEFAULTS } from '../../chains/chain-defaults.ts';
import { UsageError } from '../../domain/errors.ts';
import type { DecodedPay, DecodedSignedTx, DecodedSweepTx, FamilySweepVerifier, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { hex41ToTron, hexToTron } from './address.ts';
import { bandwidthOf, bandwidthOfSigned, tronFee } from './sweep-fee.ts';
import { readTransferData, type TronSweepPayload, TronSweepPayloadSchema } from './sweep-payload.ts';
import { decodeRaw, decodeSigned as splitSigned, ENERGY, TronProtoError, type TronRaw } from './sweep-proto.ts';

// What a Tron sweep transaction does, read from its protobuf bytes (docs/sweeps/tron.md#what-the-
// verifier-reads). Pure and offline: `sweep sign` and `sweep broadcast` load it.
//  - pays: a TransferContract's amount to its recipient; a TRC-20 transfer(address,uint256)'s
//    amount to its recipient, the token named by the plan's holdings (a token the plan does not
//    hold is refused). Creating an account, lending energy and taking it back move no value, but
//    only for the plan's own deposits (and, for a refund, the buyer's new account): anything else
//    is refused here.
//  - fee: what java-tron burns at most (sweep-fee.ts): the fee limit, plus the bandwidth or the
//    account creation. Which of the owner's bandwidth pays, and whether a TRX transfer's recipient
//    is new, are chain state the bytes cannot carry: the payload states them as planned
//    (`bandwidthFrom`, `createsAccount`, `prices`), and they can misstate a transaction's fee by
//    at most its bandwidth burn and the 1.1 TRX of a new account, never its fee limit.
//  - signed: exactly one 65-byte signature that recovers the contract's owner over
//    sha256(raw_data), which is the txid, and raw_data byte for byte the plan's.

const KINDS: Record<TronSweepPayload['kind'], TronRaw['contract']['type']> = {
  trx: 'TransferContract',
  'top-up': 'TransferContract',
  token: 'TriggerSmartContract',
  activate: 'AccountCreateContract',
  delegate: 'DelegateResourceContract',
  undelegate: 'UnDelegateResourceContract',
};

function payloadOf(plan: SweepPlan, tx: UnsignedSweepTx): { payload: TronSweepPayload; raw: TronRaw; bytes: Uint8Array } {
  if (plan.family !== 'tron') throw new UsageError(`the plan is for the ${plan.family} family, not Tron`);
  const parsed = TronSweepPayloadSchema.safeParse(tx.payload);
  if (!parsed.success) throw new UsageError(`${tx.id}: not a Tron sweep transaction (${parsed.error.issues[0]?.path.join('.') || 'bad shape'})`);
  const bytes = Uint8Array.from(Buffer.from(parsed.data.rawData, 'hex'));
  try {
    return { payload: parsed.data, raw: decodeRaw(bytes), bytes };
  } catch (err) {
    if (err instanceof TronProtoError) throw new UsageError(`${tx.id}: its raw_data ${err.message}`);
    throw err;
  }
}

/** A 41-prefixed 21-byte address of the bytes, in T-form. */
function address(hex41: string, id: string, what: string): string {
  if (!/^41[0-9a-f]{40}$/.test(hex41)) throw new UsageError(`${id}: its ${what} is not a Tron address (${hex41 || 'empty'})`);
  return hex41ToTron(hex41);
}

/** What the transaction does, from its raw_data and the bandwidth it is charged. */
function read(plan: SweepPlan, tx: UnsignedSweepTx, payload: TronSweepPayload, raw: TronRaw, bandwidth: bigint): DecodedSweepTx {
  const c = raw.contract;
  const owner = address(c.owner, tx.id, 'owner');
  const native = CHAIN_DEFAULTS.tron.native;
  const deposits = new Set(plan.deposits.map((d) => d.address));
  const refuse = (why: string): never => {
    throw new UsageError(`${tx.id}: ${why}`);
  };
  if (payload.from !== owner) refuse(`its payload says it is sent from ${payload.from}, its bytes from ${owner}`);
  if (KINDS[payload.kind] !== c.type) refuse(`its payload calls it a ${payload.kind}, its bytes are a ${c.type}`);
  if (c.type !== 'TriggerSmartContract' && raw.feeLimit !== 0n) refuse(`a fee limit on a ${c.type}`);
  const createsAccount = c.type === 'AccountCreateContract' || (c.type === 'TransferContract' && payload.createsAccount);
  if (payload.createsAccount !== createsAccount) refuse(`its payload says it ${payload.createsAccount ? 'creates' : 'does not create'} an account; a ${c.type} ${createsAccount ? 'does' : 'does not'}`);
  if (createsAccount && payload.bandwidthFrom === 'free') refuse('its payload has free bandwidth pay for a new account, which java-tron never does');

  const pays: DecodedPay[] = [];
  switch (c.type) {
    case 'TransferContract':
      pays.push({ to: address(c.to, tx.id, 'recipient'), symbol: native.symbol, token: null, decimals: native.decimals, amount: c.amount });
      break;
    case 'TriggerSmartContract': {
      const token = address(c.contract, tx.id, 'contract');
      const call = readTransferData(c.data);
      if (!call || c.callValue !== 0n) refuse(`calls ${token} with something other than a plain TRC-20 transfer(address,uint256)`);
      const held = plan.deposits.flatMap((d) => d.holdings).find((h) => h.token === token);
      if (!held) refuse(`calls the token ${token}, which the plan does not hold`);
      pays.push({ to: call!.to, symbol: held!.symbol, token, decimals: held!.decimals, amount: call!.amount });
      break;
    }
    case 'DelegateResourceContract':
    case 'UnDelegateResourceContract': {
      const receiver = address(c.receiver, tx.id, 'receiver');
      if (!deposits.has(receiver)) refuse(`${c.type === 'DelegateResourceContract' ? 'lends' : 'takes back'} energy ${c.type === 'DelegateResourceContract' ? 'to' : 'from'} ${receiver}, which is not a deposit of the plan`);
      if (c.resource !== ENERGY) refuse('delegates a resource other than energy');
      if (c.type === 'DelegateResourceContract' && (c.lock || c.lockPeriod !== 0n)) refuse('a locked delegation');
      break;
    }
    case 'AccountCreateContract': {
      const created = address(c.account, tx.id, 'new account');
      if (!deposits.has(created) && !(plan.kind === 'refund' && created === plan.to)) refuse(`creates the account ${created}, which is neither a deposit of the plan nor a refund's buyer`);
      break;
    }
  }

  const prices = { transactionFee: BigInt(payload.prices.transactionFee), createAccountFee: BigInt(payload.prices.createAccountFee), createNewAccountFee: BigInt(payload.prices.createNewAccountFee) };
  const fee = tronFee({ raw, bandwidth, source: payload.bandwidthFrom, createsAccount, prices }).total;
  if (BigInt(payload.bandwidth) !== bandwidth) refuse(`its payload says ${payload.bandwidth} bandwidth points, its bytes are charged ${bandwidth}`);
  if (BigInt(payload.fee) !== fee) refuse(`its payload says it burns up to ${payload.fee} sun, its bytes up to ${fee}`);
  return { id: tx.id, spends: [owner], pays, fee, feePaidBy: owner, chainId: null };
}

/** The first field in which two transactions differ, for the refusal. */
function firstDifference(signed: TronRaw, planned: TronRaw): string {
  if (signed.contract.type !== planned.contract.type) return `it is a ${signed.contract.type}, the plan's is a ${planned.contract.type}`;
  const a = signed.contract as unknown as Record<string, unknown>;
  const b = planned.contract as unknown as Record<string, unknown>;
  for (const key of Object.keys(b)) if (a[key] !== b[key]) return `its ${key} is ${String(a[key])}, the plan's ${String(b[key])}`;
  for (const key of ['refBlockBytes', 'refBlockHash', 'expiration', 'timestamp', 'feeLimit'] as const) {
    if (signed[key] !== planned[key]) return `its ${key} is ${signed[key]}, the plan's ${planned[key]}`;
  }
  return 'its raw_data is not the plan\'s';
}

export const tronSweepVerifier: FamilySweepVerifier = {
  decodeUnsigned(plan, tx) {
    const { payload, raw } = payloadOf(plan, tx);
    return read(plan, tx, payload, raw, bandwidthOf(raw));
  },

  decodeSigned(plan, tx, rawHex) {
    const planned = payloadOf(plan, tx);
    if (!/^([0-9a-fA-F]{2})+$/.test(rawHex)) throw new UsageError(`${tx.id}: the signed transaction is not hex`);
    const signedBytes = Uint8Array.from(Buffer.from(rawHex, 'hex'));
    let rawBytes: Uint8Array;
    let signatures: Uint8Array[];
    let raw: TronRaw;
    try {
      ({ raw: rawBytes, signatures } = splitSigned(signedBytes));
      raw = decodeRaw(rawBytes);
    } catch (err) {
      if (err instanceof TronProtoError) throw new UsageError(`${tx.id}: not a signed Tron sweep transaction: ${err.message}`);
      throw err;
    }
    if (Buffer.compare(Buffer.from(rawBytes), Buffer.from(planned.bytes)) !== 0) throw new UsageError(`${tx.id}: the signed transaction is not the plan's: ${firstDifference(raw, planned.raw)}`);
    const txid = createHash('sha256').update(rawBytes).digest('hex');
    const signature = signatures[0];
    if (signatures.length !== 1 || signature?.length !== 65) throw new UsageError(`${tx.id}: carries ${signatures.length} signature(s) of ${signatures.map((s) => s.length).join(', ') || 0} bytes; a sweep transaction has one of 65`);
    // java-tron's ECKey reads v as 27 or 28 (0 and 1 taken as 27 and 28).
    const v = signature[64]! < 27 ? signature[64]! + 27 : signature[64]!;
    let signer: string;
    try {
      if (v !== 27 && v !== 28) throw new Error('bad v');
      const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;
      signer = hexToTron(computeAddress(SigningKey.recoverPublicKey(`0x${txid}`, { r: hex(signature.subarray(0, 32)), s: hex(signature.subarray(32, 64)), v })));
    } catch {
      throw new UsageError(`${tx.id}: its signature does not verify`);
    }
    const owner = address(raw.contract.owner, tx.id, 'owner');
    if (signer !== owner) throw new UsageError(`${tx.id}: signed by ${signer}, not by its owner ${owner}`);
    if (!tx.signers.includes(owner)) throw new UsageError(`${tx.id}: its owner ${owner} is not among the plan's signers of it`);
    return { ...read(plan, tx, planned.payload, raw, bandwidthOfSigned(signedBytes.length)), txid } satisfies DecodedSignedTx;
  },
};
