import { timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DaemonDeps } from '../../app/deps.ts';
import { auditForDashboard } from '../../app/dashboard-audit.ts';
import { passkeyRegistrationOptions, passkeySignInOptions, registerPasskey, signInWithPasskey, type RelyingParty } from '../../app/dashboard-passkeys.ts';
import {
  createPointFromDashboard,
  offeredChains,
  pointFor,
  pointsFor,
  rotateSecretFromDashboard,
  sendTestEvent,
  setPointActiveFromDashboard,
  updatePointFromDashboard,
  type TestEventResult,
} from '../../app/dashboard-points.ts';
import { authenticate } from '../../app/authenticate.ts';
import { authenticateSession, requireStage, sessionOf, signOut, type DashboardPrincipal } from '../../app/dashboard-session.ts';
import { accountInfo, changePassword, completeUserSetup, confirmTotpEnrolment, setupLinkValid, signInWithPassword, startTotpEnrolment, verifySecondFactor } from '../../app/dashboard-signin.ts';
import { newToken, type Client } from '../../app/dashboard-tokens.ts';
import { inviteUser, setUserActiveFromDashboard, usersForDashboard } from '../../app/dashboard-users.ts';
import { DashboardError } from '../../domain/dashboard-roles.ts';
import { GatewayError, UsageError } from '../../domain/errors.ts';
import type { AuthRequest } from '../../domain/principal.ts';
import { RouteTable } from '../app.ts';
import { authRequestOf } from '../auth-request.ts';
import { errorBody } from '../envelope.ts';
import { isIdShaped } from '../validation.ts';
import { dashboardAssets } from './assets.ts';
import { htmlText, type Html } from './html.ts';
import * as pages from './pages.ts';

// The merchant dashboard (docs/dashboard.md): pages under /dashboard/, form and JSON endpoints under
// /dashboard/api/. Its one credential is the session cookie: an API key or a signature is never
// read here, and the gateway never reads the cookie (spec rule 3). Every state-changing request
// passes the Origin check (a hook) and a CSRF token (per session, or a pre-session cookie for the
// sign-in and set-up forms).

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SESSION = 'cg_session';
const PRE = 'cg_pre';
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
type Body = Record<string, string | string[]>;

function cookies(req: FastifyRequest): Map<string, string> {
  const out = new Map<string, string>();
  const header = req.headers.cookie;
  if (!header) return out;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  return out;
}

/** https, or a loopback host (browsers treat those as secure contexts): the cookie gets Secure and the __Host- prefix. */
function secureContext(req: FastifyRequest): boolean {
  return req.protocol === 'https' || ['localhost', '127.0.0.1', '[::1]', '::1'].includes(req.hostname);
}

function cookieName(req: FastifyRequest, base: string): string {
  return secureContext(req) ? `__Host-${base}` : base;
}

