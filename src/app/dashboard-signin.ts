import { createHash, randomBytes } from 'node:crypto';
import type { Common } from '../common.ts';
import { GatewayError, UsageError } from '../domain/errors.ts';
import { DashboardError } from '../domain/dashboard-roles.ts';
import { decoyHash, hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH, verifyPassword } from '../domain/password-hash.ts';
import { newTotpSecret, otpauthUri, verifyTotp } from '../domain/totp.ts';
import { recordAudit } from '../store/audit-log.ts';
import { completeSetup, enrolTotp, setPassword, takeRecoveryCode, takeTotpStep, unusedRecoveryCodes, userByEmail, userById, userBySetupToken } from '../store/dashboard-users.ts';
import { clearFailures, recordFailure, throttleOf } from '../store/signin-throttle.ts';
import { startSession, type DashboardPrincipal } from './dashboard-session.ts';
import { tokenHash, type Client } from './dashboard-tokens.ts';

// Signing in (docs/dashboard.md#signing-in): a password, then a second factor (TOTP, a recovery
// code or a passkey); or a passkey alone. Failed attempts are counted per account and per IP, in
// the database, with a growing delay; no answer says whether an email exists.

const WRONG = 'The email or password is wrong';

/** No delay for the first 3 failures, then 1 s doubling each time, at most 15 minutes. */
export function failureDelayMs(failures: number): number {
  return failures <= 3 ? 0 : Math.min(1000 * 2 ** (failures - 4), 15 * 60_000);
}

function throttleKeys(email: string, client: Client): string[] {
  const h = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 64);
  return [`a:${h(email)}`, ...(client.ip ? [`i:${h(client.ip)}`] : [])];
}

async function refuseWhileBlocked(common: Common, keys: string[], now: Date): Promise<void> {
  for (const key of keys) {
    const state = await throttleOf(common.db, key);
    if (state && state.blockedUntil > now) {
      const seconds = Math.ceil((state.blockedUntil.getTime() - now.getTime()) / 1000);
      throw new GatewayError('RATE_LIMITED', `Too many failed sign-ins; try again in ${seconds} s`, { headers: { 'Retry-After': String(seconds) } });
    }
  }
}

async function countFailure(common: Common, keys: string[], now: Date): Promise<void> {
  for (const key of keys) await recordFailure(common.db, key, now, failureDelayMs);
}

export function checkPassword(password: string): string {
  if (password.length < PASSWORD_MIN_LENGTH) throw new UsageError(`the password needs at least ${PASSWORD_MIN_LENGTH} characters`);
  if (password.length > PASSWORD_MAX_LENGTH) throw new UsageError(`the password is longer than ${PASSWORD_MAX_LENGTH} characters`);
  return password;
}

/** Whether a set-up link can still be used (for the page; completing it checks again). */
export async function setupLinkValid(common: Common, token: string): Promise<boolean> {
  if (token.length > 100) return false;
  const user = await userBySetupToken(common.db, tokenHash(token));
  return Boolean(user?.active && user.setupExpiresAt && user.setupExpiresAt > new Date());
}

/** The set-up link's one use: the password is set and a session opens that still owes a second factor. */
export async function completeUserSetup(common: Common, input: { token: string; password: string; confirm: string }, client: Client): Promise<{ token: string }> {
  if (input.password !== input.confirm) throw new UsageError('the two passwords differ');
  checkPassword(input.password);
  const hash = await hashPassword(input.password);
  const userId = input.token.length <= 100 ? await completeSetup(common.db, tokenHash(input.token), hash, new Date(), client) : null;
  if (!userId) throw new DashboardError('SIGN_IN_REQUIRED', 400, 'This set-up link was used already or has expired; ask the operator for a new one');
  return { token: (await startSession(common, userId, 'mfa', client, null, null)).token };
}

/**
 * Email and password. The answer is the same for an unknown email and a wrong password (and takes
 * as long: a decoy hash is checked). A right password opens a session that still owes the second factor.
 */
export async function signInWithPassword(common: Common, input: { email: string; password: string }, client: Client, replaces: string | null): Promise<{ token: string }> {
  const email = input.email.trim().toLowerCase().slice(0, 320);
  const now = new Date();
  const keys = throttleKeys(email, client);
  await refuseWhileBlocked(common, keys, now);
  const user = email ? await userByEmail(common.db, email) : null;
  const password = input.password.slice(0, PASSWORD_MAX_LENGTH);
  const ok = await verifyPassword(password, user?.passwordHash ?? (await decoyHash()));
  if (!ok || !user?.active || !user.passwordHash) {
    await countFailure(common, keys, now);
    await recordAudit(common.db, { userId: user?.id ?? null, actor: email || '(none)', action: 'signin.failed', ...client, details: { step: 'password' } });
    throw new DashboardError('SIGN_IN_REQUIRED', 401, WRONG);
  }
  await clearFailures(common.db, keys[0]!);
  return { token: (await startSession(common, user.id, 'mfa', client, replaces, null)).token };
}

