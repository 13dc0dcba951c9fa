import type { Common } from '../common.ts';
import { ALL_POINTS, DashboardError, isAdmin, isRole, type Grant, type Role } from '../domain/dashboard-roles.ts';
import { UsageError } from '../domain/errors.ts';
import { createUser, listUsers, resetSecondFactors, setGrants, setUserActive, userByEmail, userById, type DashboardUserRecord } from '../store/dashboard-users.ts';
import { getMerchantOrThrow } from '../store/merchants.ts';
import type { AuditInput } from '../store/audit-log.ts';
import type { DashboardPrincipal } from './dashboard-session.ts';
import { newToken, tokenHash, type Client } from './dashboard-tokens.ts';

// Dashboard users: made by the operator (`chaingate users …`) or by an owner in the dashboard.
// There is no default account: a new user gets a one-time set-up link (24 h, single use).

export const SETUP_LINK_HOURS = 24;

export interface UserView {
  id: string;
  email: string;
  active: boolean;
  grants: Grant[];
  passwordSet: boolean;
  totp: boolean;
  passkeys: number;
  setupPending: boolean;
  createdAt: string;
}

export function userView(u: DashboardUserRecord): UserView {
  return {
    id: u.id,
    email: u.email,
    active: u.active,
    grants: u.grants,
    passwordSet: u.passwordHash !== null,
    totp: u.totpSecretEnc !== null,
    passkeys: u.passkeys,
    setupPending: u.setupExpiresAt !== null,
    createdAt: u.createdAt.toISOString(),
  };
}

export function checkEmail(value: string): string {
  const email = value.trim().toLowerCase();
  if (email.length > 320 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError(`${JSON.stringify(value)} is not an email address`);
  return email;
}

export function checkRole(value: string): Role {
  if (!isRole(value)) throw new UsageError(`unknown role ${JSON.stringify(value)} (owner, manager, accountant or viewer)`);
  return value;
}

/** Where a set-up link points: dashboard.publicUrl, else the listener serving the dashboard. */
export function dashboardBaseUrl(config: Common['config']): string {
  if (config.dashboard.publicUrl) return config.dashboard.publicUrl.replace(/\/+$/, '');
  const host = config.dashboard.host ?? config.server.host;
  const port = config.dashboard.port ?? config.server.port;
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

function setupLink(config: Common['config'], token: string): string {
  // In the query, not the path: the per-request log line leaves the query out.
  return `${dashboardBaseUrl(config)}/dashboard/setup?token=${token}`;
}

async function checkPoints(common: Common, pointIds: readonly string[]): Promise<void> {
  for (const id of pointIds) if (id !== ALL_POINTS) await getMerchantOrThrow(common.db, id);
}

/** A new user with its grants; the set-up link is returned once (only its hash is stored). */
export async function createDashboardUser(
  common: Common,
  input: { email: string; role: Role; pointIds: string[] },
  audit: Omit<AuditInput, 'action'>,
): Promise<{ user: UserView; setupLink: string; expiresAt: string }> {
  await checkPoints(common, input.pointIds);
  const token = newToken();
  const expiresAt = new Date(Date.now() + SETUP_LINK_HOURS * 3_600_000);
  const grants = (input.pointIds.length ? input.pointIds : [ALL_POINTS]).map((pointId) => ({ pointId, role: input.role }));
  const user = await createUser(common.db, { email: input.email, grants, setupTokenHash: tokenHash(token), setupExpiresAt: expiresAt, audit: { ...audit, action: 'user.create' } });
  return { user: userView(user), setupLink: setupLink(common.config, token), expiresAt: expiresAt.toISOString() };
}

export async function listDashboardUsers(common: Common): Promise<UserView[]> {
  return (await listUsers(common.db)).map(userView);
}

async function userByRef(common: Common, ref: string): Promise<DashboardUserRecord> {
  const user = ref.includes('@') ? await userByEmail(common.db, ref.trim().toLowerCase()) : await userById(common.db, ref);
  if (!user) throw new UsageError(`no dashboard user ${JSON.stringify(ref)}`);
  return user;
}

export async function setDashboardUserActive(common: Common, ref: string, active: boolean, audit: Omit<AuditInput, 'action'>): Promise<UserView> {
  const user = await userByRef(common, ref);
  await setUserActive(common.db, user.id, active, { ...audit, action: active ? 'user.enable' : 'user.disable' });
  return userView((await userById(common.db, user.id))!);
}

/**
 * For the user locked out of their second factor: password, TOTP, recovery codes and passkeys are
 * cleared, sessions end, and a new set-up link lets them start again.
 */
export async function resetDashboardUser2fa(common: Common, ref: string, audit: Omit<AuditInput, 'action'>): Promise<{ user: UserView; setupLink: string; expiresAt: string }> {
  const user = await userByRef(common, ref);
  const token = newToken();
  const expiresAt = new Date(Date.now() + SETUP_LINK_HOURS * 3_600_000);
  await resetSecondFactors(common.db, user.id, tokenHash(token), expiresAt, { ...audit, action: 'user.reset-2fa' });
  return { user: userView((await userById(common.db, user.id))!), setupLink: setupLink(common.config, token), expiresAt: expiresAt.toISOString() };
}

/**
 * Replaces a user's roles (`pointIds` empty: every point). A change of privilege: every session of
 * the user ends, so the next request signs in under the new roles.
 */
export async function setDashboardUserRole(common: Common, ref: string, input: { role: Role; pointIds: string[] }, audit: Omit<AuditInput, 'action'>): Promise<UserView> {
  const user = await userByRef(common, ref);
  await checkPoints(common, input.pointIds);
  const grants = (input.pointIds.length ? input.pointIds : [ALL_POINTS]).map((pointId) => ({ pointId, role: input.role }));
  await setGrants(common.db, user.id, grants, { ...audit, action: 'user.grant' });
  return userView((await userById(common.db, user.id))!);
}

// The same, from the dashboard: only an owner of every point manages users.

function requireAdmin(principal: DashboardPrincipal): void {
  if (!isAdmin(principal.grants)) throw new DashboardError('FORBIDDEN', 403, 'Only an owner of every point manages users');
}

function actorOf(principal: DashboardPrincipal, client: Client): Omit<AuditInput, 'action'> {
  return { userId: principal.userId, actor: principal.email, ...client };
}

export async function inviteUser(common: Common, principal: DashboardPrincipal, input: { email: string; role: string; pointIds: string[] }, client: Client) {
  requireAdmin(principal);
  return createDashboardUser(common, { email: checkEmail(input.email), role: checkRole(input.role), pointIds: input.pointIds }, actorOf(principal, client));
}

export async function usersForDashboard(common: Common, principal: DashboardPrincipal): Promise<UserView[]> {
  requireAdmin(principal);
  return listDashboardUsers(common);
}

export async function setUserActiveFromDashboard(common: Common, principal: DashboardPrincipal, userId: string, active: boolean, client: Client): Promise<UserView> {
  requireAdmin(principal);
  if (userId === principal.userId) throw new UsageError('you cannot disable yourself');
  return setDashboardUserActive(common, userId, active, actorOf(principal, client));
}
