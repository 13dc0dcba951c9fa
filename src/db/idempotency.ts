import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/sql';
import { newTimeOrderedId } from '../domain/ids.ts';
import { IdempotencyRecord } from './entities/idempotency-record.entity.ts';
import type { Database, Dialect } from './orm.ts';
import { retryOnLockConflict } from './transaction.ts';
import type { NativeSqlite } from './native-sqlite.ts';
import { dateOf, pgStatement, rawQuery, toDb, type SqlValue } from './raw-sql.ts';
import { BaseError } from '../domain/errors.ts';

/**
 * An IN_FLIGHT row older than this may be re-claimed. Claims now commit only with their completed
 * answer, so none is left by a crash; kept for rows written by earlier versions.
 */
export const ABANDONED_AFTER_MS = 5 * 60_000;

export type ClaimResult =
  | { kind: 'claimed'; id: string }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'conflict' }
  | { kind: 'in_flight' };

export interface ClaimInput {
  merchantId: string;
  /** The merchant point's version the request was authenticated against (src/db/merchants.ts). */
  merchantVersion: number;
  key: string;
  fingerprint: string;
  ttlMs: number;
}

/**
 * The merchant point changed (secret rotated, disabled, edited) since its cached copy authenticated
 * this request: nothing was written; authenticate again from the database.
 */
export class StaleMerchantError extends BaseError {
  override readonly name = 'StaleMerchantError';
}

// The claim is one INSERT that also checks, in the same statement, that the merchant point is still
// active at the version the request was authenticated against: a cached secret is never used for a
// write after a rotation or a disable, and the check costs no extra round trip.
const CLAIM_SQL = {
  sqlite: `insert into idempotency_record (id, merchant_id, key, fingerprint, state, status_code, response_body, created_at, expires_at)
    select ?, ?, ?, ?, 'IN_FLIGHT', null, null, ?, ? where exists (select 1 from merchant_point where id = ? and version = ? and active = 1)`,
  postgresql: `insert into idempotency_record (id, merchant_id, key, fingerprint, state, status_code, response_body, created_at, expires_at)
    select ?, ?, ?, ?, 'IN_FLIGHT', null, null, ?, ? where exists (select 1 from merchant_point where id = ? and version = ? and active = true)`,
};
const COMPLETE_SQL = `update idempotency_record set state = 'COMPLETED', status_code = ?, response_body = ? where id = ?`;

function claimParams(input: ClaimInput, id: string, now: Date): SqlValue[] {
  return [id, input.merchantId, input.key, input.fingerprint, now, new Date(now.getTime() + input.ttlMs), input.merchantId, input.merchantVersion];
}

/**
 * Claims the key inside the caller's transaction, the one that also does the work and stores the
 * answer (completeKeyIn): the key is absent (nothing happened, a crash rolled it all back) or
 * completed (replayable), never executed and retryable. A concurrent identical request waits on the
 * unique index until this transaction ends, then finds the key completed and replays it.
 * Throws a unique violation when the key exists (the caller reads it after rolling back, and an
 * expired key is deleted there), StaleMerchantError when the point changed.
 */
export async function claimKeyIn(em: EntityManager, dialect: Dialect, input: ClaimInput, now = new Date()): Promise<string> {
  const id = newTimeOrderedId(now.getTime());
  const { affected } = await rawQuery(em, dialect, CLAIM_SQL[dialect], claimParams(input, id, now));
  if (affected === 0) throw new StaleMerchantError('merchant point changed since it was cached');
  return id;
}

export async function completeKeyIn(em: EntityManager, dialect: Dialect, id: string, statusCode: number, body: string): Promise<void> {
  await rawQuery(em, dialect, COMPLETE_SQL, [statusCode, body, id]);
}

/** claimKeyIn on a synchronous SQLite handle, inside groupedSqliteTransaction. */
export function claimKeySync(native: NativeSqlite, input: ClaimInput, now = new Date()): string {
  const id = newTimeOrderedId(now.getTime());
  const { changes } = native.prepare(CLAIM_SQL.sqlite).run(...claimParams(input, id, now).map((v) => toDb('sqlite', v)));
  if (changes === 0) throw new StaleMerchantError('merchant point changed since it was cached');
  return id;
}

export function completeKeySync(native: NativeSqlite, id: string, statusCode: number, body: string): void {
  native.prepare(COMPLETE_SQL).run(statusCode, body, id);
}

