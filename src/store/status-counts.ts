import type { Database } from './orm.ts';
import { poolReader } from './raw-sql.ts';

// Row counts for `chaingate status` and /metrics: read at each report or scrape, never kept.

const STATUS_COLUMN = { invoice: 'status', payment: 'status', webhook_delivery: 'state' } as const;

/** How many rows of a table are in each status (a delivery's is its state). */
export async function countByStatus(db: Database, table: keyof typeof STATUS_COLUMN): Promise<Record<string, number>> {
  const column = STATUS_COLUMN[table];
  const rows = await poolReader(db).all<{ k: string; n: number | string }>(`select ${column} as k, count(*) as n from ${table} group by ${column}`);
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
}

/** Merchant points, and how many of them are active. */
export async function merchantCounts(db: Database): Promise<{ total: number; active: number }> {
  const row = await poolReader(db).get<{ total: number | string; active: number | string | null }>(
    'select count(*) as total, count(case when active then 1 end) as active from merchant_point',
  );
  return { total: Number(row?.total ?? 0), active: Number(row?.active ?? 0) };
}
