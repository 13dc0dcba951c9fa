import { parseUnits } from '../domain/money.ts';
import type { Executor, Reader } from './executor.ts';
import type { Database } from './orm.ts';
import { boolOf, dateOf, nullableDate, poolReader } from './raw-sql.ts';

// Every statement refunds need (docs/refunds.md). A refund row is written once by `refund plan`;
// its transaction, fee and state are those of its plan's sweep transactions (sweep_tx), read here
// by plan id and never copied, so the sweep lifecycle stays their one writer. The reads take a
// Reader: a write's executor (finalizeSweepTx decides a refund on its own rows) or poolReader(db).

/** PLANNED: not yet broadcast, reserving its amount; CANCELLED / EXPIRED: never broadcast, reserving nothing. */
export type RefundState = 'PLANNED' | 'PENDING' | 'CONFIRMED' | 'FAILED' | 'CANCELLED' | 'EXPIRED';

export interface RefundRecord {
  id: string;
  paymentId: string;
  planId: string;
  chain: string;
  network: string;
  isTestnet: boolean;
  symbol: string;
  tokenAddress: string | null;
  decimals: number;
  /** Atomic units, decimal string. */
  amount: string;
  toAddress: string;
  fromAddress: string;
  fromKind: 'deposit' | 'wallet';
  /**
   * The planned network fee paid out of what the payment received on top of `amount` (atomic;
   * "0" when a fee payer, a wallet address or the refund itself pays it). Once the refund is final,
   * the fee the chain charged counts instead.
   */
  feeFromPayment: string;
  createdAt: Date;
}

export interface RefundRow extends RefundRecord {
  state: RefundState;
  /** The transaction that pays the buyer (the plan's last); null before broadcast. */
  txid: string | null;
  /** What the plan's transactions paid in fees, native atomic units. */
  fee: string;
  finalAt: Date | null;
  /** Atomic units (decimal string) of the payment's coin this refund uses up: `amount`, plus the fee when the payment's own funds pay it. */
  uses: string;
}

