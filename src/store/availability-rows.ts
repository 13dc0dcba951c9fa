import type { Database } from './orm.ts';
import { indexerCursor, indexerCursors, type IndexerCursorRow } from './indexer-cursor.ts';
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

function reportOf(c: IndexerCursorRow): CursorReport {
  return { chain: c.chain, network: c.network, headSeenAt: c.headSeenAt, updatedAt: c.updatedAt, hasBlock: c.placed, lastError: c.lastError };
}

/** Every pool's counts and every indexer's report, read together. */
export async function readPoolsAndCursors(db: Database): Promise<{ pools: PoolCount[]; cursors: CursorReport[] }> {
  const [pools, cursors] = await Promise.all([countPools(db), indexerCursors(db)]);
  return { pools, cursors: cursors.map(reportOf) };
}

/** One network's indexer report, read afresh; null when no indexer ever wrote one. */
export async function readCursorReport(db: Database, chain: string, network: string): Promise<CursorReport | null> {
  const row = await indexerCursor(db, { chain, network });
  return row ? reportOf(row) : null;
}
