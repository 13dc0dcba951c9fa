import { newId } from '../domain/ids.ts';
import { insertAudit, type AuditInput } from './audit-log.ts';
import type { Database } from './orm.ts';
import { dateOf, nullableDate, poolReader } from './raw-sql.ts';

// Dashboard sessions: rows keyed by the SHA-256 of the cookie's token (the token itself is never
// stored). Any serve process on the same database sees a session end the moment its row is gone.

export type SessionStage = 'mfa' | 'full';

export interface SessionRecord {
  id: string;
  userId: string;
  stage: SessionStage;
  csrfToken: string;
  challenge: string | null;
  createdAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
}

interface SessionRow {
  id: string;
  user_id: string;
  stage: string;
  csrf_token: string;
  challenge: string | null;
  created_at: unknown;
  last_seen_at: unknown;
  expires_at: unknown;
}

/**
 * A new session for a user, in place of `replaces` (rotation on sign-in and on privilege change:
 * the old token stops working in the same transaction), with its audit row.
 */
export async function openSession(
  db: Database,
  input: { tokenHash: string; userId: string; stage: SessionStage; csrfToken: string; ip: string | null; userAgent: string | null; expiresAt: Date; replaces: string | null },
  audit: AuditInput | null,
): Promise<string> {
  const id = newId();
  const now = new Date();
  await db.write(async (x) => {
    if (input.replaces) await x.run('delete from dashboard_session where id = ?', [input.replaces]);
    await x.run('insert into dashboard_session (id, token_hash, user_id, stage, csrf_token, challenge, ip, user_agent, created_at, last_seen_at, expires_at) values (?, ?, ?, ?, ?, null, ?, ?, ?, ?, ?)', [
      id, input.tokenHash, input.userId, input.stage, input.csrfToken, input.ip?.slice(0, 64) ?? null, input.userAgent?.slice(0, 512) ?? null, now, now, input.expiresAt,
    ]);
    if (audit) await insertAudit(x, audit);
  });
  return id;
}

export async function sessionByTokenHash(db: Database, tokenHash: string): Promise<SessionRecord | null> {
  const r = await poolReader(db).get<SessionRow>('select id, user_id, stage, csrf_token, challenge, created_at, last_seen_at, expires_at from dashboard_session where token_hash = ?', [tokenHash]);
  if (!r) return null;
  return {
    id: r.id,
    userId: r.user_id,
    stage: r.stage === 'full' ? 'full' : 'mfa',
    csrfToken: r.csrf_token,
    challenge: r.challenge,
    createdAt: dateOf(r.created_at),
    lastSeenAt: dateOf(r.last_seen_at),
    expiresAt: nullableDate(r.expires_at) ?? new Date(0),
  };
}

export async function touchSession(db: Database, id: string, now: Date): Promise<void> {
  await db.write(async (x) => {
    await x.run('update dashboard_session set last_seen_at = ? where id = ?', [now, id]);
  });
}

export async function setSessionChallenge(db: Database, id: string, challenge: string | null): Promise<void> {
  await db.write(async (x) => {
    await x.run('update dashboard_session set challenge = ? where id = ?', [challenge, id]);
  });
}

/** Takes the session's pending challenge (single use); null when there was none. */
export async function takeSessionChallenge(db: Database, id: string): Promise<string | null> {
  return db.write(async (x) => {
    const row = await x.get<{ challenge: string | null }>('select challenge from dashboard_session where id = ?', [id]);
    if (!row?.challenge) return null;
    await x.run('update dashboard_session set challenge = null where id = ? and challenge = ?', [id, row.challenge]);
    return row.challenge;
  });
}

export async function endSession(db: Database, id: string, audit: AuditInput | null): Promise<void> {
  await db.write(async (x) => {
    await x.run('delete from dashboard_session where id = ?', [id]);
    if (audit) await insertAudit(x, audit);
  });
}

/**
 * Serve's scheduled clean-up: sessions past their absolute end or idle too long, passkey challenges
 * past their time, and sign-in failure counts a day after their delay ended.
 */
export async function purgeDashboardState(db: Database, now: Date, idleMs: number): Promise<number> {
  return db.write(async (x) => {
    let n = await x.run('delete from dashboard_session where expires_at <= ? or last_seen_at <= ?', [now, new Date(now.getTime() - idleMs)]);
    n += await x.run('delete from webauthn_challenge where expires_at <= ?', [now]);
    n += await x.run('delete from signin_throttle where blocked_until <= ?', [new Date(now.getTime() - 86_400_000)]);
    return n;
  });
}
