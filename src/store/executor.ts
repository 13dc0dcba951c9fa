import type { Dialect } from '../config/database-url.ts';

export type SqlValue = string | number | boolean | Date | null;

/** A value as the store keeps it: on SQLite dates are epoch milliseconds and booleans 0/1 (as MikroORM writes them). */
export function toDb(dialect: Dialect, v: SqlValue): string | number | boolean | Date | null {
  if (dialect === 'sqlite') {
    if (v instanceof Date) return v.getTime();
    if (typeof v === 'boolean') return v ? 1 : 0;
  }
  return v;
}

/**
 * Bound SQL inside one write transaction: what every write of the store is written against, once,
 * for both databases (`?` placeholders; dates and booleans as src/store/raw-sql.ts stores them).
 * Work given to Database.write awaits nothing but its executor, so a SQLite batch never waits on
 * the network (src/store/sqlite-writer.ts).
 */
export interface Executor {
  readonly dialect: Dialect;
  /** Runs a statement; the number of rows it changed. */
  run(sql: string, params?: SqlValue[]): Promise<number>;
  get<R>(sql: string, params?: SqlValue[]): Promise<R | undefined>;
  all<R>(sql: string, params?: SqlValue[]): Promise<R[]>;
}

/** The reads of an executor: inside a write (seeing its own rows), or over the pool (src/store/raw-sql.ts poolReader). */
export type Reader = Pick<Executor, 'dialect' | 'get' | 'all'>;

/** A synchronous better-sqlite3 statement source (the writer's own connection). */
export interface SqliteStatements {
  prepare(sql: string): { run(...params: unknown[]): { changes: number }; get(...params: unknown[]): unknown; all(...params: unknown[]): unknown[] };
}

/** The executor over a synchronous SQLite connection: each call runs at once, its promise already settled. */
export function sqliteExecutor(conn: SqliteStatements): Executor {
  const bind = (params: SqlValue[]) => params.map((v) => toDb('sqlite', v));
  return {
    dialect: 'sqlite',
    run: async (sql, params = []) => conn.prepare(sql).run(...bind(params)).changes,
    get: async <R>(sql: string, params: SqlValue[] = []) => conn.prepare(sql).get(...bind(params)) as R | undefined,
    all: async <R>(sql: string, params: SqlValue[] = []) => conn.prepare(sql).all(...bind(params)) as R[],
  };
}
