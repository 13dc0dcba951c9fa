import type { EntityManager } from '@mikro-orm/sql';
import { createHash } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import type { Dialect } from '../config/database-url.ts';
import { toDb, type Reader, type SqlValue } from './executor.ts';
import type { Database } from './orm.ts';
import { cachedNativeSqlite, nativeSqlite, type NativeSqlite } from './native-sqlite.ts';

// Hand-written SQL for the hot paths, through the same connection (and, inside a transaction, the
// same transaction) MikroORM uses, with bound parameters. MikroORM inlines every parameter into the
// SQL text, so each of its statements is a new text for SQLite to compile and PostgreSQL to parse;
// these statements keep one text and hit the prepared-statement cache (src/store/orm.ts).
// Values as the ORM stores them: on SQLite dates are epoch milliseconds and booleans 0/1.

const pgText = new Map<string, string>();

/** `?` placeholders become `$1…` on PostgreSQL (the statements here never hold a literal `?`). */
function textFor(dialect: Dialect, sql: string): string {
  if (dialect !== 'postgresql') return sql;
  let text = pgText.get(sql);
  if (text === undefined) {
    let n = 0;
    text = sql.replace(/\?/g, () => `$${++n}`);
    if (pgText.size < 1000) pgText.set(sql, text);
  }
  return text;
}

/** Rows of a statement (and its affected-row count) in the em's transaction, if it has one. */
export async function rawQuery<R = Record<string, unknown>>(em: EntityManager, dialect: Dialect, sql: string, params: SqlValue[] = []): Promise<{ rows: R[]; affected: number }> {
  const ctx = (em.getTransactionContext() ?? em.getConnection().getClient()) as { executeQuery<T>(q: CompiledQuery): Promise<{ rows: T[]; numAffectedRows?: bigint }> };
  const res = await ctx.executeQuery<R>(CompiledQuery.raw(textFor(dialect, sql), params.map((v) => toDb(dialect, v))));
  return { rows: res.rows, affected: Number(res.numAffectedRows ?? res.rows.length) };
}

/** Reads outside any write, for callers that are not in one: named statements on PostgreSQL's pool, the ORM's connection on SQLite. */
export function poolReader(db: Database): Reader {
  const all = async <R>(sql: string, params: SqlValue[] = []): Promise<R[]> =>
    db.dialect === 'postgresql' ? ((await pgStatement(db, sql, params)).rows as R[]) : (await rawQuery<R>(db.em(), db.dialect, sql, params)).rows;
  return { dialect: db.dialect, all, get: <R>(sql: string, params: SqlValue[] = []) => readRow<R>(db, sql, params) };
}

/** Date columns as read raw: epoch ms (SQLite), Date (PostgreSQL) or an ISO string. */
export function dateOf(v: unknown): Date {
  return v instanceof Date ? v : new Date(typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : (v as string | number));
}

export function nullableDate(v: unknown): Date | null {
  return v === null || v === undefined ? null : dateOf(v);
}

/**
 * The first row of a read outside any transaction (the buyer's polls). On SQLite, when no
 * transaction holds the connection, on the native handle (its cached prepared statement, no pool);
 * otherwise, and on PostgreSQL, through the pool.
 */
export async function readRow<R>(db: Database, sql: string, params: SqlValue[]): Promise<R | undefined> {
  if (db.dialect === 'sqlite') {
    const native = cachedNativeSqlite(db.orm.em.getConnection()) ?? (await nativeSqlite(db.orm.em as unknown as EntityManager));
    if (!native.inTransaction) return sqliteRow<R>(native, sql, params);
  }
  if (db.dialect === 'postgresql') return (await pgStatement(db, sql, params)).rows[0] as R | undefined;
  const { rows } = await rawQuery<R>(db.em(), db.dialect, sql, params);
  return rows[0];
}

/** The first row of a statement on the native handle (its cached prepared statement). */
function sqliteRow<R>(native: NativeSqlite, sql: string, params: SqlValue[]): R | undefined {
  return native.prepare(sql).get(...params.map((v) => toDb('sqlite', v))) as R | undefined;
}

interface PgPool {
  query(q: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
}

/**
 * One statement on PostgreSQL, outside any transaction (so atomic by itself), straight on
 * MikroORM's own pg pool (the same connections), as the bare server does: no query-builder driver
 * in between. A named statement: parsed and planned once per connection, then bound and executed.
 */
export async function pgStatement(db: Database, sql: string, params: SqlValue[]): Promise<{ rows: unknown[]; rowCount: number | null }> {
  const pool = pgPools.get(db.orm) ?? (await pgPoolOf(db));
  return pool.query({ name: statementName(sql), text: textFor('postgresql', sql), values: params });
}

const names = new Map<string, string>();
function statementName(sql: string): string {
  let name = names.get(sql);
  if (name === undefined) {
    name = `cg_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`;
    names.set(sql, name);
  }
  return name;
}
const pgPools = new WeakMap<object, PgPool>();

async function pgPoolOf(db: Database): Promise<PgPool> {
  const pool = await (db.orm.em.getConnection() as unknown as { getNativeClient(): Promise<PgPool> }).getNativeClient();
  pgPools.set(db.orm, pool);
  return pool;
}

/** A JSON column as read raw: text on SQLite, already parsed on PostgreSQL. */
export function jsonOf<T>(v: unknown): T | null {
  if (v === null || v === undefined) return null;
  return (typeof v === 'string' ? JSON.parse(v) : v) as T;
}

/** A boolean column as read raw: 0/1 on SQLite. */
export function boolOf(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 't';
}
