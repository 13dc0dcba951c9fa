import { IndexerCursor, NO_BLOCK_YET } from './entities/indexer-cursor.entity.ts';
import type { Database } from './orm.ts';
import { countPools, type PoolCount } from './wallet-pool.ts';

// What the checkout's availability (src/app/availability.ts) reads of the pools and the indexers,
// as plain rows.

/** What an indexer's cursor says of its last report. */
export interface CursorReport {
  chain: string;
  network: string;
  headSeenAt: Date | null;
  updatedAt: Date;
  /** False while the row holds only a failure, written before the indexer's first block. */
  hasBlock: boolean;
  lastError: string | null;
}

const FIELDS = ['chain', 'network', 'headSeenAt', 'updatedAt', 'blockHash', 'lastError'] as const;

function reportOf(c: Pick<IndexerCursor, (typeof FIELDS)[number]>): CursorReport {
  return { chain: c.chain, network: c.network, headSeenAt: c.headSeenAt ?? null, updatedAt: c.updatedAt, hasBlock: c.blockHash !== NO_BLOCK_YET, lastError: c.lastError ?? null };
}

/** Every pool's counts and every indexer's report, read together. */
export async function readPoolsAndCursors(db: Database): Promise<{ pools: PoolCount[]; cursors: CursorReport[] }> {
  const em = db.em();
  const [pools, cursors] = await Promise.all([countPools(em), em.find(IndexerCursor, {}, { fields: [...FIELDS] })]);
  return { pools, cursors: cursors.map(reportOf) };
}

/** One network's indexer report, read afresh; null when no indexer ever wrote one. */
export async function readCursorReport(db: Database, chain: string, network: string): Promise<CursorReport | null> {
  const row = await db.em().findOne(IndexerCursor, { chain, network }, { fields: [...FIELDS] });
  return row ? reportOf(row) : null;
}
