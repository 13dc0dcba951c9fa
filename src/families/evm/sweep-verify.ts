import { getAddress, keccak256, recoverAddress, Signature, Transaction, TypedDataEncoder, verifyAuthorization } from 'ethers';
import { CHAIN_DEFAULTS } from '../../chains/chain-defaults.ts';
import { UsageError } from '../../domain/errors.ts';
import type { DecodedPay, DecodedSignedTx, DecodedSweepTx, FamilySweepVerifier, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import {
  EvmSweepPayloadSchema,
  feeFields,
  plainCall,
  SWEEPER_ABI,
  SWEEPER_ADDRESS,
  SWEEPER_INIT_CODE_HASH,
  sweepTypedData,
  type EvmBatchPayload,
  type EvmSweepPayload,
} from './sweep-payload.ts';

// What an EVM plan's transactions do, read from their payloads and signed bytes alone, for
// src/sweep/check-decoded.ts (docs/sweeps/evm.md#what-the-verifier-reads). Pure and offline.
//
// Unsigned: the payload is structured data the signer turns into calls (sweep-sign.ts), every move
// to the plan's `to`; so a payload reads as: its sender spends, its fee is at most gas limit × max
// fee per gas (EIP-1559: the priority fee is within the max fee), and it pays what its `value` /
// `amount` / top-up says. A 7702 batch is the exception the bytes cannot settle: the Sweeper moves
// whole balances, so each order carries the balances the plan expects it to move (`native`,
// `amounts`) and those are what it reads. The chain's balance at execution may be higher (a late
// payment); that surplus can only go to the same destination, which each deposit's EIP-712 intent
// binds and decodeSigned checks recovers to the deposit.
//
// Signed: the raw must decode, carry a signature recovering to the payload's sender, and equal
// field for field the transaction the signer builds from the payload (type, chain id, nonce, gas,
// fees, to, value, data, no access list; for a batch every order's destination, tokens and deadline,
// its intent's signer, and each authorization's target, nonce, chain and signer). Then it does
// what the payload read says, and its hash is keccak256 of the raw.

/** secp256k1's order / 2: the Sweeper (like Ethereum itself) refuses a signature with a higher s. */
const HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

function payloadOf(tx: UnsignedSweepTx): EvmSweepPayload {
  const parsed = EvmSweepPayloadSchema.safeParse(tx.payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`${tx.id}: not an EVM sweep transaction (${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'bad shape'})`);
  }
  return parsed.data;
}

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

function native(plan: SweepPlan): Pick<DecodedPay, 'symbol' | 'token' | 'decimals'> {
  const coin = CHAIN_DEFAULTS[plan.chain].native;
  return { symbol: coin.symbol, token: null, decimals: coin.decimals };
}

/**
 * The token a deposit sends, by the contract address in the bytes: it must be one the plan lists
 * among that deposit's holdings; symbol and decimals from the registry where it names the
 * contract (a plan cannot relabel a known token), else from the holding (a configured token).
 */
function tokenOf(plan: SweepPlan, id: string, holder: string, token: string): Pick<DecodedPay, 'symbol' | 'token' | 'decimals'> {
  const address = getAddress(token);
  const held = plan.deposits.find((d) => same(d.address, holder))?.holdings.find((h) => h.token !== null && same(h.token, address));
  if (!held) throw new UsageError(`${id}: moves token ${address}, which the plan does not list among the holdings of ${getAddress(holder)}`);
  const registry = CHAIN_DEFAULTS[plan.chain][plan.testnet ? 'testnet' : 'mainnet'].tokens;
  const known = Object.entries(registry).find(([, t]) => same(t.address, address));
  return known ? { symbol: known[0], token: address, decimals: known[1].decimals } : { symbol: held.symbol, token: address, decimals: held.decimals };
}

function destination(plan: SweepPlan): string {
  try {
    return getAddress(plan.to);
  } catch {
    throw new UsageError(`the plan's destination ${plan.to} is not an EVM address`);
  }
}

