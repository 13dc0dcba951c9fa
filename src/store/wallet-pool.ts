import type { PoolAddressStatus } from '../domain/lifecycle.ts';
import type { Database } from './orm.ts';
import type { Executor } from './executor.ts';
import { boolOf, nullableDate, poolReader, readRow } from './raw-sql.ts';
import { newId } from '../domain/ids.ts';

/**
 * Free addresses of a pool, counted up to `limit` (the low-water mark): whether a pool runs low
 * needs no count of a pool of 100,000.
 */
export async function countFreeUpTo(db: Database, pool: { chain: string; isTestnet: boolean }, limit: number): Promise<number> {
  const row = await readRow<{ n: number | string }>(
    db,
    `select count(*) as n from (select 1 from wallet_address where chain = ? and is_testnet = ? and status = 'FREE' limit ?) free`,
    [pool.chain, pool.isTestnet, limit],
  );
  return Number(row?.n ?? 0);
}

export interface PoolCount {
  chain: string;
  isTestnet: boolean;
  free: number;
  leased: number;
  total: number;
}

export async function countPools(db: Database, chain?: string): Promise<PoolCount[]> {
  const rows = await poolReader(db).all<{ chain: string; is_testnet: boolean | number; status: string; n: number | string }>(
    `select chain, is_testnet, status, count(*) as n from wallet_address${chain ? ' where chain = ?' : ''} group by chain, is_testnet, status order by chain, is_testnet`,
    chain ? [chain] : [],
  );
  const map = new Map<string, PoolCount>();
  for (const r of rows) {
    const isTestnet = boolOf(r.is_testnet);
    const key = `${r.chain}:${isTestnet}`;
    const entry = map.get(key) ?? { chain: r.chain, isTestnet, free: 0, leased: 0, total: 0 };
    const n = Number(r.n);
    if (r.status === 'FREE') entry.free += n;
    else entry.leased += n;
    entry.total += n;
    map.set(key, entry);
  }
  return [...map.values()];
}

export async function countFree(db: Database, pool: { chain: string; isTestnet: boolean }): Promise<number> {
  const row = await poolReader(db).get<{ n: number | string }>(`select count(*) as n from wallet_address where chain = ? and is_testnet = ? and status = 'FREE'`, [pool.chain, pool.isTestnet]);
  return Number(row?.n ?? 0);
}

export interface PoolAddress {
  /** Child index `0/i` under the account key; null for an address from a list file. */
  index: number | null;
  address: string;
  status: PoolAddressStatus;
  paymentId: string | null;
  leasedAt: Date | null;
  /** Fingerprint of the account key, or "file". */
  source: string;
}

/**
 * One page of a pool's addresses: by derivation index, then (list-file addresses, which have none)
 * in the order they were seeded. `offset` counts rows of that order; `total` is the pool's size.
 */
export async function listPoolAddresses(
  db: Database,
  pool: { chain: string; isTestnet: boolean },
  page: { offset: number; limit: number },
): Promise<{ total: number; addresses: PoolAddress[] }> {
  const r = poolReader(db);
  const where = [pool.chain, pool.isTestnet];
  const [rows, count] = await Promise.all([
    r.all<{ derivation_index: number | string | null; address: string; status: PoolAddressStatus; payment_id: string | null; leased_at: unknown; source: string }>(
      `select derivation_index, address, status, payment_id, leased_at, source from wallet_address where chain = ? and is_testnet = ?
       order by derivation_index is null, derivation_index, created_at, id limit ? offset ?`,
      [...where, page.limit, page.offset],
    ),
    r.get<{ n: number | string }>('select count(*) as n from wallet_address where chain = ? and is_testnet = ?', where),
  ]);
  return {
    total: Number(count?.n ?? 0),
    addresses: rows.map((row) => ({
      index: row.derivation_index === null ? null : Number(row.derivation_index),
      address: row.address,
      status: row.status,
      paymentId: row.payment_id,
      leasedAt: nullableDate(row.leased_at),
      source: row.source,
    })),
  };
}

export interface SeedEntry {
  address: string;
  /** Child index under the account key; null for list files. */
  index: number | null;
}

/**
 * Adds addresses to a pool; ones already there (in this pool) are skipped and counted. The
 * INSERT … ON CONFLICT DO NOTHING makes a concurrent seed of the same addresses safe too.
 */
export async function addToPool(
  x: Executor,
  pool: { chain: string; isTestnet: boolean },
  source: string,
  entries: SeedEntry[],
  now = new Date(),
): Promise<{ added: number; skipped: number }> {
  let added = 0;
  for (let i = 0; i < entries.length; i += 200) {
    const chunk = entries.slice(i, i + 200);
    const values = chunk.map(() => `(?, ?, ?, ?, 'FREE', ?, ?, ?)`).join(', ');
    const params = chunk.flatMap((e) => [newId(), pool.chain, pool.isTestnet, e.address, e.index, source, now]);
    added += await x.run(
      `insert into wallet_address (id, chain, is_testnet, address, status, derivation_index, source, created_at)
       values ${values} on conflict (chain, is_testnet, address) do nothing`,
      params,
    );
  }
  return { added, skipped: entries.length - added };
}

/** Where derivation continues for an account key in a pool: one past the highest index seeded. */
export async function nextDerivationIndex(db: Database, pool: { chain: string; isTestnet: boolean }, source: string): Promise<number> {
  const row = await poolReader(db).get<{ m: number | string | null }>('select max(derivation_index) as m from wallet_address where chain = ? and is_testnet = ? and source = ?', [
    pool.chain,
    pool.isTestnet,
    source,
  ]);
  const max = row?.m;
  return max === null || max === undefined ? 0 : Number(max) + 1;
}

/** After a seed, PostgreSQL's planner gets the pool's new size now, not at autovacuum's next pass (docs/wallets.md). */
export async function analyzePool(db: Database): Promise<void> {
  if (db.dialect === 'postgresql') await db.em().execute('analyze wallet_address');
}
