import { newId } from '../domain/ids.ts';
import { ALL_POINTS, isRole, type Grant, type Role } from '../domain/dashboard-roles.ts';
import { UsageError } from '../domain/errors.ts';
import { insertAudit, type AuditInput } from './audit-log.ts';
import type { Reader, SqlValue } from './executor.ts';
import type { Database } from './orm.ts';
import { boolOf, dateOf, jsonOf, nullableDate, poolReader } from './raw-sql.ts';

// Dashboard users, their grants, TOTP secrets (sealed), recovery codes (hashed) and passkeys.
// Every change that ends a user's sessions deletes them in the same transaction.

export interface DashboardUserRecord {
  id: string;
  email: string;
  passwordHash: string | null;
  active: boolean;
  totpSecretEnc: string | null;
  totpLastStep: number | null;
  setupExpiresAt: Date | null;
  createdAt: Date;
  grants: Grant[];
  passkeys: number;
}

interface UserRow {
  id: string;
  email: string;
  password_hash: string | null;
  active: unknown;
  totp_secret_enc: string | null;
  totp_last_step: unknown;
  setup_expires_at: unknown;
  created_at: unknown;
}

const COLUMNS = 'id, email, password_hash, active, totp_secret_enc, totp_last_step, setup_expires_at, created_at';

async function withDetails(r: Reader, row: UserRow | undefined): Promise<DashboardUserRecord | null> {
  if (!row) return null;
  const grants = await r.all<{ point_id: string; role: string }>('select point_id, role from dashboard_grant where user_id = ? order by point_id', [row.id]);
  const keys = await r.get<{ n: unknown }>('select count(*) as n from webauthn_credential where user_id = ?', [row.id]);
  return {
    id: row.id,
    email: row.email,
    passwordHash: row.password_hash,
    active: boolOf(row.active),
    totpSecretEnc: row.totp_secret_enc,
    totpLastStep: row.totp_last_step === null || row.totp_last_step === undefined ? null : Number(row.totp_last_step),
    setupExpiresAt: nullableDate(row.setup_expires_at),
    createdAt: dateOf(row.created_at),
    grants: grants.filter((g) => isRole(g.role)).map((g) => ({ pointId: g.point_id, role: g.role as Role })),
    passkeys: Number(keys?.n ?? 0),
  };
}

async function userIn(r: Reader, id: string): Promise<DashboardUserRecord | null> {
  return withDetails(r, await r.get<UserRow>(`select ${COLUMNS} from dashboard_user where id = ?`, [id]));
}

export function userById(db: Database, id: string): Promise<DashboardUserRecord | null> {
  return userIn(poolReader(db), id);
}

export async function userByEmail(db: Database, email: string): Promise<DashboardUserRecord | null> {
  const r = poolReader(db);
  return withDetails(r, await r.get<UserRow>(`select ${COLUMNS} from dashboard_user where email = ?`, [email]));
}

export async function userBySetupToken(db: Database, tokenHash: string): Promise<DashboardUserRecord | null> {
  const r = poolReader(db);
  return withDetails(r, await r.get<UserRow>(`select ${COLUMNS} from dashboard_user where setup_token_hash = ?`, [tokenHash]));
}

export async function listUsers(db: Database): Promise<DashboardUserRecord[]> {
  const r = poolReader(db);
  const rows = await r.all<UserRow>(`select ${COLUMNS} from dashboard_user order by created_at, id`);
  const out: DashboardUserRecord[] = [];
  for (const row of rows) out.push((await withDetails(r, row))!);
  return out;
}

export async function createUser(db: Database, input: { email: string; grants: Grant[]; setupTokenHash: string; setupExpiresAt: Date; audit: AuditInput }): Promise<DashboardUserRecord> {
  const id = newId();
  const now = new Date();
  return db.write(async (x) => {
    if (await x.get('select id from dashboard_user where email = ?', [input.email])) throw new UsageError(`a dashboard user ${input.email} exists already`);
    await x.run('insert into dashboard_user (id, email, password_hash, active, totp_secret_enc, setup_token_hash, setup_expires_at, totp_last_step, created_at, updated_at) values (?, ?, null, ?, null, ?, ?, null, ?, ?)', [
      id, input.email, true, input.setupTokenHash, input.setupExpiresAt, now, now,
    ]);
    for (const g of input.grants) await x.run('insert into dashboard_grant (id, user_id, point_id, role, created_at) values (?, ?, ?, ?, ?)', [newId(), id, g.pointId, g.role, now]);
    await insertAudit(x, { ...input.audit, details: { ...input.audit.details, userId: id, email: input.email, grants: input.grants } });
    return (await userIn(x, id))!;
  });
}

