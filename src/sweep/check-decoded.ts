import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import { checkPlanNetwork, expectedChainIds, FEE_SHARE_PERCENT, feeBounds } from '../chains/sweep-networks.ts';
import { InvalidAddressError, UsageError } from '../domain/errors.ts';
import { formatUnits } from '../domain/money.ts';
import { validateAddress } from '../families/families.ts';
import type { DecodedPay, DecodedSignedTx, DecodedSweepTx, FamilySweepVerifier, SignedSweep, SweepPlan } from '../families/sweep.ts';
import { planTotals } from './summary.ts';

// The one comparison of what a plan's transactions do (read from their bytes by the family's
// sweep-verify.ts) with what the plan says it does: `sweep sign` runs it before it signs, and
// `sweep broadcast` again on the signed bytes before it records or sends anything. Every check
// names what differs in one line (docs/sweeps.md#what-the-signer-checks).

export interface FeeLimit {
  /** `--max-fee`: the most the whole plan may pay in fees (native atomic); replaces the default bounds. */
  maxFee: bigint | null;
}

/** What a plan's transactions do, from their bytes: for the signer's summary. */
export interface PlanReading {
  txs: DecodedSweepTx[];
  /** Per coin (symbol and token), atomic: what reaches the plan's destination. */
  moves: Map<string, { symbol: string; token: string | null; decimals: number; amount: bigint }>;
  /** Every fee together, native atomic. */
  fee: bigint;
  /** The native coin moved to the destination, atomic. */
  nativeMoved: bigint;
}

const coinKey = (p: Pick<DecodedPay, 'symbol' | 'token'>) => `${p.symbol}|${p.token ?? ''}`;

function canonical(plan: SweepPlan, address: string): string {
  try {
    return validateAddress(plan.family, address, plan.testnet, { network: plan.network });
  } catch (err) {
    if (err instanceof InvalidAddressError) throw new UsageError(`the transactions name ${address}, which is not a ${plan.chain} ${plan.network} address: ${err.message}`);
    throw err;
  }
}

