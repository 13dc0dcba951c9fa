import { createHash } from 'node:crypto';
import { GatewayError } from '../domain/errors.ts';
import type { Executor } from '../store/executor.ts';
import { completeKey } from '../store/lifecycle.ts';
import { claimKey, existingKey, isUniqueViolation, StaleMerchantError } from '../store/idempotency.ts';
import type { Database } from '../store/orm.ts';

// The merchant gateway's idempotent write (spec rule 4), the one protocol every write route uses:
// the key's claim, the work and the stored answer commit in one transaction, so a crash leaves the
// key absent and nothing done, or the key completed and replayable; then the answer is sent. Work
// that throws rolls it all back and frees the key. A key that exists replays its stored answer, or
// is refused when it was used for another request or is still being processed.

export interface WriteAnswer {
  status: number;
  body: string;
}

/** Who claims which key for which request (the route's part, from the authenticated request). */
export interface WriteClaim {
  merchantId: string;
  /** The merchant point's version the request was authenticated against. */
  merchantVersion: number;
  key: string;
  /** The hash of the method, path and body: the same key for another request is a conflict. */
  fingerprint: string;
  ttlMs: number;
}

/** The request side of an idempotent write, as a route gives it to a use case. */
export interface WriteRequest {
  /** The claim for the request as authenticated now. */
  claim(): WriteClaim;
  /** The answer to store and send when the work returns `data`. */
  answer(status: number, data: unknown): WriteAnswer;
  /**
   * The merchant point changed since its cached copy authenticated the request (nothing was
   * written): authenticate again from the database, so that the next claim() is fresh.
   */
  reauthenticate(): Promise<void>;
}

/** What an idempotent write answers, and whether it replays a stored answer. */
export interface WriteOutcome {
  answer: WriteAnswer;
  replayed: boolean;
}

/** The fingerprint of a write (spec rule 4): its method, path and body; one key, one request. */
export function writeFingerprint(method: string, path: string, body: Uint8Array): string {
  const bodyHash = createHash('sha256').update(body).digest('hex');
  return createHash('sha256').update(`${method}\n${path}\n${bodyHash}`).digest('hex');
}

const inFlight = () => new GatewayError('IDEMPOTENCY_KEY_CONFLICT', 'A request with this Idempotency-Key is still being processed; back off and retry');

/**
 * Runs the write once, or replays the key's stored answer (`replayed`): `work` runs in the write's
 * transaction and its data, answered with `status`, is stored with the key.
 */
export async function idempotentWrite(db: Database, request: WriteRequest, status: number, work: (x: Executor) => Promise<unknown>): Promise<WriteOutcome> {
  for (let round = 0; round < 4; round++) {
    const claim = request.claim();
    try {
      const answer = await db.write(async (x) => {
        const id = await claimKey(x, claim);
        const a = request.answer(status, await work(x));
        await completeKey(x, id, a.status, a.body);
        return a;
      });
      return { answer, replayed: false };
    } catch (err) {
      if (err instanceof StaleMerchantError) {
        await request.reauthenticate();
        continue;
      }
      if (!isUniqueViolation(err)) throw err;
    }
    const stored = await storedAnswer(db, claim);
    if (stored) return { answer: stored, replayed: true };
  }
  throw inFlight();
}

/** The stored answer for a key that exists already, or null when it is free (again). */
export async function storedAnswer(db: Database, claim: Pick<WriteClaim, 'merchantId' | 'key' | 'fingerprint'>): Promise<WriteAnswer | null> {
  const existing = await existingKey(db, claim);
  if (!existing) return null; // released (a failed handler) or expired between our insert and read: try again
  switch (existing.kind) {
    case 'conflict':
      throw new GatewayError('IDEMPOTENCY_KEY_CONFLICT', 'Idempotency-Key was already used for a different request');
    case 'in_flight':
      throw inFlight();
    case 'replay':
      return { status: existing.statusCode, body: existing.body };
    case 'claimed':
      return null;
  }
}
