import { createHash } from 'node:crypto';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory, type BIP32Interface } from 'bip32';
import { computeAddress, SigningKey } from 'ethers';
import { UsageError } from '../../domain/errors.ts';
import type { FamilySweepSigner, SignedSweepTx, SweepCandidate, SweepKey, SweepPlan } from '../sweep.ts';
import { hex41ToTron, hexToTron } from './address.ts';
import { decodeRaw, encodeSigned, ENERGY, TronProtoError, txidOf, type TronRaw } from './sweep-proto.ts';
import { readTransferData, TronSweepPayloadSchema } from './sweep-payload.ts';

// The offline half of a Tron sweep: keys from the wallet seed (BIP44 m/44'/195'/N'/0/i, the account
// found by the pool's key fingerprint), then each transaction's protobuf raw_data decoded and
// checked before its sha256 is signed. Nothing in the payload but those bytes is trusted: a deposit
// may only pay the plan's destination, exactly the amounts the summary shows; the fee payer may
// only create, lend energy to, take it back from, or top up the plan's own deposits, and a top-up
// is capped by what the transfers after it may burn. A refund plan moves exactly its one coin from
// its one address, and its fee payer may also create the buyer's account. Pure: no network, no file.

const bip32 = BIP32Factory(ecc);
/** Accounts m/44'/195'/N' tried when matching a pool's key fingerprint. */
const ACCOUNT_SEARCH = 20;
/** Accounts searched for deposits from an address list (no fingerprint to match). */
const FILE_ACCOUNT_SEARCH = 5;
/** Sources whose keys are searched (no pool fingerprint): an address list, a merchant wallet. */
const SEARCHED: ReadonlySet<string> = new Set(['file', 'wallet']);
/** Change addresses …/1/i of the deposits' account tried for the fee payer. */
const FEE_PAYER_CHANGE_SEARCH = 20;
/** What a top-up may add per transfer after it, beyond its fee limit: the bandwidth burn of a ~350-byte transfer at 1,000 sun a byte is 0.35 TRX. */
const TOP_UP_BANDWIDTH_ALLOWANCE = 1_000_000n;

const fingerprintOf = (node: BIP32Interface) => createHash('sha256').update(node.publicKey).update(node.chainCode).digest('hex').slice(0, 16);
const addressOf = (node: BIP32Interface) => hexToTron(computeAddress(`0x${Buffer.from(node.publicKey).toString('hex')}`));
const keyOf = (node: BIP32Interface): SweepKey => ({ address: addressOf(node), privateKey: Uint8Array.from(node.privateKey!) });

const accountsBySeed = new WeakMap<Uint8Array, Map<number, BIP32Interface>>();
function account(seed: Uint8Array, n: number): BIP32Interface {
  let cache = accountsBySeed.get(seed);
  if (!cache) accountsBySeed.set(seed, (cache = new Map()));
  let node = cache.get(n);
  if (!node) cache.set(n, (node = bip32.fromSeed(seed).derivePath(`m/44'/195'/${n}'`)));
  return node;
}

function accountBySource(seed: Uint8Array, source: string): BIP32Interface {
  for (let n = 0; n < ACCOUNT_SEARCH; n++) if (fingerprintOf(account(seed, n)) === source) return account(seed, n);
  throw new UsageError(`no account m/44'/195'/N' (N < ${ACCOUNT_SEARCH}) of this seed has key fingerprint ${source}: the pool was seeded from another wallet`);
}

function deriveFeePayerKey(seed: Uint8Array, plan: SweepPlan, searchLimit: number): SweepKey {
  if (plan.feePayer === null) throw new UsageError('the plan has no fee payer');
  for (const source of new Set(plan.deposits.map((d) => d.source).filter((s) => !SEARCHED.has(s)))) {
    const change = accountBySource(seed, source).derive(1);
    for (let i = 0; i < FEE_PAYER_CHANGE_SEARCH; i++) if (addressOf(change.derive(i)) === plan.feePayer) return keyOf(change.derive(i));
  }
  // TronLink's accounts of a seed: m/44'/195'/0'/0/i, then m/44'/195'/i'/0/0.
  const first = account(seed, 0).derive(0);
  for (let i = 0; i < searchLimit; i++) if (addressOf(first.derive(i)) === plan.feePayer) return keyOf(first.derive(i));
  for (let n = 1; n < ACCOUNT_SEARCH; n++) if (addressOf(account(seed, n).derive(0).derive(0)) === plan.feePayer) return keyOf(account(seed, n).derive(0).derive(0));
  throw new UsageError(
    `the plan's fee payer is not an address of this seed (looked at the deposits' account …/1/i for i < ${FEE_PAYER_CHANGE_SEARCH}, m/44'/195'/0'/0/i for i < ${searchLimit} and m/44'/195'/N'/0/0 for N < ${ACCOUNT_SEARCH})`,
  );
}

