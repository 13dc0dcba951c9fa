import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { newTimeOrderedId } from '../domain/ids.ts';
import type { Executor, SqlValue } from './executor.ts';
import type { Database } from './orm.ts';
import { dateOf, rawQuery } from './raw-sql.ts';
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
  /** The merchant point's version the request was authenticated against (src/store/merchants.ts). */
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

function claimParams(input: ClaimInput, id: string, now: Date): SqlValue[] {
  return [id, input.merchantId, input.key, input.fingerprint, now, new Date(now.getTime() + input.ttlMs), input.merchantId, input.merchantVersion];
}

/**
 * Claims the key inside the write's transaction, the one that also does the work and stores the
 * answer (completeKey, src/store/lifecycle.ts): the key is absent (nothing happened, a crash rolled it all back) or
 * completed (replayable), never executed and retryable. A concurrent identical request meets the
 * unique index, then finds the key completed and replays it.
 * Throws a unique violation when the key exists (the caller reads it after rolling back, and an
 * expired key is deleted there), StaleMerchantError when the point changed.
 */
export async function claimKey(x: Executor, input: ClaimInput, now = new Date()): Promise<string> {
  const id = newTimeOrderedId(now.getTime());
  if ((await x.run(CLAIM_SQL[x.dialect], claimParams(input, id, now))) === 0) throw new StaleMerchantError('merchant point changed since it was cached');
  return id;
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
    await db.write((x) => x.run('delete from idempotency_record where id = ? and (expires_at <= ? or state = ?)', [existing.id, now, abandoned ? 'IN_FLIGHT' : '-']));
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
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNIQUE_CODES.has(code);
}

export async function purgeExpiredKeys(db: Database, now = new Date()): Promise<number> {
  return db.write((x) => x.run('delete from idempotency_record where expires_at <= ?', [now]));
}
