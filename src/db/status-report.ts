import { IndexerCursor } from './entities/indexer-cursor.entity.ts';
import { MerchantPoint } from './entities/merchant-point.entity.ts';
import type { Database } from './orm.ts';
import { migrationStatus } from './migrate.ts';
import { countPools, type PoolCount } from './wallet-pool.ts';

export interface StatusReport {
  database: { url: string; dialect: string; pendingMigrations: number };
  merchants: { total: number; active: number };
  invoices: Record<string, number>;
  payments: Record<string, number>;
  pools: PoolCount[];
  indexers: { chain: string; network: string; block: string; updatedAt: string; running: boolean; leaseOwner: string | null }[];
  webhooks: { pending: number; failed: number; delivered: number; oldestPendingAt: string | null };
  generatedAt: string;
}

async function countBy(db: Database, table: 'invoice' | 'payment' | 'webhook_delivery', column: 'status' | 'state'): Promise<Record<string, number>> {
  const rows = await db.em().execute<{ k: string; n: number | string }[]>(`select ${column} as k, count(*) as n from ${table} group by ${column}`);
  return Object.fromEntries(rows.map((r) => [r.k, Number(r.n)]));
}

/** What an operator wants at a glance; read-only, shared by `chaingate status` and its --watch view. */
export async function statusReport(db: Database, now = new Date()): Promise<StatusReport> {
  const em = db.em();
  const [{ pending }, merchants, active, invoices, payments, pools, cursors, deliveries] = await Promise.all([
    migrationStatus(db),
    em.count(MerchantPoint, {}),
    em.count(MerchantPoint, { active: true }),
    countBy(db, 'invoice', 'status'),
    countBy(db, 'payment', 'status'),
    countPools(em),
    em.find(IndexerCursor, {}, { orderBy: { chain: 'asc', network: 'asc' } }),
    countBy(db, 'webhook_delivery', 'state'),
  ]);
  const oldest = await em.execute<{ t: unknown }[]>(`select min(next_attempt_at) as t from webhook_delivery where state = 'PENDING'`);
  const t = oldest[0]?.t;
  return {
    database: { url: db.url, dialect: db.dialect, pendingMigrations: pending.length },
    merchants: { total: merchants, active },
    invoices,
    payments,
    pools,
    indexers: cursors.map((c) => ({
      chain: c.chain,
      network: c.network,
      block: c.blockNumber,
      updatedAt: c.updatedAt.toISOString(),
      running: Boolean(c.leaseOwner && c.leaseUntil && c.leaseUntil > now),
      leaseOwner: c.leaseOwner ?? null,
    })),
    webhooks: {
      pending: deliveries.PENDING ?? 0,
      failed: deliveries.FAILED ?? 0,
      delivered: deliveries.DELIVERED ?? 0,
      oldestPendingAt: t === null || t === undefined ? null : new Date(typeof t === 'string' && /^\d+$/.test(t) ? Number(t) : (t as string | number | Date)).toISOString(),
    },
    generatedAt: now.toISOString(),
  };
}
