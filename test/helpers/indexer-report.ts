import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { openDatabase } from '../../src/store/orm.ts';
import { newId } from '../../src/domain/ids.ts';

/**
 * Writes a chain network's indexer cursor as `chaingate index` does after a poll at `at` (default
 * now), into the database at `url`: for tests whose `serve` runs as a separate process and checks out
 * on the signed gateway, which refuses a chain no indexer has reported for (CHAIN_NOT_MONITORED).
 * In-process daemons have `TestDaemon.markIndexed`.
 */
export async function recordIndexerReport(url: string, chain: string, options: { network?: string; at?: Date } = {}): Promise<void> {
  const db = await openDatabase(url);
  try {
    const em = db.em();
    const network = options.network ?? 'MAINNET';
    const at = options.at ?? new Date();
    const fields = { headSeenAt: at, updatedAt: at, headNumber: '100', lastError: null, lastErrorAt: null };
    const updated = await em.nativeUpdate(IndexerCursor, { chain, network }, fields);
    if (updated === 0) {
      await em.insert(IndexerCursor, { id: newId(), chain, network, blockNumber: '100', blockHash: `0x${'ab'.repeat(32)}`, leaseOwner: null, leaseUntil: null, blockTime: null, finalizedNumber: null, ...fields });
    }
  } finally {
    await db.close();
  }
}