/** Checks decoded transactions against their plan; returns what they do. Throws UsageError naming the first difference. */
export function checkDecoded(plan: SweepPlan, decoded: DecodedSweepTx[], limit: FeeLimit | null): PlanReading {
  checkPlanNetwork(plan);
  const native = CHAIN_DEFAULTS[plan.chain].native;
  const fmt = (amount: bigint, decimals: number, symbol: string) => `${formatUnits(amount, decimals)} ${symbol}`;
  const to = canonical(plan, plan.to);
  const deposits = new Set(plan.deposits.map((d) => canonical(plan, d.address)));
  const own = new Set([...deposits, ...(plan.feePayer === null ? [] : [canonical(plan, plan.feePayer)])]);
  const chainIds = expectedChainIds(plan.chain, plan.network, plan.testnet);

  if (decoded.map((d) => d.id).join(',') !== plan.transactions.map((t) => t.id).join(',')) throw new UsageError('the transactions read are not the plan\'s transactions');
  const moves: PlanReading['moves'] = new Map();
  let fee = 0n;
  for (const tx of decoded) {
    const planned = plan.transactions.find((t) => t.id === tx.id)!;
    if (chainIds !== null) {
      if (tx.chainId === null || !chainIds.includes(tx.chainId)) {
        throw new UsageError(`${tx.id}: carries chain id ${tx.chainId ?? 'none'}, but ${plan.chain} ${plan.network} is ${chainIds.join(' or ')}`);
      }
    } else if (tx.chainId !== null) {
      throw new UsageError(`${tx.id}: carries chain id ${tx.chainId}, but ${plan.chain} transactions carry none`);
    }
    const signers = new Set(planned.signers.map((s) => canonical(plan, s)));
    for (const spender of tx.spends) {
      const who = canonical(plan, spender);
      if (!own.has(who)) throw new UsageError(`${tx.id}: spends from ${who}, which is neither a deposit of the plan nor its fee payer`);
      if (!signers.has(who)) throw new UsageError(`${tx.id}: spends from ${who}, which the plan does not list among its signers`);
    }
    if (!own.has(canonical(plan, tx.feePaidBy))) throw new UsageError(`${tx.id}: its fee is paid by ${tx.feePaidBy}, which is neither a deposit of the plan nor its fee payer`);
    if (tx.fee < 0n) throw new UsageError(`${tx.id}: pays out more than it spends`);
    fee += tx.fee;
    for (const pay of tx.pays) {
      const dest = canonical(plan, pay.to);
      if (pay.amount < 0n) throw new UsageError(`${tx.id}: a negative amount`);
      if (dest === to) {
        const entry = moves.get(coinKey(pay)) ?? { symbol: pay.symbol, token: pay.token, decimals: pay.decimals, amount: 0n };
        entry.amount += pay.amount;
        moves.set(coinKey(pay), entry);
      } else if (!own.has(dest)) {
        throw new UsageError(`${tx.id}: pays ${fmt(pay.amount, pay.decimals, pay.symbol)} to ${dest}, which is neither the plan's destination ${to} nor one of its own addresses`);
      }
    }
  }

  // The plan's summary (what `sweep plan` printed, and the text of the file) must say exactly this.
  const stated = planTotals(plan);
  const statedMoves = new Map<string, bigint>();
  for (const d of plan.deposits) for (const m of d.moves) statedMoves.set(coinKey(m), (statedMoves.get(coinKey(m)) ?? 0n) + BigInt(m.amount));
  for (const key of new Set([...statedMoves.keys(), ...moves.keys()])) {
    const said = statedMoves.get(key) ?? 0n;
    const does = moves.get(key)?.amount ?? 0n;
    if (said !== does) {
      const [symbol] = key.split('|') as [string];
      const decimals = moves.get(key)?.decimals ?? plan.deposits.flatMap((d) => d.moves).find((m) => coinKey(m) === key)?.decimals ?? 0;
      throw new UsageError(`the plan's summary moves ${fmt(said, decimals, symbol)} to ${to}, but its transactions move ${fmt(does, decimals, symbol)}: refused, nothing signed`);
    }
  }
  if (stated.fee !== fee) {
    throw new UsageError(`the plan's summary says fees of ${fmt(stated.fee, native.decimals, native.symbol)}, but its transactions can pay ${fmt(fee, native.decimals, native.symbol)}: refused, nothing signed`);
  }
  if (plan.refund) {
    const key = coinKey(plan.refund);
    if ([...moves.keys()].some((k) => k !== key)) throw new UsageError(`a refund of ${plan.refund.symbol} moves another coin to ${to}`);
  }

  const nativeKey = coinKey({ symbol: native.symbol, token: null });
  const nativeMoved = moves.get(nativeKey)?.amount ?? 0n;
  if (limit !== null) checkFeeBounds(plan, fee, nativeMoved, [...moves.keys()].some((k) => k !== nativeKey), limit);
  return { txs: decoded, moves, fee, nativeMoved };
}

function checkFeeBounds(plan: SweepPlan, fee: bigint, nativeMoved: bigint, tokensMove: boolean, limit: FeeLimit): void {
  const native = CHAIN_DEFAULTS[plan.chain].native;
  const fmt = (v: bigint) => `${formatUnits(v, native.decimals)} ${native.symbol}`;
  if (limit.maxFee !== null) {
    if (fee > limit.maxFee) throw new UsageError(`the transactions can pay ${fmt(fee)} in fees, more than --max-fee ${fmt(limit.maxFee)}: refused, nothing signed`);
    return;
  }
  const count = BigInt(Math.max(1, plan.deposits.length));
  const { floor, ceiling } = feeBounds(plan.chain);
  const hint = `; if that is right, sign again with --max-fee ${formatUnits(fee, native.decimals)}`;
  if (fee > ceiling * count) {
    throw new UsageError(`the transactions can pay ${fmt(fee)} in fees, more than ${fmt(ceiling)} per deposit moved (${plan.deposits.length}): refused, nothing signed${hint}`);
  }
  if (!tokensMove && fee > floor * count && fee * 100n > nativeMoved * BigInt(FEE_SHARE_PERCENT)) {
    throw new UsageError(`the transactions can pay ${fmt(fee)} in fees, more than ${FEE_SHARE_PERCENT} % of the ${fmt(nativeMoved)} they move: refused, nothing signed${hint}`);
  }
}