function deriveKey(seed: Uint8Array, candidate: SweepCandidate, plan: SweepPlan, searchLimit: number): SweepKey {
  // The caller asks for the fee payer's key as a deposit of unknown index.
  if (candidate.derivationIndex === null && candidate.address === plan.feePayer) return deriveFeePayerKey(seed, plan, searchLimit);
  if (candidate.source === 'wallet') return walletKey(seed, candidate.address, searchLimit);
  if (candidate.derivationIndex !== null && candidate.source !== 'file') {
    const node = accountBySource(seed, candidate.source).derive(0).derive(candidate.derivationIndex);
    if (addressOf(node) !== candidate.address) {
      throw new UsageError(`deposit #${candidate.derivationIndex} (key ${candidate.source}): 0/${candidate.derivationIndex} derives another address than the plan names: the plan does not belong to this seed`);
    }
    return keyOf(node);
  }
  for (let n = 0; n < FILE_ACCOUNT_SEARCH; n++) {
    const receive = account(seed, n).derive(0);
    for (let i = 0; i < searchLimit; i++) if (addressOf(receive.derive(i)) === candidate.address) return keyOf(receive.derive(i));
  }
  throw new UsageError(`a deposit of the plan is none of the first ${searchLimit} receive addresses of accounts m/44'/195'/0' to ${FILE_ACCOUNT_SEARCH - 1}' of this seed`);
}

/** A merchant wallet address (a refund after the deposit was swept): the seed's first account, receive and change, then TronLink's accounts. */
function walletKey(seed: Uint8Array, address: string, searchLimit: number): SweepKey {
  for (const branch of [0, 1]) {
    const parent = account(seed, 0).derive(branch);
    for (let i = 0; i < searchLimit; i++) if (addressOf(parent.derive(i)) === address) return keyOf(parent.derive(i));
  }
  for (let n = 1; n < ACCOUNT_SEARCH; n++) if (addressOf(account(seed, n).derive(0).derive(0)) === address) return keyOf(account(seed, n).derive(0).derive(0));
  throw new UsageError(
    `the wallet address ${address} is not an address of this seed (looked at m/44'/195'/0'/0/i and m/44'/195'/0'/1/i for i < ${searchLimit}, and m/44'/195'/N'/0/0 for N < ${ACCOUNT_SEARCH})`,
  );
}

/** From an account-level xprv (m/44'/195'/N'): the deposits at 0/i, the fee payer at 1/i or 0/i. */
function deriveKeyFromAccount(accountKey: string, candidate: SweepCandidate, plan: SweepPlan, searchLimit: number): SweepKey {
  let node: BIP32Interface;
  try {
    node = bip32.fromBase58(accountKey.trim());
  } catch {
    throw new UsageError('not an extended private key (xprv) of a BIP32 account');
  }
  if (node.isNeutered()) throw new UsageError('an account public key cannot sign: give the xprv of m/44\'/195\'/N\', or the seed');
  if (node.depth !== 3) throw new UsageError(`the extended key is at depth ${node.depth}; give the account's (m/44'/195'/N', depth 3)`);
  const isFeePayer = candidate.derivationIndex === null && candidate.address === plan.feePayer;
  if (!isFeePayer && !SEARCHED.has(candidate.source) && fingerprintOf(node) !== candidate.source) {
    throw new UsageError(`this account key's fingerprint is not the pool's (${candidate.source}): the pool was seeded from another account`);
  }
  if (candidate.derivationIndex !== null && !isFeePayer) {
    const child = node.derive(0).derive(candidate.derivationIndex);
    if (addressOf(child) !== candidate.address) throw new UsageError(`deposit #${candidate.derivationIndex} derives another address than the plan names`);
    return keyOf(child);
  }
  const wallet = candidate.source === 'wallet';
  for (const branch of isFeePayer ? [1, 0] : wallet ? [0, 1] : [0]) {
    for (let i = 0; i < searchLimit; i++) if (addressOf(node.derive(branch).derive(i)) === candidate.address) return keyOf(node.derive(branch).derive(i));
  }
  const what = isFeePayer ? "the plan's fee payer" : wallet ? `the wallet address ${candidate.address}` : 'a deposit of the plan';
  throw new UsageError(`${what} is none of the first ${searchLimit} ${wallet ? 'receive (0/i) or change (1/i) addresses' : 'addresses'} of this account key`);
}