function decode(plan: SweepPlan, tx: UnsignedSweepTx, p: EvmSweepPayload): DecodedSweepTx {
  if (plan.family !== 'evm' || CHAIN_DEFAULTS[plan.chain]?.family !== 'evm') throw new UsageError(`the plan is for ${plan.chain} (${plan.family}), not an EVM chain`);
  const fees = feeFields(p);
  // A node refuses such a transaction; refused here so the fee read below is the real bound.
  if (fees.maxPriorityFeePerGas > fees.maxFeePerGas) throw new UsageError(`${tx.id}: its priority fee per gas is above its max fee per gas`);
  const from = getAddress(p.from);
  const to = destination(plan);
  const head = { id: tx.id, fee: fees.gasLimit * fees.maxFeePerGas, feePaidBy: from, chainId: String(p.chainId) };
  switch (p.kind) {
    case 'native':
      return { ...head, spends: [from], pays: [{ to, ...native(plan), amount: BigInt(p.value) }] };
    case 'token':
      return { ...head, spends: [from], pays: [{ to, ...tokenOf(plan, tx.id, from, p.token), amount: BigInt(p.amount) }] };
    case 'top-up':
      return { ...head, spends: [from], pays: [{ to: getAddress(p.to), ...native(plan), amount: BigInt(p.value) }] };
    case 'deploy-sweeper':
      if (keccak256(p.initCode) !== SWEEPER_INIT_CODE_HASH) throw new UsageError(`${tx.id}: deploys other code than chaingate's Sweeper`);
      return { ...head, spends: [from], pays: [] };
    case '7702-batch': {
      if (getAddress(p.sweeper) !== SWEEPER_ADDRESS) throw new UsageError(`${tx.id}: delegates deposits to another contract than chaingate's Sweeper`);
      const deposits = p.orders.map((o) => getAddress(o.deposit));
      const twice = deposits.find((d, i) => deposits.indexOf(d) !== i);
      if (twice) throw new UsageError(`${tx.id}: sweeps ${twice} twice`);
      const pays: DecodedPay[] = [];
      for (const order of p.orders) {
        const deposit = getAddress(order.deposit);
        const tokens = order.tokens.map((t) => getAddress(t));
        if (new Set(tokens).size !== tokens.length) throw new UsageError(`${tx.id}: lists a token twice for ${deposit}`);
        if (BigInt(order.native) > 0n) pays.push({ to, ...native(plan), amount: BigInt(order.native) });
        tokens.forEach((token, i) => {
          pays.push({ to, ...tokenOf(plan, tx.id, deposit, token), amount: BigInt(order.amounts[i] as string) });
        });
      }
      return { ...head, spends: [from, ...deposits], pays };
    }
  }
}

function decodeUnsigned(plan: SweepPlan, tx: UnsignedSweepTx): DecodedSweepTx {
  return decode(plan, tx, payloadOf(tx));
}

const show = (v: unknown): string => (v === null || v === undefined ? 'none' : typeof v === 'string' ? v : String(v));

function decodeSigned(plan: SweepPlan, tx: UnsignedSweepTx, raw: string): DecodedSignedTx {
  const p = payloadOf(tx);
  const decoded = decode(plan, tx, p);
  if (typeof raw !== 'string' || !/^0x([0-9a-fA-F]{2})+$/.test(raw)) throw new UsageError(`${tx.id}: the signed raw is not 0x-prefixed hex bytes`);
  let signed: Transaction;
  try {
    signed = Transaction.from(raw);
  } catch (err) {
    throw new UsageError(`${tx.id}: the signed raw is not an EVM transaction (${(err as Error).message.split(' (')[0]})`);
  }
  if (!signed.signature) throw new UsageError(`${tx.id}: the signed raw carries no signature`);
  // Re-encoding must give the same bytes: the hash the chain reports is of exactly these.
  if (!same(signed.serialized, raw)) throw new UsageError(`${tx.id}: the signed raw is not in its canonical encoding`);
  let sender: string | null;
  try {
    sender = signed.from;
  } catch {
    sender = null;
  }
  const from = getAddress(p.from);
  if (sender === null || sender !== from) throw new UsageError(`${tx.id}: its signature does not verify against its sender ${from}${sender ? ` (it recovers ${sender})` : ''}`);

  const differ = (field: string, got: unknown, want: unknown) => {
    if (show(got) !== show(want)) throw new UsageError(`${tx.id}: the signed transaction's ${field} is ${show(got)}, the plan's ${show(want)}: not this plan's transaction`);
  };
  const fees = feeFields(p);
  differ('chain id', signed.chainId, fees.chainId);
  differ('nonce', signed.nonce, fees.nonce);
  differ('gas limit', signed.gasLimit, fees.gasLimit);
  differ('max fee per gas', signed.maxFeePerGas, fees.maxFeePerGas);
  differ('max priority fee per gas', signed.maxPriorityFeePerGas, fees.maxPriorityFeePerGas);
  differ('access list', signed.accessList?.length ?? 0, 0);
  if (p.kind === '7702-batch') {
    checkBatch(plan, tx.id, p, signed, differ);
  } else {
    const call = plainCall(p, destination(plan));
    differ('type', signed.type, 2);
    differ('recipient', signed.to, getAddress(call.to));
    differ('value', signed.value, call.value);
    differ('data', signed.data.toLowerCase(), call.data.toLowerCase());
  }
  return { ...decoded, txid: signed.hash as string };
}

