import { passkeyRegistrationOptions, passkeySignInOptions, registerPasskey, signInWithPasskey } from '../../app/dashboard-passkeys.ts';
import { authenticateSession, sessionOf, signOut } from '../../app/dashboard-session.ts';
import { accountInfo, changePassword, completeUserSetup, confirmTotpEnrolment, setupLinkValid, signInWithPassword, startTotpEnrolment, verifySecondFactor } from '../../app/dashboard-signin.ts';
import { DashboardError } from '../../domain/dashboard-roles.ts';
import { GatewayError, UsageError } from '../../domain/errors.ts';
import { bodyOf, client, field, isJson, redirect, sendPage, type DashboardKit } from './kit.ts';
import * as pages from './pages.ts';

// Signing in and out, the first set-up, second factors and the account page.

export function sessionRoutes(kit: DashboardKit): void {
  const { deps, routes, layout, principalOf, acting } = kit;
  const common = deps.common;

  routes.add('GET', '/', async (req, reply) => {
    const p = await sessionOf(common, kit.sessionToken(req));
    return redirect(reply, !p ? '/dashboard/sign-in' : p.stage === 'full' ? '/dashboard/overview' : '/dashboard/second-factor');
  });

  // Signing in

  routes.add('GET', '/sign-in', async (req, reply) => sendPage(reply, 200, pages.signInPage(layout('Sign in', null, kit.preToken(req, reply)), null)));

  routes.add('POST', '/api/sign-in', async (req, reply) => {
    kit.preCsrf(req);
    const body = bodyOf(req);
    const existing = await sessionOf(common, kit.sessionToken(req));
    try {
      const { token } = await signInWithPassword(common, { email: field(body, 'email'), password: field(body, 'password') }, client(req), existing?.sessionId ?? null);
      kit.startBrowserSession(req, reply, token);
      return redirect(reply, '/dashboard/second-factor');
    } catch (err) {
      // A script gets the coded JSON answer; a browser the form again, with the words.
      // A script gets the coded JSON answer (the error handler); a browser the form again, with the words.
      if (isJson(req) || !(err instanceof DashboardError || (err instanceof GatewayError && err.code === 'RATE_LIMITED'))) throw err;
      if (err instanceof GatewayError && err.headers) reply.headers(err.headers);
      return sendPage(reply, err.status, pages.signInPage(layout('Sign in', null, kit.preToken(req, reply)), err.message));
    }
  });

  routes.add('GET', '/second-factor', async (req, reply) => {
    const p = await principalOf(req, 'mfa');
    if (p.stage === 'full') return redirect(reply, '/dashboard/overview');
    if (!p.hasTotp && p.passkeys === 0) return redirect(reply, '/dashboard/enrol');
    return sendPage(reply, 200, pages.secondFactorPage(layout('Second factor', p, p.csrfToken), null));
  });

  routes.add('POST', '/api/second-factor', async (req, reply) => {
    const p = await acting(req, 'mfa');
    try {
      const { token } = await verifySecondFactor(common, p, field(bodyOf(req), 'code'), client(req));
      kit.startBrowserSession(req, reply, token);
      return redirect(reply, '/dashboard/overview');
    } catch (err) {
      if (isJson(req) || !(err instanceof DashboardError && err.code === 'SECOND_FACTOR_REQUIRED') && !(err instanceof GatewayError && err.code === 'RATE_LIMITED')) throw err;
      if (err instanceof GatewayError && err.headers) reply.headers(err.headers);
      return sendPage(reply, err.status, pages.secondFactorPage(layout('Second factor', p, p.csrfToken), err.message));
    }
  });

  routes.add('POST', '/api/passkey-sign-in/options', async (req, reply) => {
    await kit.passkeyCsrf(req);
    return reply.send(await passkeySignInOptions(common, kit.rp(req)));
  });

  routes.add('POST', '/api/passkey-sign-in', async (req, reply) => {
    const existing = await kit.passkeyCsrf(req);
    const { token } = await signInWithPasskey(common, kit.rp(req), bodyOf(req).response, client(req), existing?.sessionId ?? null);
    kit.startBrowserSession(req, reply, token);
    return reply.send({ redirect: '/dashboard/overview' });
  });

  routes.add('POST', '/api/sign-out', async (req, reply) => {
    const p = await acting(req, 'mfa');
    await signOut(common, p, client(req));
    kit.endBrowserSession(req, reply);
    return redirect(reply, '/dashboard/sign-in');
  });

  // First sign-in: the set-up link, then a second factor

  routes.add('GET', '/setup', async (req, reply) => {
    const token = String((req.query as { token?: unknown }).token ?? '');
    return sendPage(reply, 200, pages.setupPage(layout('Set up your account', null, kit.preToken(req, reply)), token, await setupLinkValid(common, token), null));
  });

  routes.add('POST', '/api/setup', async (req, reply) => {
    kit.preCsrf(req);
    const body = bodyOf(req);
    try {
      const { token } = await completeUserSetup(common, { token: field(body, 'token'), password: field(body, 'password'), confirm: field(body, 'confirm') }, client(req));
      kit.startBrowserSession(req, reply, token);
      return redirect(reply, '/dashboard/enrol');
    } catch (err) {
      if (isJson(req) || !(err instanceof UsageError)) throw err;
      return sendPage(reply, 400, pages.setupPage(layout('Set up your account', null, kit.preToken(req, reply)), field(body, 'token'), true, err.message));
    }
  });

  routes.add('GET', '/enrol', async (req, reply) => {
    const p = await principalOf(req, 'mfa');
    if (p.stage !== 'full' && (p.hasTotp || p.passkeys > 0)) return redirect(reply, '/dashboard/second-factor');
    const totp = startTotpEnrolment(common, p);
    const { default: QRCode } = await import('qrcode');
    const qrSvg = await QRCode.toString(totp.uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    return sendPage(reply, 200, pages.enrolPage(layout('Second factor', p, p.csrfToken), { secret: totp.secret, sealed: totp.sealed, qrSvg }, null));
  });

  routes.add('POST', '/api/totp', async (req, reply) => {
    const p = await acting(req, 'mfa');
    const body = bodyOf(req);
    const { token, recoveryCodes } = await confirmTotpEnrolment(common, p, { sealed: field(body, 'sealed'), code: field(body, 'code') }, client(req));
    kit.startBrowserSession(req, reply, token);
    const fresh = await authenticateSession(common, token);
    return sendPage(reply, 200, pages.recoveryCodesPage(layout('Recovery codes', fresh, fresh.csrfToken), recoveryCodes));
  });

  routes.add('POST', '/api/passkeys/options', async (req, reply) => {
    const p = await acting(req, 'mfa');
    return reply.send(await passkeyRegistrationOptions(common, p, kit.rp(req)));
  });

  routes.add('POST', '/api/passkeys', async (req, reply) => {
    const p = await acting(req, 'mfa');
    const body = bodyOf(req);
    const { token } = await registerPasskey(common, p, kit.rp(req), { name: field(body, 'name'), response: body.response }, client(req));
    kit.startBrowserSession(req, reply, token);
    return reply.send({ redirect: '/dashboard/account' });
  });

  routes.add('GET', '/account', async (req, reply) => {
    const p = await principalOf(req);
    const saved = (req.query as { saved?: string }).saved === '1';
    return sendPage(reply, 200, pages.accountPage(layout('Account', p, p.csrfToken), await accountInfo(common, p), saved ? 'Password changed; your other sessions ended.' : null));
  });

  routes.add('POST', '/api/password', async (req, reply) => {
    const p = await acting(req);
    const body = bodyOf(req);
    const { token } = await changePassword(common, p, { current: field(body, 'current'), password: field(body, 'password'), confirm: field(body, 'confirm') }, client(req));
    kit.startBrowserSession(req, reply, token);
    return redirect(reply, '/dashboard/account?saved=1');
  });
}