/** A 65-byte Tron signature over sha256(raw_data): r, s and v = 27 + recovery id, as java-tron's ECKey reads it. */
export function signDigest(txid: string, privateKey: Uint8Array): Uint8Array {
  const sig = new SigningKey(`0x${Buffer.from(privateKey).toString('hex')}`).sign(`0x${txid}`);
  return Uint8Array.from(Buffer.concat([Buffer.from(sig.r.slice(2), 'hex'), Buffer.from(sig.s.slice(2), 'hex'), Buffer.from([sig.v])]));
}

function sign(plan: SweepPlan, keys: ReadonlyMap<string, SweepKey>, now: number = Date.now()): SignedSweepTx[] {
  if (plan.family !== 'tron') throw new UsageError(`the plan is for the ${plan.family} family, not Tron`);
  const deposits = new Map(plan.deposits.map((d) => [d.address, d]));
  const decoded = plan.transactions.map((tx) => {
    const parsed = TronSweepPayloadSchema.safeParse(tx.payload);
    if (!parsed.success) throw new UsageError(`${tx.id}: not a Tron sweep transaction (${parsed.error.issues[0]?.path.join('.') || 'bad shape'})`);
    let raw: TronRaw;
    const bytes = Uint8Array.from(Buffer.from(parsed.data.rawData, 'hex'));
    try {
      raw = decodeRaw(bytes);
    } catch (err) {
      if (err instanceof TronProtoError) throw new UsageError(`${tx.id}: refused: its raw_data ${err.message}`);
      throw err;
    }
    if (raw.expiration <= BigInt(now)) throw new UsageError(`${tx.id}: the plan expired at ${new Date(Number(raw.expiration)).toISOString()} (a Tron transaction is good for 24 h after its reference block): plan again`);
    return { tx, raw, bytes, owner: hex41ToTron(raw.contract.owner) };
  });

  // What each deposit's transactions move, per token (null: TRX), checked against the summary at the end.
  const moved = new Map<string, Map<string | null, bigint>>();
  const add = (deposit: string, token: string | null, amount: bigint) => {
    const m = moved.get(deposit) ?? new Map<string | null, bigint>();
    m.set(token, (m.get(token) ?? 0n) + amount);
    moved.set(deposit, m);
  };
  const isFeePayer = (a: string) => plan.feePayer !== null && a === plan.feePayer;
  const requireDeposit = (a: string, id: string, role: string) => {
    if (!deposits.has(a)) throw new UsageError(`${id}: refused: ${role} ${a} is not one of the plan's deposits`);
  };

  for (const { tx, raw, owner } of decoded) {
    const c = raw.contract;
    if (!tx.signers.includes(owner)) throw new UsageError(`${tx.id}: refused: its owner ${owner} is not among its signers`);
    if (c.type !== 'TriggerSmartContract' && raw.feeLimit !== 0n) throw new UsageError(`${tx.id}: refused: a fee limit on a ${c.type}`);
    switch (c.type) {
      case 'TransferContract': {
        const to = hex41ToTron(c.to);
        if (deposits.has(owner)) {
          if (to !== plan.to) throw new UsageError(`${tx.id}: refused: it pays ${to}, not the plan's destination ${plan.to}`);
          add(owner, null, c.amount);
        } else if (isFeePayer(owner)) {
          requireDeposit(to, tx.id, 'the top-up goes to');
          // A top-up pays at most what the transfers after it may burn.
          const cap = decoded
            .filter((o) => o.tx.after.includes(tx.id) && o.owner === to && o.raw.contract.type === 'TriggerSmartContract')
            .reduce((s, o) => s + o.raw.feeLimit + TOP_UP_BANDWIDTH_ALLOWANCE, 0n);
          if (c.amount > cap) throw new UsageError(`${tx.id}: refused: a top-up of ${c.amount} sun, more than the ${cap} the transfers after it may burn`);
        } else throw new UsageError(`${tx.id}: refused: sent from ${owner}, neither a deposit of the plan nor its fee payer`);
        break;
      }
      case 'TriggerSmartContract': {
        requireDeposit(owner, tx.id, 'the caller');
        const token = hex41ToTron(c.contract);
        const deposit = deposits.get(owner)!;
        if (!deposit.moves.some((m) => m.token === token)) throw new UsageError(`${tx.id}: refused: calls ${token}, which the summary does not move for this deposit`);
        const call = readTransferData(c.data);
        if (!call || c.callValue !== 0n) throw new UsageError(`${tx.id}: refused: not a plain TRC-20 transfer(address,uint256)`);
        if (call.to !== plan.to) throw new UsageError(`${tx.id}: refused: it pays ${call.to}, not the plan's destination ${plan.to}`);
        add(owner, token, call.amount);
        break;
      }
      case 'DelegateResourceContract':
      case 'UnDelegateResourceContract':
        if (!isFeePayer(owner)) throw new UsageError(`${tx.id}: refused: ${c.type} from an account that is not the plan's fee payer`);
        requireDeposit(hex41ToTron(c.receiver), tx.id, 'the receiver');
        if (c.resource !== ENERGY) throw new UsageError(`${tx.id}: refused: delegates a resource other than energy`);
        if (c.type === 'DelegateResourceContract' && (c.lock || c.lockPeriod !== 0n)) throw new UsageError(`${tx.id}: refused: a locked delegation`);
        break;
      case 'AccountCreateContract':
        if (!isFeePayer(owner)) throw new UsageError(`${tx.id}: refused: creates an account from an account that is not the plan's fee payer`);
        // A TRX refund's fee payer may create the buyer's account, so the refund does not burn for it.
        if (!(plan.kind === 'refund' && hex41ToTron(c.account) === plan.to)) requireDeposit(hex41ToTron(c.account), tx.id, 'the new account');
        break;
    }
  }
  for (const d of plan.deposits) {
    const m = moved.get(d.address) ?? new Map<string | null, bigint>();
    for (const move of d.moves) {
      const got = m.get(move.token) ?? 0n;
      if (got !== BigInt(move.amount)) throw new UsageError(`deposit ${d.address}: its transactions move ${got} ${move.symbol} (atomic), the summary shows ${move.amount}: refused`);
      m.delete(move.token);
    }
    if ([...m.values()].some((v) => v > 0n)) throw new UsageError(`deposit ${d.address}: its transactions move something the summary does not show: refused`);
  }
  if (plan.kind === 'refund') checkRefund(plan);

  return decoded.map(({ tx, bytes, owner }) => {
    const key = keys.get(owner);
    if (!key) throw new UsageError(`${tx.id}: no key for its owner ${owner}`);
    const txid = txidOf(bytes);
    const signature = signDigest(txid, key.privateKey);
    return { id: tx.id, raw: Buffer.from(encodeSigned(bytes, [signature])).toString('hex'), txid };
  });
}

