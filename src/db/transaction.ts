import type { EntityManager } from '@mikro-orm/sql';
import type { Database } from './orm.ts';

const RETRYABLE = new Set(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_LOCKED', '40001', '40P01']);

function isRetryable(err: unknown): boolean {
  for (let e: unknown = err; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && RETRYABLE.has(code)) return true;
  }
  return false;
}

/**
 * Runs `fn` in one database transaction on a fresh EntityManager: a state change and the event it
 * causes commit together or not at all. Lock conflicts between processes (SQLite busy, PostgreSQL
 * serialization failure or deadlock) are retried a few times from the start.
 */
export async function inTransaction<T>(db: Database, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.em().transactional((em) => fn(em as EntityManager));
    } catch (err) {
      if (attempt >= 5 || !isRetryable(err)) throw err;
      await new Promise((r) => setTimeout(r, 20 * attempt + Math.random() * 30));
    }
  }
}
