import { isLivePayment } from '../domain/lifecycle.ts';
import type { Executor, Reader } from './executor.ts';
import { dateOf, nullableDate } from './raw-sql.ts';

// What a plan holds until it is broadcast (docs/sweeps.md#reservations): a plan never broadcast,
// not cancelled and not past its `expires_at` reserves its deposits against other plans, and a
// refund plan its amount against its payment (src/store/refunds.ts refundedTotals). The broadcast
// decides against these rows, row-locked, in the transaction that records its signed transactions.

export interface PoolKey {
  chain: string;
  isTestnet: boolean;
}

export interface Reservation {
  planId: string;
  kind: string;
  expiresAt: Date | null;
}

/** A plan's deposit addresses, from its body as recorded. */
function depositsOf(body: string): string[] {
  return ((JSON.parse(body) as { deposits?: { address: string }[] }).deposits ?? []).map((d) => d.address);
}

/** Deposits reserved by plans never broadcast, not cancelled, not expired: address → the plan holding it. */
export async function reservedDeposits(r: Reader, pool: PoolKey, now: Date, exceptPlan: string | null = null): Promise<Map<string, Reservation>> {
  const rows = await r.all<{ id: string; kind: string; body: string; expires_at: unknown }>(
    `select p.id, p.kind, p.body, p.expires_at from sweep_plan p
      where p.chain = ? and p.is_testnet = ? and p.cancelled_at is null and (p.expires_at is null or p.expires_at > ?)
        and not exists (select 1 from sweep_tx t where t.plan_id = p.id)`,
    [pool.chain, pool.isTestnet, now],
  );
  const out = new Map<string, Reservation>();
  for (const row of rows) {
    if (row.id === exceptPlan) continue;
    for (const address of depositsOf(row.body)) out.set(address, { planId: row.id, kind: row.kind, expiresAt: nullableDate(row.expires_at) });
  }
  return out;
}

/** Ends a plan's reservation (`sweep cancel`, `refund cancel`): only a plan none of whose transactions was recorded by a broadcast. */
export async function cancelPlan(x: Executor, planId: string, now: Date): Promise<'cancelled' | 'already' | 'broadcast'> {
  const changed = await x.run(
    'update sweep_plan set cancelled_at = ? where id = ? and cancelled_at is null and not exists (select 1 from sweep_tx t where t.plan_id = ?)',
    [now, planId, planId],
  );
  if (changed > 0) return 'cancelled';
  const tx = await x.get('select 1 as x from sweep_tx where plan_id = ? limit 1', [planId]);
  return tx ? 'broadcast' : 'already';
}

/**
 * Serialises broadcasts that touch the same payment or deposits: on PostgreSQL the rows are locked
 * until the write commits (a second broadcast waits here, then sees the first one's rows); SQLite
 * runs one write at a time already.
 */
export async function lockForBroadcast(x: Executor, pool: PoolKey, addresses: string[], paymentId: string | null): Promise<void> {
  if (x.dialect !== 'postgresql') return;
  if (paymentId !== null) await x.all('select id from payment where id = ? for update', [paymentId]);
  if (addresses.length > 0) {
    await x.all(`select id from wallet_address where chain = ? and is_testnet = ? and address in (${addresses.map(() => '?').join(', ')}) order by id for update`, [
      pool.chain,
      pool.isTestnet,
      ...addresses,
    ]);
  }
}

export interface PlanState {
  cancelledAt: Date | null;
  expiresAt: Date | null;
  createdAt: Date;
}

export async function planState(r: Reader, planId: string): Promise<PlanState | null> {
  const row = await r.get<{ cancelled_at: unknown; expires_at: unknown; created_at: unknown }>('select cancelled_at, expires_at, created_at from sweep_plan where id = ?', [planId]);
  return row ? { cancelledAt: nullableDate(row.cancelled_at), expiresAt: nullableDate(row.expires_at), createdAt: dateOf(row.created_at) } : null;
}

/**
 * Why each of these pool addresses may not be spent by plan `planId` now, or nothing: leased to a
 * payment still live, in another plan's transaction on its way, or swept by another plan since this
 * one was made. (Another
 * plan's reservation kept this plan from being made; between two plans that both exist, the first
 * broadcast wins.) Addresses outside the pool (a merchant wallet) have no such record.
 */
export async function depositConflicts(r: Reader, pool: PoolKey, addresses: string[], planId: string): Promise<string[]> {
  if (addresses.length === 0) return [];
  const marks = addresses.map(() => '?').join(', ');
  const leased = await r.all<{ address: string; payment_id: string | null; status: string | null }>(
    `select w.address, w.payment_id, p.status from wallet_address w left join payment p on p.id = w.payment_id
      where w.chain = ? and w.is_testnet = ? and w.address in (${marks})`,
    [pool.chain, pool.isTestnet, ...addresses],
  );
  const why: string[] = [];
  for (const w of leased) {
    if (w.payment_id !== null && (w.status === null || isLivePayment(w.status))) why.push(`the deposit ${w.address} is leased to payment ${w.payment_id}, still ${w.status ?? 'unknown'}`);
  }
  // A sweep recorded before this plan was made is one the planner already saw (it read the live
  // balances after it): only a sweep recorded since, or one still on its way, takes this plan's funds.
  const txs = await r.all<{ plan_id: string; kind: string; status: string; deposits: string }>(
    `select t.plan_id, p.kind, t.status, t.deposits from sweep_tx t join sweep_plan p on p.id = t.plan_id
      where t.chain = ? and t.is_testnet = ? and t.plan_id <> ?
        and (t.status in ('SIGNED', 'SENT') or (t.status = 'FINAL' and t.created_at > (select created_at from sweep_plan where id = ?)))`,
    [pool.chain, pool.isTestnet, planId, planId],
  );
  const wanted = new Set(addresses);
  for (const t of txs) {
    for (const address of (JSON.parse(t.deposits) as string[]).filter((a) => wanted.has(a))) {
      if (t.status !== 'FINAL') why.push(`the deposit ${address} is in a transaction of ${t.kind} plan ${t.plan_id.slice(0, 16)}… still on its way`);
      else if (t.kind === 'sweep') why.push(`the deposit ${address} was swept by plan ${t.plan_id.slice(0, 16)}…`);
    }
  }
  return [...new Set(why)];
}
