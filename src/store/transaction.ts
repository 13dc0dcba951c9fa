import type { EntityManager } from '@mikro-orm/sql';
import type { Executor, SqlValue } from './executor.ts';
import { rawQuery } from './raw-sql.ts';
import type { Dialect } from '../config/database-url.ts';
import { retryOnLockConflict } from './lock-retry.ts';
import type { Database } from './orm.ts';

/**
 * Runs `fn` in one ORM transaction on a fresh EntityManager, for the writes still made with entities
 * (merchant points, the pool's addresses); the store's own tables are written through
 * Database.write. A transaction that loses a lock to another connection
 * (SQLite busy, PostgreSQL serialization failure, deadlock or lock timeout) is rolled back and run
 * again from the start until LOCK_WAIT_MS have passed, then DATABASE_BUSY is thrown.
 */
export async function inTransaction<T>(db: Database, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  return retryOnLockConflict(() => db.em().transactional((em) => fn(em as EntityManager)));
}

/**
 * An executor over an ORM transaction's connection. Nothing in src writes through it (every write is
 * Database.write); test fixtures that build rows with entities use it to take reference numbers.
 */
export function ormExecutor(em: EntityManager, dialect: Dialect): Executor {
  return {
    dialect,
    run: async (sql, params = []) => (await rawQuery(em, dialect, sql, params)).affected,
    get: async <R>(sql: string, params: SqlValue[] = []) => (await rawQuery<R>(em, dialect, sql, params)).rows[0],
    all: async <R>(sql: string, params: SqlValue[] = []) => (await rawQuery<R>(em, dialect, sql, params)).rows,
  };
}
