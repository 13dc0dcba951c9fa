import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Common } from '../common.ts';
import { DashboardError } from '../domain/dashboard-roles.ts';
import { UsageError } from '../domain/errors.ts';
import { recordAudit } from '../store/audit-log.ts';
import { setSessionChallenge, takeSessionChallenge } from '../store/dashboard-sessions.ts';
import { addPasskey, passkeyByCredentialId, passkeysOf, storeChallenge, takeChallenge, recordPasskeyUse, userById } from '../store/dashboard-users.ts';
import { startSession, type DashboardPrincipal } from './dashboard-session.ts';
import type { Client } from './dashboard-tokens.ts';

// Passkeys (WebAuthn, @simplewebauthn/server): enrolment from a session, and sign-in with a passkey
// alone (a discoverable credential with user verification: possession and PIN/biometric, so no
// password is needed). Challenges are single use: enrolment's on the session row, sign-in's in a
// table of their own (there is no session yet).

/** The dashboard's origin as the browser sees it; the relying party id is its host name. */
export interface RelyingParty {
  origin: string;
}

const rpId = (rp: RelyingParty) => new URL(rp.origin).hostname;
const CHALLENGE_MS = 5 * 60_000;

export async function passkeyRegistrationOptions(common: Common, principal: DashboardPrincipal, rp: RelyingParty) {
  mayChangeFactors(principal);
  const existing = await passkeysOf(common.db, principal.userId);
  const options = await generateRegistrationOptions({
    rpName: 'chaingate dashboard',
    rpID: rpId(rp),
    userName: principal.email,
    userID: new TextEncoder().encode(principal.userId),
    attestationType: 'none',
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, ...(p.transports ? { transports: p.transports } : {}) })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
  });
  await setSessionChallenge(common.db, principal.sessionId, options.challenge);
  return options;
}

/** Only a signed-in session, or one whose user has no second factor yet (first enrolment), may add one. */
function mayChangeFactors(principal: DashboardPrincipal): void {
  if (principal.stage !== 'full' && (principal.hasTotp || principal.passkeys > 0)) {
    throw new DashboardError('SECOND_FACTOR_REQUIRED', 401, 'Sign in with your second factor first');
  }
}

export async function registerPasskey(common: Common, principal: DashboardPrincipal, rp: RelyingParty, input: { name: string; response: unknown }, client: Client): Promise<{ token: string }> {
  mayChangeFactors(principal);
  const challenge = await takeSessionChallenge(common.db, principal.sessionId);
  if (!challenge) throw new UsageError('no passkey enrolment is waiting; start again');
  const name = input.name.trim().slice(0, 64) || 'passkey';
  let verification: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    verification = await verifyRegistrationResponse({ response: input.response as RegistrationResponseJSON, expectedChallenge: challenge, expectedOrigin: rp.origin, expectedRPID: rpId(rp), requireUserVerification: true });
  } catch (err) {
    throw new UsageError(`the passkey was not accepted: ${(err as Error).message}`);
  }
  if (!verification.verified) throw new UsageError('the passkey was not accepted');
  const cred = verification.registrationInfo.credential;
  await addPasskey(
    common.db,
    { userId: principal.userId, credentialId: cred.id, publicKey: Buffer.from(cred.publicKey).toString('base64url'), counter: cred.counter, transports: cred.transports ?? null, name },
    principal.sessionId,
    { userId: principal.userId, actor: principal.email, action: 'passkey.add', ...client, details: { name } },
  );
  return startSession(common, principal.userId, 'full', client, principal.sessionId, null);
}

export async function passkeySignInOptions(common: Common, rp: RelyingParty) {
  const options = await generateAuthenticationOptions({ rpID: rpId(rp), userVerification: 'required', challenge: randomBytes(32) });
  await storeChallenge(common.db, options.challenge, new Date(Date.now() + CHALLENGE_MS));
  return options;
}

/** A passkey alone signs in (its user verification stands for the password); `replaces` is any session the browser had. */
export async function signInWithPasskey(common: Common, rp: RelyingParty, response: unknown, client: Client, replaces: string | null): Promise<{ token: string }> {
  const r = response as AuthenticationResponseJSON;
  const refuse = async (why: string, userId: string | null, actor: string) => {
    await recordAudit(common.db, { userId, actor, action: 'signin.failed', ...client, details: { step: 'passkey', why } });
    return new DashboardError('SIGN_IN_REQUIRED', 401, 'That passkey did not sign you in');
  };
  if (typeof r?.id !== 'string' || typeof r.response?.clientDataJSON !== 'string') throw await refuse('malformed', null, '(passkey)');
  let challenge: string;
  try {
    challenge = JSON.parse(Buffer.from(r.response.clientDataJSON, 'base64url').toString('utf8')).challenge;
  } catch {
    throw await refuse('malformed', null, '(passkey)');
  }
  if (typeof challenge !== 'string' || !(await takeChallenge(common.db, challenge))) throw await refuse('unknown challenge', null, '(passkey)');
  const key = await passkeyByCredentialId(common.db, r.id);
  const user = key ? await userById(common.db, key.userId) : null;
  if (!key || !user?.active) throw await refuse('unknown passkey', user?.id ?? null, user?.email ?? '(passkey)');
  let verified: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    verified = await verifyAuthenticationResponse({
      response: r,
      expectedChallenge: challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rpId(rp),
      credential: { id: key.credentialId, publicKey: Buffer.from(key.publicKey, 'base64url'), counter: key.counter, ...(key.transports ? { transports: key.transports as never } : {}) },
      requireUserVerification: true,
    });
  } catch {
    throw await refuse('bad signature', user.id, user.email);
  }
  if (!verified.verified || !(await recordPasskeyUse(common.db, key.id, verified.authenticationInfo.newCounter))) throw await refuse('not verified', user.id, user.email);
  return startSession(common, user.id, 'full', client, replaces, { userId: user.id, actor: user.email, action: 'signin', ...client, details: { with: 'passkey', passkey: key.name } });
}