/** The second factor after the password: a TOTP code or a recovery code; the session is rotated to a full one. */
export async function verifySecondFactor(common: Common, principal: DashboardPrincipal, code: string, client: Client): Promise<{ token: string }> {
  const user = await userById(common.db, principal.userId);
  if (!user?.active) throw new DashboardError('SIGN_IN_REQUIRED', 401, 'Sign in to the dashboard');
  const now = new Date();
  const keys = throttleKeys(user.email, client);
  await refuseWhileBlocked(common, keys, now);
  const clean = code.replace(/\s/g, '');
  let how: string | null = null;
  if (user.totpSecretEnc && /^\d{6}$/.test(clean)) {
    const secret = common.box.open(user.totpSecretEnc, `totp:${user.id}`);
    const step = verifyTotp(secret, clean, now.getTime(), user.totpLastStep);
    if (step !== null && (await takeTotpStep(common.db, user.id, step))) how = 'totp';
  } else if (/^[a-z0-9]{5}-?[a-z0-9]{5}$/i.test(clean)) {
    if (await takeRecoveryCode(common.db, user.id, recoveryHash(clean))) how = 'recovery-code';
  }
  if (!how) {
    await countFailure(common, keys, now);
    await recordAudit(common.db, { userId: user.id, actor: user.email, action: 'signin.failed', ...client, details: { step: 'second-factor' } });
    throw new DashboardError('SECOND_FACTOR_REQUIRED', 401, 'That code is not right');
  }
  await clearFailures(common.db, keys[0]!);
  return startSession(common, user.id, 'full', client, principal.sessionId, { userId: user.id, actor: user.email, action: 'signin', ...client, details: { with: `password+${how}` } });
}

// TOTP enrolment: the new secret travels sealed in the form (bound to the session), so nothing is
// stored until a code from the authenticator app proves it was taken.

export function startTotpEnrolment(common: Common, principal: DashboardPrincipal): { secret: string; uri: string; sealed: string } {
  const secret = newTotpSecret();
  return { secret, uri: otpauthUri(secret, principal.email, 'chaingate'), sealed: common.box.seal(secret, `totp-enrol:${principal.sessionId}`) };
}

const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

function recoveryHash(code: string): string {
  return createHash('sha256').update(code.replace('-', '').toLowerCase()).digest('hex');
}

/**
 * Confirms TOTP with a first code: the secret is stored sealed, 10 recovery codes are made (shown
 * once, stored hashed), every other session of the user ends and this one is rotated to a full one.
 */
export async function confirmTotpEnrolment(common: Common, principal: DashboardPrincipal, input: { sealed: string; code: string }, client: Client): Promise<{ token: string; recoveryCodes: string[] }> {
  let secret: string;
  try {
    secret = common.box.open(input.sealed, `totp-enrol:${principal.sessionId}`);
  } catch {
    throw new UsageError('the enrolment form is stale; start again');
  }
  if (principal.stage !== 'full' && (principal.hasTotp || principal.passkeys > 0)) {
    throw new DashboardError('SECOND_FACTOR_REQUIRED', 401, 'Sign in with your second factor first');
  }
  const now = Date.now();
  const step = verifyTotp(secret, input.code.replace(/\s/g, ''), now, null);
  if (step === null) throw new UsageError('that code is not right; check the time on your device and try the next one');
  const codes = Array.from({ length: 10 }, newRecoveryCode);
  const audit = { userId: principal.userId, actor: principal.email, action: 'totp.enrol', ...client };
  await enrolTotp(common.db, principal.userId, common.box.seal(secret, `totp:${principal.userId}`), step, codes.map(recoveryHash), principal.sessionId, audit);
  const { token } = await startSession(common, principal.userId, 'full', client, principal.sessionId, null);
  return { token, recoveryCodes: codes };
}

export async function changePassword(common: Common, principal: DashboardPrincipal, input: { current: string; password: string; confirm: string }, client: Client): Promise<{ token: string }> {
  const user = await userById(common.db, principal.userId);
  if (!user?.passwordHash || !(await verifyPassword(input.current.slice(0, PASSWORD_MAX_LENGTH), user.passwordHash))) throw new UsageError('the current password is wrong');
  if (input.password !== input.confirm) throw new UsageError('the two passwords differ');
  checkPassword(input.password);
  // Every session of the user ends with the change; this browser gets a new one.
  await setPassword(common.db, user.id, await hashPassword(input.password), { userId: user.id, actor: user.email, action: 'password.change', ...client });
  return { token: (await startSession(common, user.id, 'full', client, null, null)).token };
}

/** What the account page shows of the user's own factors. */
export async function accountInfo(common: Common, principal: DashboardPrincipal): Promise<{ hasTotp: boolean; passkeys: number; recoveryLeft: number }> {
  return { hasTotp: principal.hasTotp, passkeys: principal.passkeys, recoveryLeft: await unusedRecoveryCodes(common.db, principal.userId) };
}