/** Replaces a user's grants; the user's sessions end (a privilege change). */
export async function setGrants(db: Database, userId: string, grants: Grant[], audit: AuditInput): Promise<void> {
  await db.write(async (x) => {
    await x.run('delete from dashboard_grant where user_id = ?', [userId]);
    const now = new Date();
    for (const g of grants) await x.run('insert into dashboard_grant (id, user_id, point_id, role, created_at) values (?, ?, ?, ?, ?)', [newId(), userId, g.pointId, g.role, now]);
    await x.run('delete from dashboard_session where user_id = ?', [userId]);
    await insertAudit(x, { ...audit, details: { ...audit.details, userId, grants } });
  });
}

/**
 * Takes the set-up token (single use: only the statement that clears it wins) and sets the password.
 * False when the token was already used or has expired.
 */
export async function completeSetup(db: Database, tokenHash: string, passwordHash: string, now: Date, audit: Omit<AuditInput, 'userId' | 'actor' | 'action'>): Promise<string | null> {
  return db.write(async (x) => {
    const row = await x.get<{ id: string; email: string }>('select id, email from dashboard_user where setup_token_hash = ? and setup_expires_at > ? and active = ?', [tokenHash, now, true]);
    if (!row) return null;
    if (!(await x.run('update dashboard_user set setup_token_hash = null, setup_expires_at = null, password_hash = ?, updated_at = ? where id = ? and setup_token_hash = ?', [passwordHash, now, row.id, tokenHash]))) return null;
    await x.run('delete from dashboard_session where user_id = ?', [row.id]);
    await insertAudit(x, { ...audit, userId: row.id, actor: row.email, action: 'user.setup' });
    return row.id;
  });
}

export async function setPassword(db: Database, userId: string, passwordHash: string, audit: AuditInput): Promise<void> {
  await db.write(async (x) => {
    await x.run('update dashboard_user set password_hash = ?, updated_at = ? where id = ?', [passwordHash, new Date(), userId]);
    await x.run('delete from dashboard_session where user_id = ?', [userId]);
    await insertAudit(x, audit);
  });
}

export async function setUserActive(db: Database, userId: string, active: boolean, audit: AuditInput): Promise<boolean> {
  return db.write(async (x) => {
    const n = await x.run('update dashboard_user set active = ?, updated_at = ? where id = ?', [active, new Date(), userId]);
    if (!n) return false;
    if (!active) await x.run('delete from dashboard_session where user_id = ?', [userId]);
    await insertAudit(x, { ...audit, details: { ...audit.details, userId } });
    return true;
  });
}

/**
 * Enrols TOTP with its recovery codes (hashes) in one transaction; every other session of the user
 * ends (a 2FA change), `keepSession` is rotated by the caller.
 */
export async function enrolTotp(db: Database, userId: string, totpSecretEnc: string, step: number, codeHashes: string[], keepSessionId: string | null, audit: AuditInput): Promise<void> {
  await db.write(async (x) => {
    const now = new Date();
    await x.run('update dashboard_user set totp_secret_enc = ?, totp_last_step = ?, updated_at = ? where id = ?', [totpSecretEnc, step, now, userId]);
    await x.run('delete from recovery_code where user_id = ?', [userId]);
    for (const h of codeHashes) await x.run('insert into recovery_code (id, user_id, code_hash, used_at, created_at) values (?, ?, ?, null, ?)', [newId(), userId, h, now]);
    await endOtherSessions(x, userId, keepSessionId);
    await insertAudit(x, audit);
  });
}

/** Records a TOTP step as used; false when that step (or a later one) was used already. */
export async function takeTotpStep(db: Database, userId: string, step: number): Promise<boolean> {
  return db.write(async (x) => (await x.run('update dashboard_user set totp_last_step = ? where id = ? and (totp_last_step is null or totp_last_step < ?)', [step, userId, step])) === 1);
}

/** Uses up one recovery code; false when it is unknown or used. */
export async function takeRecoveryCode(db: Database, userId: string, codeHash: string): Promise<boolean> {
  return db.write(async (x) => (await x.run('update recovery_code set used_at = ? where user_id = ? and code_hash = ? and used_at is null', [new Date(), userId, codeHash])) === 1);
}

export async function unusedRecoveryCodes(db: Database, userId: string): Promise<number> {
  const row = await poolReader(db).get<{ n: unknown }>('select count(*) as n from recovery_code where user_id = ? and used_at is null', [userId]);
  return Number(row?.n ?? 0);
}

