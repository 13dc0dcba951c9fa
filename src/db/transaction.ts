import type { EntityManager } from '@mikro-orm/sql';
import type { Executor, SqlValue } from './executor.ts';
import { rawQuery } from './raw-sql.ts';
import type { Dialect } from '../config/database-url.ts';
import { retryOnLockConflict } from './lock-retry.ts';
import type { Database } from './orm.ts';

/**
 * Runs `fn` in one database transaction on a fresh EntityManager: a state change and the event it
 * causes commit together or not at all. A transaction that loses a lock to another connection
 * (SQLite busy, PostgreSQL serialization failure, deadlock or lock timeout) is rolled back and run
 * again from the start until LOCK_WAIT_MS have passed, then DATABASE_BUSY is thrown.
 */
export async function inTransaction<T>(db: Database, fn: (em: EntityManager) => Promise<T>): Promise<T> {
  return retryOnLockConflict(() => db.em().transactional((em) => fn(em as EntityManager)));
}

/** An executor that also carries the ORM's EntityManager of the same transaction. */
export interface OrmExecutor extends Executor {
  readonly em: EntityManager;
}

/** The executor of an ORM transaction, for steps still written against entities that must share it. */
export function ormExecutor(em: EntityManager, dialect: Dialect): OrmExecutor {
  return {
    dialect,
    em,
    run: async (sql, params = []) => (await rawQuery(em, dialect, sql, params)).affected,
    get: async <R>(sql: string, params: SqlValue[] = []) => (await rawQuery<R>(em, dialect, sql, params)).rows[0],
    all: async <R>(sql: string, params: SqlValue[] = []) => (await rawQuery<R>(em, dialect, sql, params)).rows,
  };
}

/**
 * inTransaction for work that mixes the store's statements with steps still written against
 * entities (the invoice cancel's expiry rules): both in the ORM's transaction, on its connection.
 */
export function ormWrite(db: Database): <T>(fn: (x: OrmExecutor) => Promise<T>) => Promise<T> {
  return (fn) => inTransaction(db, (em) => fn(ormExecutor(em, db.dialect)));
}