function setCookie(reply: FastifyReply, req: FastifyRequest, base: string, value: string, maxAgeSeconds: number | null): void {
  const attrs = [`${cookieName(req, base)}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict'];
  if (secureContext(req)) attrs.push('Secure');
  if (maxAgeSeconds !== null) attrs.push(`Max-Age=${maxAgeSeconds}`);
  const prev = reply.getHeader('Set-Cookie');
  reply.header('Set-Cookie', [...(Array.isArray(prev) ? prev : prev ? [String(prev)] : []), attrs.join('; ')]);
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

function client(req: FastifyRequest): Client {
  const ua = req.headers['user-agent'];
  return { ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua : null };
}

function isJson(req: FastifyRequest): boolean {
  return Buffer.isBuffer(req.body) || (req.headers.accept ?? '').includes('application/json');
}

function bodyOf(req: FastifyRequest): Body {
  if (Buffer.isBuffer(req.body)) {
    try {
      const parsed = JSON.parse(req.body.toString('utf8')) as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Body;
    } catch {
      // answered below
    }
    throw new GatewayError('VALIDATION_ERROR', 'The body must be a JSON object');
  }
  return (req.body as Body | undefined) ?? {};
}

function field(body: Body, name: string): string {
  const v = body[name];
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '';
}

function fields(body: Body, name: string): string[] {
  const v = body[name];
  return (Array.isArray(v) ? v : typeof v === 'string' ? [v] : []).filter((x): x is string => typeof x === 'string');
}

function flag(body: Body, name: string): boolean {
  const v = field(body, name);
  if (v !== 'true' && v !== 'false') throw new GatewayError('VALIDATION_ERROR', `${name} must be true or false`);
  return v === 'true';
}

function sendPage(reply: FastifyReply, status: number, h: Html): FastifyReply {
  return reply.code(status).header('Content-Type', 'text/html; charset=utf-8').send(htmlText(h));
}

function redirect(reply: FastifyReply, to: string): FastifyReply {
  return reply.code(303).header('Location', to).send();
}

export interface DashboardOptions {
  /** dashboard.publicUrl's origin, when set: the one origin state-changing requests may come from. */
  publicOrigin: string | null;
}

export async function dashboardPlugin(app: FastifyInstance, deps: DaemonDeps, options: DashboardOptions): Promise<void> {
  const common = deps.common;
  const assets = dashboardAssets();
  const assetUrls = { css: `/dashboard/assets/dashboard.css?v=${assets.get('dashboard.css')!.version}`, js: `/dashboard/assets/dashboard.js?v=${assets.get('dashboard.js')!.version}` };
  const expectedOrigin = (req: FastifyRequest): string => options.publicOrigin ?? `${req.protocol}://${req.host}`;
  const rp = (req: FastifyRequest): RelyingParty => ({ origin: expectedOrigin(req) });
  const layout = (title: string, principal: DashboardPrincipal | null, csrf: string): pages.Layout => ({ title, principal, csrf, assets: assetUrls });

  // Forms arrive url-encoded (repeated names become lists); JSON stays the root parser's bytes.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => {
    const out: Body = {};
    for (const [k, v] of new URLSearchParams(body as string)) {
      const prev = out[k];
      out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    done(null, out);
  });

  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('Content-Security-Policy', DASHBOARD_CSP);
    reply.header('X-Frame-Options', 'DENY');
    reply.header('X-Content-Type-Options', 'nosniff');
    // same-origin, not no-referrer: under no-referrer browsers send `Origin: null` on form posts.
    reply.header('Referrer-Policy', 'same-origin');
    reply.header('Cross-Origin-Opener-Policy', 'same-origin');
    reply.header('Cross-Origin-Resource-Policy', 'same-origin');
    reply.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=(), usb=()');
    if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    return payload;
  });

  // Forgery, first line: a state-changing request must come from the dashboard's own origin.
  app.addHook('onRequest', (req, _reply, done) => {
    if (!STATE_CHANGING.has(req.method)) return done();
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    const ok = origin !== undefined && origin !== 'null' ? origin === expectedOrigin(req) : site === 'same-origin';
    if (!ok) return done(new DashboardError('CSRF_FAILED', 403, 'Cross-site request refused (Origin does not match the dashboard)'));
    done();
  });

  app.setErrorHandler((err: FastifyError | GatewayError | DashboardError | UsageError, req, reply) => {
    let status = 500;
    let code = 'INTERNAL_ERROR';
    let message = 'Something went wrong; the request id identifies it in the logs';
    if (err instanceof DashboardError || err instanceof GatewayError) {
      status = err.status;
      code = err.code;
      message = err.message;
      if (err instanceof GatewayError && err.headers) reply.headers(err.headers);
    } else if (err instanceof UsageError) {
      status = 400;
      code = 'VALIDATION_ERROR';
      message = err.message.charAt(0).toUpperCase() + err.message.slice(1);
    } else if ((err as FastifyError).statusCode && (err as FastifyError).statusCode! < 500) {
      status = (err as FastifyError).statusCode!;
      code = 'VALIDATION_ERROR';
      message = err.message;
    } else {
      req.log.error({ err }, 'dashboard error');
    }
    if (isJson(req)) return reply.code(status).send(errorBody(req.id, code as never, message));
    if (req.method === 'GET' && (code === 'SIGN_IN_REQUIRED' || code === 'SECOND_FACTOR_REQUIRED')) return redirect(reply, code === 'SIGN_IN_REQUIRED' ? '/dashboard/sign-in' : '/dashboard/second-factor');
    return sendPage(reply, status, pages.messagePage(layout(status === 404 ? 'Not found' : 'Not done', null, ''), message, req.method === 'GET' ? '/dashboard/' : null));
  });

  app.setNotFoundHandler((req, reply) => sendPage(reply, 404, pages.messagePage(layout('Not found', null, ''), `No page ${req.url.split('?')[0]}`, '/dashboard/')));

  const sessionToken = (req: FastifyRequest) => cookies(req).get(cookieName(req, SESSION));
  /**
   * The signed-in user, through the one authenticate use case with the session scheme only (`mfa`:
   * a session still owing its second factor is enough). Only the cookie name this context sets is
   * offered to it: over https an unprefixed cookie (which a sibling host could plant) never counts.
   */
  const principalOf = async (req: FastifyRequest, stage: 'full' | 'mfa' = 'full') => {
    const base = authRequestOf(req);
    const token = sessionToken(req);
    const only: AuthRequest = { ...base, header: (name) => (name === 'cookie' ? (token ? `${cookieName(req, SESSION)}=${token}` : undefined) : base.header(name)) };
    return requireStage(await authenticate(deps, only, ['session']), stage);
  };
  const checkCsrf = (req: FastifyRequest, want: string | undefined): void => {
    const header = req.headers['x-csrf-token'];
    const given = typeof header === 'string' ? header : field(bodyOf(req), '_csrf');
    if (!want || !sameToken(given, want)) throw new DashboardError('CSRF_FAILED', 403, 'The form is stale or was not sent by the dashboard; reload the page');
  };
  /** A state-changing request of a session: signed in, then its CSRF token. */
  const acting = async (req: FastifyRequest, stage: 'full' | 'mfa' = 'full') => {
    const principal = await principalOf(req, stage);
    checkCsrf(req, principal.csrfToken);
    return principal;
  };
  const preCsrf = (req: FastifyRequest) => checkCsrf(req, cookies(req).get(cookieName(req, PRE)));
  /** The pre-session CSRF token of a sign-in or set-up form (double submit: the cookie and the field). */
  const preToken = (req: FastifyRequest, reply: FastifyReply): string => {
    const existing = cookies(req).get(cookieName(req, PRE));
    if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
    const token = newToken();
    setCookie(reply, req, PRE, token, 3600);
    return token;
  };
  const startBrowserSession = (req: FastifyRequest, reply: FastifyReply, token: string) =>
    setCookie(reply, req, SESSION, token, common.config.dashboard.absoluteTimeoutHours * 3600);

  const routes = new RouteTable(app);

  routes.add('GET', '/assets/:name', async (req, reply) => {
    const asset = assets.get((req.params as { name: string }).name);
    if (!asset) return sendPage(reply, 404, pages.messagePage(layout('Not found', null, ''), 'No such file', null));
    const { v } = req.query as { v?: string };
    return reply.header('Content-Type', asset.type).header('Cache-Control', v === asset.version ? 'public, max-age=31536000, immutable' : 'no-cache').send(asset.body);
  });

  routes.add('GET', '/', async (req, reply) => {
    const p = await sessionOf(common, sessionToken(req));
    return redirect(reply, !p ? '/dashboard/sign-in' : p.stage === 'full' ? '/dashboard/points' : '/dashboard/second-factor');
  });

  // Signing in

  routes.add('GET', '/sign-in', async (req, reply) => sendPage(reply, 200, pages.signInPage(layout('Sign in', null, preToken(req, reply)), null)));

  routes.add('POST', '/api/sign-in', async (req, reply) => {
    preCsrf(req);
    const body = bodyOf(req);
    const existing = await sessionOf(common, sessionToken(req));
    try {
      const { token } = await signInWithPassword(common, { email: field(body, 'email'), password: field(body, 'password') }, client(req), existing?.sessionId ?? null);
      startBrowserSession(req, reply, token);
      return redirect(reply, '/dashboard/second-factor');
    } catch (err) {
      // A script gets the coded JSON answer; a browser the form again, with the words.
      // A script gets the coded JSON answer (the error handler); a browser the form again, with the words.
      if (isJson(req) || !(err instanceof DashboardError || (err instanceof GatewayError && err.code === 'RATE_LIMITED'))) throw err;
      if (err instanceof GatewayError && err.headers) reply.headers(err.headers);
      return sendPage(reply, err.status, pages.signInPage(layout('Sign in', null, preToken(req, reply)), err.message));
    }
  });

  routes.add('GET', '/second-factor', async (req, reply) => {
    const p = await principalOf(req, 'mfa');
    if (p.stage === 'full') return redirect(reply, '/dashboard/points');
    if (!p.hasTotp && p.passkeys === 0) return redirect(reply, '/dashboard/enrol');
    return sendPage(reply, 200, pages.secondFactorPage(layout('Second factor', p, p.csrfToken), null));
  });

  routes.add('POST', '/api/second-factor', async (req, reply) => {
    const p = await acting(req, 'mfa');
    try {
      const { token } = await verifySecondFactor(common, p, field(bodyOf(req), 'code'), client(req));
      startBrowserSession(req, reply, token);
      return redirect(reply, '/dashboard/points');
    } catch (err) {
      if (isJson(req) || !(err instanceof DashboardError && err.code === 'SECOND_FACTOR_REQUIRED') && !(err instanceof GatewayError && err.code === 'RATE_LIMITED')) throw err;
      if (err instanceof GatewayError && err.headers) reply.headers(err.headers);
      return sendPage(reply, err.status, pages.secondFactorPage(layout('Second factor', p, p.csrfToken), err.message));
    }
  });

  routes.add('POST', '/api/passkey-sign-in/options', async (req, reply) => {
    await passkeyCsrf(req);
    return reply.send(await passkeySignInOptions(common, rp(req)));
  });

  routes.add('POST', '/api/passkey-sign-in', async (req, reply) => {
    const existing = await passkeyCsrf(req);
    const { token } = await signInWithPasskey(common, rp(req), bodyOf(req).response, client(req), existing?.sessionId ?? null);
    startBrowserSession(req, reply, token);
    return reply.send({ redirect: '/dashboard/points' });
  });

  /**
   * The passkey buttons run on the sign-in page (the pre-session token) and on the second-factor
   * page (the session's token); the session a browser already holds is replaced by the new one.
   */
  async function passkeyCsrf(req: FastifyRequest): Promise<DashboardPrincipal | null> {
    const existing = await sessionOf(common, sessionToken(req));
    const header = req.headers['x-csrf-token'];
    const given = typeof header === 'string' ? header : '';
    const pre = cookies(req).get(cookieName(req, PRE));
    if ((pre && sameToken(given, pre)) || (existing && sameToken(given, existing.csrfToken))) return existing;
    throw new DashboardError('CSRF_FAILED', 403, 'The page is stale; reload it');
  }

  routes.add('POST', '/api/sign-out', async (req, reply) => {
    const p = await acting(req, 'mfa');
    await signOut(common, p, client(req));
    setCookie(reply, req, SESSION, '', 0);
    return redirect(reply, '/dashboard/sign-in');
  });

  // First sign-in: the set-up link, then a second factor

  routes.add('GET', '/setup', async (req, reply) => {
    const token = String((req.query as { token?: unknown }).token ?? '');
    return sendPage(reply, 200, pages.setupPage(layout('Set up your account', null, preToken(req, reply)), token, await setupLinkValid(common, token), null));
  });

  routes.add('POST', '/api/setup', async (req, reply) => {
    preCsrf(req);
    const body = bodyOf(req);
    try {
      const { token } = await completeUserSetup(common, { token: field(body, 'token'), password: field(body, 'password'), confirm: field(body, 'confirm') }, client(req));
      startBrowserSession(req, reply, token);
      return redirect(reply, '/dashboard/enrol');
    } catch (err) {
      if (isJson(req) || !(err instanceof UsageError)) throw err;
      return sendPage(reply, 400, pages.setupPage(layout('Set up your account', null, preToken(req, reply)), field(body, 'token'), true, err.message));
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
    startBrowserSession(req, reply, token);
    const fresh = await authenticateSession(common, token);
    return sendPage(reply, 200, pages.recoveryCodesPage(layout('Recovery codes', fresh, fresh.csrfToken), recoveryCodes));
  });

  routes.add('POST', '/api/passkeys/options', async (req, reply) => {
    const p = await acting(req, 'mfa');
    return reply.send(await passkeyRegistrationOptions(common, p, rp(req)));
  });

  routes.add('POST', '/api/passkeys', async (req, reply) => {
    const p = await acting(req, 'mfa');
    const body = bodyOf(req);
    const { token } = await registerPasskey(common, p, rp(req), { name: field(body, 'name'), response: body.response }, client(req));
    startBrowserSession(req, reply, token);
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
    startBrowserSession(req, reply, token);
    return redirect(reply, '/dashboard/account?saved=1');
  });

  // Merchant points

  const pointId = (req: FastifyRequest): string => {
    const { id } = req.params as { id: string };
    if (!isIdShaped(id)) throw new GatewayError('NOT_FOUND', 'No such merchant point');
    return id;
  };
  const pointPage = async (reply: FastifyReply, p: DashboardPrincipal, id: string, extra: { saved?: boolean; test?: TestEventResult | null }) => {
    const point = await pointFor(common, p, id);
    return sendPage(reply, 200, pages.pointPage(layout(point.name, p, p.csrfToken), point, offeredChains(deps.registry), extra));
  };

  routes.add('GET', '/points', async (req, reply) => {
    const p = await principalOf(req);
    return sendPage(reply, 200, pages.pointsPage(layout('Merchant points', p, p.csrfToken), await pointsFor(common, p), offeredChains(deps.registry)));
  });

  routes.add('POST', '/api/points', async (req, reply) => {
    const p = await acting(req);
    const body = bodyOf(req);
    const { point, apiSecret } = await createPointFromDashboard(common, deps.registry, p, { name: field(body, 'name'), webhookUrl: field(body, 'webhookUrl'), accepted: fields(body, 'accepted') }, client(req));
    return sendPage(reply, 201, pages.secretShownPage(layout('Point created', p, p.csrfToken), point, apiSecret, false));
  });

  routes.add('GET', '/points/:id', async (req, reply) => {
    const p = await principalOf(req);
    return pointPage(reply, p, pointId(req), { saved: (req.query as { saved?: string }).saved === '1' });
  });

  routes.add('POST', '/api/points/:id', async (req, reply) => {
    const p = await acting(req);
    const id = pointId(req);
    const body = bodyOf(req);
    await updatePointFromDashboard(common, deps.registry, p, id, { name: field(body, 'name'), webhookUrl: field(body, 'webhookUrl'), accepted: fields(body, 'accepted') }, client(req));
    return redirect(reply, `/dashboard/points/${id}?saved=1`);
  });

  routes.add('POST', '/api/points/:id/test-event', async (req, reply) => {
    const p = await acting(req);
    const id = pointId(req);
    const test = await sendTestEvent(common, p, id, client(req));
    return pointPage(reply, p, id, { test });
  });

  routes.add('POST', '/api/points/:id/rotate', async (req, reply) => {
    const p = await acting(req);
    const { point, apiSecret } = await rotateSecretFromDashboard(common, p, pointId(req), field(bodyOf(req), 'confirm'), client(req));
    return sendPage(reply, 200, pages.secretShownPage(layout('New API secret', p, p.csrfToken), point, apiSecret, true));
  });

  routes.add('POST', '/api/points/:id/active', async (req, reply) => {
    const p = await acting(req);
    const id = pointId(req);
    await setPointActiveFromDashboard(common, p, id, flag(bodyOf(req), 'active'), client(req));
    return redirect(reply, `/dashboard/points/${id}?saved=1`);
  });

  // Users and the audit log

  routes.add('GET', '/users', async (req, reply) => {
    const p = await principalOf(req);
    return sendPage(reply, 200, pages.usersPage(layout('Users', p, p.csrfToken), await usersForDashboard(common, p), await pointsFor(common, p), null));
  });

  routes.add('POST', '/api/users', async (req, reply) => {
    const p = await acting(req);
    const body = bodyOf(req);
    const invited = await inviteUser(common, p, { email: field(body, 'email'), role: field(body, 'role'), pointIds: fields(body, 'points') }, client(req));
    return sendPage(reply, 201, pages.usersPage(layout('Users', p, p.csrfToken), await usersForDashboard(common, p), await pointsFor(common, p), { email: invited.user.email, link: invited.setupLink }));
  });

  routes.add('POST', '/api/users/:id/active', async (req, reply) => {
    const p = await acting(req);
    const { id } = req.params as { id: string };
    await setUserActiveFromDashboard(common, p, id, flag(bodyOf(req), 'active'), client(req));
    return redirect(reply, '/dashboard/users');
  });

  routes.add('GET', '/audit', async (req, reply) => {
    const p = await principalOf(req);
    return sendPage(reply, 200, pages.auditPage(layout('Audit log', p, p.csrfToken), await auditForDashboard(common, p)));
  });

  routes.finish();
}