/** `users reset-2fa`: TOTP, recovery codes and passkeys gone, sessions ended, a new set-up link. */
export async function resetSecondFactors(db: Database, userId: string, tokenHash: string, expiresAt: Date, audit: AuditInput): Promise<void> {
  await db.write(async (x) => {
    await x.run('update dashboard_user set totp_secret_enc = null, totp_last_step = null, password_hash = null, setup_token_hash = ?, setup_expires_at = ?, updated_at = ? where id = ?', [tokenHash, expiresAt, new Date(), userId]);
    await x.run('delete from recovery_code where user_id = ?', [userId]);
    await x.run('delete from webauthn_credential where user_id = ?', [userId]);
    await x.run('delete from dashboard_session where user_id = ?', [userId]);
    await insertAudit(x, { ...audit, details: { ...audit.details, userId } });
  });
}

async function endOtherSessions(x: Pick<Reader, 'get'> & { run(sql: string, params?: SqlValue[]): Promise<number> }, userId: string, keepSessionId: string | null): Promise<void> {
  if (keepSessionId) await x.run('delete from dashboard_session where user_id = ? and id <> ?', [userId, keepSessionId]);
  else await x.run('delete from dashboard_session where user_id = ?', [userId]);
}

// Passkeys

export interface PasskeyRecord {
  id: string;
  userId: string;
  credentialId: string;
  publicKey: string;
  counter: number;
  transports: string[] | null;
  name: string;
  createdAt: Date;
  lastUsedAt: Date | null;
}

interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: string;
  public_key: string;
  counter: unknown;
  transports: unknown;
  name: string;
  created_at: unknown;
  last_used_at: unknown;
}

const PASSKEY_COLUMNS = 'id, user_id, credential_id, public_key, counter, transports, name, created_at, last_used_at';

function passkeyOf(r: PasskeyRow): PasskeyRecord {
  return {
    id: r.id,
    userId: r.user_id,
    credentialId: r.credential_id,
    publicKey: r.public_key,
    counter: Number(r.counter),
    transports: jsonOf<string[]>(r.transports),
    name: r.name,
    createdAt: dateOf(r.created_at),
    lastUsedAt: nullableDate(r.last_used_at),
  };
}

export async function passkeysOf(db: Database, userId: string): Promise<PasskeyRecord[]> {
  return (await poolReader(db).all<PasskeyRow>(`select ${PASSKEY_COLUMNS} from webauthn_credential where user_id = ? order by created_at`, [userId])).map(passkeyOf);
}

export async function passkeyByCredentialId(db: Database, credentialId: string): Promise<PasskeyRecord | null> {
  const row = await poolReader(db).get<PasskeyRow>(`select ${PASSKEY_COLUMNS} from webauthn_credential where credential_id = ?`, [credentialId]);
  return row ? passkeyOf(row) : null;
}

export async function addPasskey(db: Database, input: Omit<PasskeyRecord, 'id' | 'createdAt' | 'lastUsedAt'>, keepSessionId: string | null, audit: AuditInput): Promise<void> {
  await db.write(async (x) => {
    await x.run(`insert into webauthn_credential (${PASSKEY_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, null)`, [
      newId(), input.userId, input.credentialId, input.publicKey, input.counter, input.transports ? JSON.stringify(input.transports) : null, input.name, new Date(),
    ]);
    await endOtherSessions(x, input.userId, keepSessionId);
    await insertAudit(x, audit);
  });
}

/** Records a use; false when the counter went backwards (a cloned authenticator). */
export async function recordPasskeyUse(db: Database, id: string, counter: number): Promise<boolean> {
  return db.write(async (x) => (await x.run('update webauthn_credential set counter = ?, last_used_at = ? where id = ? and (counter < ? or (counter = 0 and ? = 0))', [counter, new Date(), id, counter, counter])) === 1);
}

/** A passkey sign-in challenge, kept until used or expired. */
export async function storeChallenge(db: Database, challenge: string, expiresAt: Date): Promise<void> {
  await db.write(async (x) => {
    await x.run('delete from webauthn_challenge where expires_at < ?', [new Date()]);
    await x.run('insert into webauthn_challenge (challenge, expires_at) values (?, ?)', [challenge, expiresAt]);
  });
}

export async function takeChallenge(db: Database, challenge: string): Promise<boolean> {
  return db.write(async (x) => (await x.run('delete from webauthn_challenge where challenge = ? and expires_at > ?', [challenge, new Date()])) === 1);
}

export { ALL_POINTS };