/**
 * A refund moves one coin from one address: a token exactly the refund, TRX the refund or the
 * refund less the fee the address pays (when what stays does not cover it). The summary's moves
 * were checked against the transactions above.
 */
function checkRefund(plan: SweepPlan): void {
  const refund = plan.refund;
  const deposit = plan.deposits[0];
  if (!refund || !/^\d+$/.test(refund.amount) || plan.deposits.length !== 1 || !deposit) throw new UsageError('a refund plan refunds one amount from one address: refused');
  const move = deposit.moves[0];
  if (deposit.moves.length !== 1 || !move || move.token !== refund.token) throw new UsageError(`the refund plan moves something other than the refund's ${refund.symbol}: refused`);
  const amount = BigInt(refund.amount);
  const paid = BigInt(move.amount);
  if (refund.token === null ? paid > amount || amount - paid > BigInt(deposit.fee) : paid !== amount) {
    throw new UsageError(`the refund plan pays the buyer ${paid} ${refund.symbol} (atomic), but the refund is ${amount}${refund.token === null ? ' (less its fee at most)' : ''}: refused`);
  }
}

export const tronSweepSigner: FamilySweepSigner & { signAt: typeof sign } = {
  deriveKey,
  deriveFeePayerKey,
  deriveKeyFromAccount,
  sign: (plan, keys) => sign(plan, keys),
  /** sign() at a given clock, for tests of the expiry check. */
  signAt: sign,
};