type Differ = (field: string, got: unknown, want: unknown) => void;

/** The batch's call and authorizations, against its payload: each intent and authorization must be its deposit's. */
function checkBatch(plan: SweepPlan, id: string, p: EvmBatchPayload, signed: Transaction, differ: Differ): void {
  const to = destination(plan);
  const authorizing = p.orders.filter((o) => o.authNonce !== null);
  differ('type', signed.type, authorizing.length > 0 ? 4 : 2);
  differ('recipient', signed.to, SWEEPER_ADDRESS);
  differ('value', signed.value, 0n);
  let orders: { deposit: string; to: string; tokens: string[]; deadline: bigint; v: bigint; r: string; s: string }[];
  try {
    [orders] = SWEEPER_ABI.decodeFunctionData('sweepMany', signed.data) as unknown as [typeof orders];
  } catch {
    throw new UsageError(`${id}: the signed transaction does not call the Sweeper's sweepMany`);
  }
  differ('number of orders', orders.length, p.orders.length);
  const chainId = BigInt(p.chainId);
  p.orders.forEach((want, i) => {
    const got = orders[i] as (typeof orders)[number];
    const deposit = getAddress(want.deposit);
    const tokens = want.tokens.map((t) => getAddress(t));
    differ(`order ${i} deposit`, got.deposit, deposit);
    differ(`order ${i} destination`, got.to, to);
    differ(`order ${i} tokens`, got.tokens.join(','), tokens.join(','));
    differ(`order ${i} deadline`, got.deadline, BigInt(p.deadline));
    const typed = sweepTypedData(chainId, deposit, to, tokens, BigInt(p.deadline));
    let signer: string | null = null;
    try {
      if (BigInt(got.s) <= HALF_ORDER) signer = recoverAddress(TypedDataEncoder.hash(typed.domain, typed.types, typed.value), Signature.from({ v: Number(got.v), r: got.r, s: got.s }));
    } catch {
      signer = null;
    }
    if (signer !== deposit) throw new UsageError(`${id}: the sweep intent of order ${i} is not signed by its deposit ${deposit}`);
  });
  // Canonical calldata only: the same orders re-encoded give the same bytes.
  differ('data', signed.data.toLowerCase(), SWEEPER_ABI.encodeFunctionData('sweepMany', [orders.map((o) => [o.deposit, o.to, [...o.tokens], o.deadline, o.v, o.r, o.s])]).toLowerCase());

  const auths = signed.authorizationList ?? [];
  differ('number of authorizations', auths.length, authorizing.length);
  authorizing.forEach((want, i) => {
    const got = auths[i] as (typeof auths)[number];
    const deposit = getAddress(want.deposit);
    differ(`authorization ${i} target`, got.address, SWEEPER_ADDRESS);
    differ(`authorization ${i} nonce`, got.nonce, BigInt(want.authNonce as number));
    differ(`authorization ${i} chain id`, got.chainId, chainId);
    let signer: string | null = null;
    try {
      signer = verifyAuthorization({ address: got.address, nonce: got.nonce, chainId: got.chainId }, got.signature);
    } catch {
      signer = null;
    }
    if (signer !== deposit) throw new UsageError(`${id}: authorization ${i} is not signed by its deposit ${deposit}`);
  });
}

export const evmSweepVerifier: FamilySweepVerifier = { decodeUnsigned, decodeSigned };