/** The fee as a share of what moves, for the summary ("0.13 %"); null when only tokens move. */
export function feeShare(fee: bigint, nativeMoved: bigint): string | null {
  if (nativeMoved === 0n) return null;
  const bp = (fee * 10_000n) / nativeMoved;
  return `${bp / 100n}.${(bp % 100n).toString().padStart(2, '0')} %`;
}

/**
 * Reads every signed transaction with the family's verifier: it must hash to the txid the file names,
 * carry valid signatures of the plan's keys, and do exactly what the plan's unsigned transaction does;
 * and together they must still do what the plan says. Returns each transaction as read; throws naming the first difference.
 */
export function verifySigned(plan: SweepPlan, signed: SignedSweep, verifier: FamilySweepVerifier, file: string): Map<string, DecodedSignedTx> {
  const txids = new Map<string, DecodedSignedTx>();
  const decoded: DecodedSweepTx[] = [];
  for (const tx of plan.transactions) {
    const s = signed.transactions.find((x) => x.id === tx.id)!;
    let read: DecodedSignedTx;
    try {
      read = verifier.decodeSigned(plan, tx, s.raw);
    } catch (err) {
      // A family's decoder throws its library's error on bytes that are no transaction: a refusal, not a fault.
      if (err instanceof UsageError) throw err;
      const why = (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 200);
      throw new UsageError(`refused, nothing sent: ${file}: ${tx.id}'s raw transaction cannot be read (${why})`);
    }
    if (read.txid !== s.txid) throw new UsageError(`refused, nothing sent: ${file}: ${tx.id}'s raw transaction hashes to ${read.txid}, not the txid ${s.txid} the file names`);
    const meant = verifier.decodeUnsigned(plan, tx);
    const differs = differences(meant, read);
    if (differs !== null) throw new UsageError(`refused, nothing sent: ${file}: ${tx.id} is not the plan's transaction: ${differs}`);
    txids.set(tx.id, read);
    decoded.push(read);
  }
  checkDecoded(plan, decoded, null);
  return txids;
}

/** What differs between what the plan's transaction does and what the signed one does, in words; null when nothing. */
function differences(meant: DecodedSweepTx, read: DecodedSweepTx): string | null {
  const pays = (d: DecodedSweepTx) => d.pays.map((p) => `${p.amount} ${p.symbol}${p.token ? ` (${p.token})` : ''} to ${p.to}`).sort().join(', ') || 'nothing';
  if (pays(meant) !== pays(read)) return `it pays ${pays(read)}; the plan's pays ${pays(meant)}`;
  if (meant.fee !== read.fee) return `it may pay ${read.fee} in fees (atomic); the plan's ${meant.fee}`;
  if (meant.feePaidBy !== read.feePaidBy) return `its fee is paid by ${read.feePaidBy}; the plan's by ${meant.feePaidBy}`;
  if ([...meant.spends].sort().join(',') !== [...read.spends].sort().join(',')) return `it spends from ${read.spends.join(', ')}; the plan's from ${meant.spends.join(', ')}`;
  if (meant.chainId !== read.chainId) return `it is for chain id ${read.chainId}; the plan's for ${meant.chainId}`;
  return null;
}