/** Writes a refund (in the write that records its plan). */
export async function recordRefund(x: Executor, r: RefundRecord): Promise<void> {
  await x.run(
    `insert into refund (id, payment_id, plan_id, chain, network, is_testnet, symbol, token_address, decimals, amount, to_address, from_address, from_kind, fee_from_payment, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [r.id, r.paymentId, r.planId, r.chain, r.network, r.isTestnet, r.symbol, r.tokenAddress, r.decimals, r.amount, r.toAddress, r.fromAddress, r.fromKind, r.feeFromPayment, r.createdAt],
  );
}

interface RawRefund {
  id: string;
  payment_id: string;
  plan_id: string;
  chain: string;
  network: string;
  is_testnet: boolean | number;
  symbol: string;
  token_address: string | null;
  decimals: number | string;
  amount: string;
  to_address: string;
  from_address: string;
  from_kind: string;
  fee_from_payment: string;
  created_at: unknown;
  plan_expires_at: unknown;
  plan_cancelled_at: unknown;
}

interface RawTx {
  plan_id: string;
  tx_key: string;
  txid: string;
  status: string;
  fee: string;
  final_at: unknown;
}

/** A refund's state from its plan's transactions: none yet (planned, cancelled or expired), all final, any failed, else on its way. */
export function refundState(txs: Pick<RawTx, 'status'>[], plan: { expiresAt: Date | null; cancelledAt: Date | null } = { expiresAt: null, cancelledAt: null }, now = new Date()): RefundState {
  if (txs.length === 0) {
    if (plan.cancelledAt !== null) return 'CANCELLED';
    if (plan.expiresAt !== null && plan.expiresAt.getTime() <= now.getTime()) return 'EXPIRED';
    return 'PLANNED';
  }
  if (txs.every((t) => t.status === 'FINAL')) return 'CONFIRMED';
  if (txs.some((t) => t.status === 'FAILED')) return 'FAILED';
  return 'PENDING';
}

const REFUND_SELECT = 'select f.*, p.expires_at as plan_expires_at, p.cancelled_at as plan_cancelled_at from refund f join sweep_plan p on p.id = f.plan_id';

const txOrder = (a: RawTx, b: RawTx) => Number(a.tx_key.slice(3)) - Number(b.tx_key.slice(3));

async function withTxs(r: Reader, refunds: RawRefund[], now = new Date()): Promise<RefundRow[]> {
  if (refunds.length === 0) return [];
  const plans = refunds.map((r) => r.plan_id);
  const txs = await r.all<RawTx>(`select plan_id, tx_key, txid, status, fee, final_at from sweep_tx where plan_id in (${plans.map(() => '?').join(', ')})`, plans);
  return refunds.map((r) => {
    const mine = txs.filter((t) => t.plan_id === r.plan_id).sort(txOrder);
    const state = refundState(mine, { expiresAt: nullableDate(r.plan_expires_at), cancelledAt: nullableDate(r.plan_cancelled_at) }, now);
    const last = mine.at(-1);
    const fee = mine.reduce((s, t) => s + BigInt(t.fee), 0n);
    // Before broadcast the plan's fee; once final, what the chain charged (sweep_tx.fee is set from its answer).
    const paymentFee = BigInt(r.fee_from_payment) === 0n ? 0n : mine.length > 0 ? fee : BigInt(r.fee_from_payment);
    return {
      id: r.id,
      paymentId: r.payment_id,
      planId: r.plan_id,
      chain: r.chain,
      network: r.network,
      isTestnet: boolOf(r.is_testnet),
      symbol: r.symbol,
      tokenAddress: r.token_address,
      decimals: Number(r.decimals),
      amount: r.amount,
      toAddress: r.to_address,
      fromAddress: r.from_address,
      fromKind: r.from_kind === 'wallet' ? 'wallet' : 'deposit',
      feeFromPayment: r.fee_from_payment,
      createdAt: dateOf(r.created_at),
      state,
      txid: last?.txid ?? null,
      fee: fee.toString(),
      finalAt: state === 'CONFIRMED' ? nullableDate(last?.final_at) : null,
      uses: (BigInt(r.amount) + paymentFee).toString(),
    };
  });
}

/** The refunds of a payment, oldest first, each with its state. */
export async function refundsOfPayment(r: Reader, paymentId: string, now = new Date()): Promise<RefundRow[]> {
  return withTxs(r, await r.all<RawRefund>(`${REFUND_SELECT} where f.payment_id = ? order by f.created_at, f.id`, [paymentId]), now);
}

/** A refund by its id. */
export async function refundById(r: Reader, id: string): Promise<RefundRow | null> {
  return (await withTxs(r, await r.all<RawRefund>(`${REFUND_SELECT} where f.id = ?`, [id])))[0] ?? null;
}

/** The refund of a plan, or null for a sweep plan. */
export async function refundOfPlan(r: Reader, planId: string): Promise<RefundRow | null> {
  return (await withTxs(r, await r.all<RawRefund>(`${REFUND_SELECT} where f.plan_id = ?`, [planId])))[0] ?? null;
}

/** Refunds made between two times (created), for the report. */
export async function refundsBetween(db: Database, from: Date, to: Date): Promise<RefundRow[]> {
  const r = poolReader(db);
  return withTxs(r, await r.all<RawRefund>(`${REFUND_SELECT} where f.created_at >= ? and f.created_at < ? order by f.created_at, f.id`, [from, to]));
}

/**
 * Atomic units of the payment's coin its address received: what was credited, plus what arrived
 * after the payment ended (LATE, EXTRA) and was recorded against it but never credited.
 */
export async function receivedTotal(r: Reader, payment: { id: string; receivedAmount: string; decimals: number }): Promise<bigint> {
  const rows = await r.all<{ amount: string }>(`select amount from observed_transfer where payment_id = ? and status in ('LATE', 'EXTRA')`, [payment.id]);
  return rows.reduce((s, r) => s + BigInt(r.amount), parseUnits(payment.receivedAmount, payment.decimals));
}

/**
 * Atomic units of the payment's coin its refunds use up (amount, plus a fee its own funds paid):
 * `final` counts confirmed ones; `broadcast` also those on their way; `committed` also those planned
 * and not yet cancelled or expired (a plan reserves its amount against later plans until then).
 */
export function refundedTotals(refunds: RefundRow[], exceptPlan: string | null = null): { final: bigint; broadcast: bigint; committed: bigint } {
  let final = 0n;
  let broadcast = 0n;
  let committed = 0n;
  for (const r of refunds) {
    if (r.planId === exceptPlan) continue;
    if (r.state === 'CONFIRMED') final += BigInt(r.uses);
    if (r.state === 'CONFIRMED' || r.state === 'PENDING') broadcast += BigInt(r.uses);
    if (r.state === 'CONFIRMED' || r.state === 'PENDING' || r.state === 'PLANNED') committed += BigInt(r.uses);
  }
  return { final, broadcast, committed };
}

export interface DepositSweep {
  planId: string;
  status: string;
  at: Date;
}

/** Sweep (not refund) transactions that took or are taking funds off an address, newest first. */
export async function sweepsOfAddress(r: Reader, pool: { chain: string; isTestnet: boolean }, address: string): Promise<DepositSweep[]> {
  const rows = await r.all<{ plan_id: string; status: string; deposits: string; created_at: unknown }>(
    `select t.plan_id, t.status, t.deposits, t.created_at from sweep_tx t join sweep_plan p on p.id = t.plan_id
      where t.chain = ? and t.is_testnet = ? and p.kind = 'sweep' and t.status in ('SIGNED', 'SENT', 'FINAL') and t.deposits like ?
      order by t.created_at desc`,
    [pool.chain, pool.isTestnet, `%${JSON.stringify(address)}%`],
  );
  return rows.filter((t) => (JSON.parse(t.deposits) as string[]).includes(address)).map((t) => ({ planId: t.plan_id, status: t.status, at: dateOf(t.created_at) }));
}

/** The pool's row of a deposit address: its derivation index and key source (null: not a pool address). */
export async function poolAddress(r: Reader, pool: { chain: string; isTestnet: boolean }, address: string): Promise<{ derivationIndex: number | null; source: string } | null> {
  const row = await r.get<{ derivation_index: number | string | null; source: string }>('select derivation_index, source from wallet_address where chain = ? and is_testnet = ? and address = ?', [pool.chain, pool.isTestnet, address]);
  return row ? { derivationIndex: row.derivation_index === null ? null : Number(row.derivation_index), source: row.source } : null;
}
