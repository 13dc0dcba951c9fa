import type { Common } from '../common.ts';
import { ALL_POINTS, DashboardError } from '../domain/dashboard-roles.ts';
import type { SessionPrincipal } from '../domain/principal.ts';
import { userById, type DashboardUserRecord } from '../store/dashboard-users.ts';
import { endSession, openSession, sessionByTokenHash, touchSession, type SessionRecord, type SessionStage } from '../store/dashboard-sessions.ts';
import { listMerchants } from '../store/merchants.ts';
import type { AuditInput } from '../store/audit-log.ts';
import { newToken, tokenHash, type Client } from './dashboard-tokens.ts';

// Dashboard sessions: what the session scheme (src/app/session-scheme.ts) checks a cookie's token
// against, and how sessions start and end. Sessions share nothing with the gateway's signed
// requests: a session never authenticates /api/v1, a key never authenticates /dashboard.

/** The dashboard's principal: the session scheme's answer (src/domain/principal.ts). */
export type DashboardPrincipal = SessionPrincipal;

/** Only this many ms between two writes of a session's last-seen time (idle timeout precision). */
const TOUCH_EVERY_MS = 30_000;

async function principalOf(common: Pick<Common, 'db'>, user: DashboardUserRecord, session: SessionRecord): Promise<DashboardPrincipal> {
  const everyPoint = user.grants.some((g) => g.pointId === ALL_POINTS);
  return {
    kind: 'session',
    merchantPointIds: everyPoint ? (await listMerchants(common.db)).map((m) => m.id) : user.grants.map((g) => g.pointId),
    sessionId: session.id,
    userId: user.id,
    email: user.email,
    grants: user.grants,
    stage: session.stage,
    csrfToken: session.csrfToken,
    hasTotp: user.totpSecretEnc !== null,
    passkeys: user.passkeys,
  };
}

export function idleMs(common: Pick<Common, 'config'>): number {
  return common.config.dashboard.idleTimeoutMinutes * 60_000;
}

/**
 * The session a cookie token names, or null: unknown (revoked, rotated away), past its absolute
 * end or idle too long, or its user disabled. `stage: 'full'` is what every page but the second
 * factor's needs.
 */
export async function sessionOf(common: Pick<Common, 'config' | 'db'>, token: string | undefined, now = new Date()): Promise<DashboardPrincipal | null> {
  if (!token || token.length > 100) return null;
  const session = await sessionByTokenHash(common.db, tokenHash(token));
  if (!session) return null;
  if (session.expiresAt <= now || session.lastSeenAt.getTime() + idleMs(common) <= now.getTime()) {
    await endSession(common.db, session.id, null);
    return null;
  }
  const user = await userById(common.db, session.userId);
  if (!user?.active) return null;
  if (now.getTime() - session.lastSeenAt.getTime() > TOUCH_EVERY_MS) await touchSession(common.db, session.id, now);
  return principalOf(common, user, session);
}

/** A live session, or SIGN_IN_REQUIRED (401). */
export async function authenticateSession(common: Pick<Common, 'config' | 'db'>, token: string | undefined): Promise<DashboardPrincipal> {
  const principal = await sessionOf(common, token);
  if (!principal) throw new DashboardError('SIGN_IN_REQUIRED', 401, 'Sign in to the dashboard');
  return principal;
}

/** Every page but the second factor's needs a session that gave it (`full`). */
export function requireStage(principal: DashboardPrincipal, stage: SessionStage): DashboardPrincipal {
  if (stage === 'full' && principal.stage !== 'full') throw new DashboardError('SECOND_FACTOR_REQUIRED', 401, 'The second factor is still needed');
  return principal;
}

/** A new session token for a user (the cookie's value); `replaces` ends the old one in the same write. */
export async function startSession(
  common: Pick<Common, 'config' | 'db'>,
  userId: string,
  stage: SessionStage,
  client: Client,
  replaces: string | null,
  audit: AuditInput | null,
): Promise<{ token: string; csrfToken: string }> {
  const token = newToken();
  const csrfToken = newToken();
  const expiresAt = new Date(Date.now() + common.config.dashboard.absoluteTimeoutHours * 3_600_000);
  await openSession(common.db, { tokenHash: tokenHash(token), userId, stage, csrfToken, ip: client.ip, userAgent: client.userAgent, expiresAt, replaces }, audit);
  return { token, csrfToken };
}

export async function signOut(common: Pick<Common, 'db'>, principal: DashboardPrincipal, client: Client): Promise<void> {
  await endSession(common.db, principal.sessionId, { userId: principal.userId, actor: principal.email, action: 'signout', ...client });
}
