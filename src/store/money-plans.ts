import type { Reader } from './executor.ts';
import { boolOf, dateOf, nullableDate } from './raw-sql.ts';

// The dashboard's list of refund and sweep plans (docs/dashboard.md#refunds-and-sweeps): each plan
// with its transactions' statuses and, for a refund, its payment and that payment's point (which
// decides who may see it). Statuses are read here, written only by the sweep lifecycle.

export interface MoneyPlanRow {
  id: string;
  kind: 'sweep' | 'refund';
  chain: string;
  network: string;
  isTestnet: boolean;
  to: string;
  createdAt: Date;
  expiresAt: Date | null;
  cancelledAt: Date | null;
  /** A refund's payment and its merchant point; null for a sweep. */
  paymentId: string | null;
  merchantId: string | null;
  txs: { txKey: string; txid: string; status: string; error: string | null; fee: string; moves: Record<string, string> }[];
}

interface RawPlan {
  id: string;
  kind: string;
  chain: string;
  network: string;
  is_testnet: unknown;
  to_address: string;
  created_at: unknown;
  expires_at: unknown;
  cancelled_at: unknown;
  payment_id: string | null;
  merchant_id: string | null;
}

const SELECT = `select p.id, p.kind, p.chain, p.network, p.is_testnet, p.to_address, p.created_at, p.expires_at, p.cancelled_at, f.payment_id, pay.merchant_id
   from sweep_plan p left join refund f on f.plan_id = p.id left join payment pay on pay.id = f.payment_id`;

async function withTxs(r: Reader, rows: RawPlan[]): Promise<MoneyPlanRow[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((p) => p.id);
  const txs = await r.all<{ plan_id: string; tx_key: string; txid: string; status: string; error: string | null; fee: string; moves: string }>(
    `select plan_id, tx_key, txid, status, error, fee, moves from sweep_tx where plan_id in (${ids.map(() => '?').join(', ')})`,
    ids,
  );
  return rows.map((p) => ({
    id: p.id,
    kind: p.kind === 'refund' ? 'refund' : 'sweep',
    chain: p.chain,
    network: p.network,
    isTestnet: boolOf(p.is_testnet),
    to: p.to_address,
    createdAt: dateOf(p.created_at),
    expiresAt: nullableDate(p.expires_at),
    cancelledAt: nullableDate(p.cancelled_at),
    paymentId: p.payment_id,
    merchantId: p.merchant_id,
    txs: txs
      .filter((t) => t.plan_id === p.id)
      .sort((a, b) => Number(a.tx_key.slice(3)) - Number(b.tx_key.slice(3)))
      .map((t) => ({ txKey: t.tx_key, txid: t.txid, status: t.status, error: t.error, fee: t.fee, moves: JSON.parse(t.moves) as Record<string, string> })),
  }));
}

/** Plans newest first; `merchantIds` null: every plan, else sweeps left out and refunds of those points only. */
export async function moneyPlans(r: Reader, options: { limit: number; merchantIds: readonly string[] | null }): Promise<MoneyPlanRow[]> {
  const ids = options.merchantIds;
  if (ids && ids.length === 0) return [];
  const where = ids ? `where pay.merchant_id in (${ids.map(() => '?').join(', ')}) ` : '';
  return withTxs(r, await r.all<RawPlan>(`${SELECT} ${where}order by p.created_at desc, p.id limit ?`, [...(ids ?? []), options.limit]));
}

/** One plan by its full id. */
export async function moneyPlan(r: Reader, id: string): Promise<MoneyPlanRow | null> {
  return (await withTxs(r, await r.all<RawPlan>(`${SELECT} where p.id = ?`, [id])))[0] ?? null;
}

/** A recorded plan's file as `sweep plan` writes it (the body recorded), or null. */
export async function planBody(r: Reader, id: string): Promise<string | null> {
  return (await r.get<{ body: string }>('select body from sweep_plan where id = ?', [id]))?.body ?? null;
}