/** An insert that runs only when the key was claimed: its rows come `from claim` (the claim's CTE). */
export interface InsertAfterClaim {
  sql: string;
  params: SqlValue[];
  /** The PostgreSQL type of each parameter: given, the write may share a statement with others (src/db/pg-group-commit.ts). */
  types?: readonly string[];
}

/** The key exists already (found without an error, see claimAndInsertPg): handled as a unique violation. */
export class KeyTakenError extends BaseError {
  override readonly name = 'KeyTakenError';
}

/**
 * On PostgreSQL, a write in one statement (one round trip, atomic on its own): the key is inserted
 * already COMPLETED with the answer, which the caller built before (every value of the write is
 * known in advance), and the write's insert takes its rows from that claim. A key that exists
 * inserts nothing (KeyTakenError: the caller replays it), and so does a merchant point that changed
 * since it was cached (StaleMerchantError), as with claimKeyIn. `on conflict do nothing` rather
 * than the unique violation: pg-pool closes the connection of a query that failed.
 */
export async function claimAndInsertPg(db: Database, input: ClaimInput, statusCode: number, body: string, insert: InsertAfterClaim, now = new Date()): Promise<void> {
  const sql = `with claim as (insert into idempotency_record (id, merchant_id, key, fingerprint, state, status_code, response_body, created_at, expires_at)
      select ?, ?, ?, ?, 'COMPLETED', ?, ?, ?, ? where exists (select 1 from merchant_point where id = ? and version = ? and active = true)
      on conflict (merchant_id, key) do nothing returning 1),
    written as (${insert.sql} returning 1)
    select (select count(*) from written)::int as written, exists (select 1 from merchant_point where id = ? and version = ? and active = true) as fresh`;
  const params: SqlValue[] = [
    newTimeOrderedId(now.getTime()), input.merchantId, input.key, input.fingerprint, statusCode, body, now, new Date(now.getTime() + input.ttlMs), input.merchantId, input.merchantVersion,
    ...insert.params,
    input.merchantId, input.merchantVersion,
  ];
  const row = (await pgStatement(db, sql, params)).rows[0] as { written: number; fresh: boolean };
  if (row.written > 0) return;
  if (!row.fresh) throw new StaleMerchantError('merchant point changed since it was cached');
  throw new KeyTakenError('Idempotency-Key exists');
}

interface KeyRow {
  id: string;
  fingerprint: string;
  state: string;
  status_code: number | null;
  response_body: string | null;
  created_at: unknown;
  expires_at: unknown;
}

/**
 * What an existing key means for a request with this fingerprint (after a claim lost the race).
 * A key past its retention, or an IN_FLIGHT row abandoned by an earlier version, is deleted here
 * and reported absent, so the caller claims it afresh.
 */
export async function existingKey(db: Database, input: { merchantId: string; key: string; fingerprint: string }, now = new Date()): Promise<ClaimResult | null> {
  const em = db.em();
  const { rows } = await rawQuery<KeyRow>(em, db.dialect, 'select id, fingerprint, state, status_code, response_body, created_at, expires_at from idempotency_record where merchant_id = ? and key = ?', [input.merchantId, input.key]);
  const existing = rows[0];
  if (!existing) return null;
  const abandoned = existing.state === 'IN_FLIGHT' && dateOf(existing.created_at).getTime() <= now.getTime() - ABANDONED_AFTER_MS;
  if (dateOf(existing.expires_at) <= now || abandoned) {
    await retryOnLockConflict(() => rawQuery(em, db.dialect, 'delete from idempotency_record where id = ? and (expires_at <= ? or state = ?)', [existing.id, now, abandoned ? 'IN_FLIGHT' : '-']));
    return null;
  }
  if (existing.fingerprint !== input.fingerprint) return { kind: 'conflict' };
  if (existing.state === 'IN_FLIGHT') return { kind: 'in_flight' };
  return { kind: 'replay', statusCode: existing.status_code ?? 200, body: existing.response_body ?? '' };
}

const UNIQUE_CODES = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505']);

export function isUniqueViolation(err: unknown): boolean {
  // By name as well: a second copy of @mikro-orm/core in a bundle must not turn replays into 500s.
  // Raw driver errors (hand-written SQL bypasses MikroORM's exception converter) by their code.
  if (err instanceof UniqueConstraintViolationException || (err as Error | null)?.name === 'UniqueConstraintViolationException') return true;
  if (err instanceof KeyTakenError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNIQUE_CODES.has(code);
}

export async function purgeExpiredKeys(db: Database, now = new Date()): Promise<number> {
  return retryOnLockConflict(() => db.em().nativeDelete(IdempotencyRecord, { expiresAt: { $lte: now } }));
}
