import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { IdempotencyRecord } from './entities/idempotency-record.entity.ts';
import type { Database } from './orm.ts';

/** An IN_FLIGHT claim older than this is taken to be from a crashed process and may be re-claimed. */
export const ABANDONED_AFTER_MS = 5 * 60_000;

export type ClaimResult =
  | { kind: 'claimed'; id: string }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'conflict' }
  | { kind: 'in_flight' };

/**
 * Claims (merchant, key) by INSERT against the unique constraint — never read-then-write — so of
 * any number of concurrent identical requests exactly one runs the handler, on SQLite and on
 * PostgreSQL, across processes.
 */
export async function claimKey(
  db: Database,
  input: { merchantId: string; key: string; fingerprint: string; ttlMs: number },
  now = new Date(),
): Promise<ClaimResult> {
  for (let round = 0; round < 3; round++) {
    const em = db.em();
    // Expired or abandoned claims give way first (a conditional delete, safe under concurrency).
    await em.nativeDelete(IdempotencyRecord, {
      merchantId: input.merchantId,
      key: input.key,
      $or: [{ expiresAt: { $lte: now } }, { state: 'IN_FLIGHT', createdAt: { $lte: new Date(now.getTime() - ABANDONED_AFTER_MS) } }],
    });
    try {
      const record = em.create(IdempotencyRecord, {
        merchantId: input.merchantId,
        key: input.key,
        fingerprint: input.fingerprint,
        state: 'IN_FLIGHT',
        statusCode: null,
        responseBody: null,
        createdAt: now,
        expiresAt: new Date(now.getTime() + input.ttlMs),
      });
      await em.flush();
      return { kind: 'claimed', id: record.id };
    } catch (err) {
      // By name as well: a second copy of @mikro-orm/core in a bundle must not turn replays into 500s.
      if (!(err instanceof UniqueConstraintViolationException) && (err as Error | null)?.name !== 'UniqueConstraintViolationException') throw err;
    }
    const existing = await db.em().findOne(IdempotencyRecord, { merchantId: input.merchantId, key: input.key });
    if (!existing) continue; // released between our insert and read: try again
    if (existing.fingerprint !== input.fingerprint) return { kind: 'conflict' };
    if (existing.state === 'IN_FLIGHT') return { kind: 'in_flight' };
    return { kind: 'replay', statusCode: existing.statusCode ?? 200, body: existing.responseBody ?? '' };
  }
  return { kind: 'in_flight' };
}

export async function completeKey(db: Database, id: string, statusCode: number, body: string): Promise<void> {
  await db.em().nativeUpdate(IdempotencyRecord, { id }, { state: 'COMPLETED', statusCode, responseBody: body });
}

/** The handler failed: the key becomes reusable (spec rule 4). */
export async function releaseKey(db: Database, id: string): Promise<void> {
  await db.em().nativeDelete(IdempotencyRecord, { id });
}

export async function purgeExpiredKeys(db: Database, now = new Date()): Promise<number> {
  return db.em().nativeDelete(IdempotencyRecord, { expiresAt: { $lte: now } });
}
