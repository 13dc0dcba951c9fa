import { timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DaemonDeps } from '../../app/deps.ts';
import type { RelyingParty } from '../../app/dashboard-passkeys.ts';
import { authenticate } from '../../app/authenticate.ts';
import { requireStage, sessionOf, type DashboardPrincipal } from '../../app/dashboard-session.ts';
import { newToken, type Client } from '../../app/dashboard-tokens.ts';
import { DashboardError } from '../../domain/dashboard-roles.ts';
import { GatewayError, UsageError } from '../../domain/errors.ts';
import type { AuthRequest } from '../../domain/principal.ts';
import { RouteTable } from '../app.ts';
import { authRequestOf } from '../auth-request.ts';
import { errorBody } from '../envelope.ts';
import { dashboardAssets } from './assets.ts';
import { htmlText, type Html } from './html.ts';
import * as pages from './pages.ts';
import { utf8Text } from '../validation.ts';
import { boundaryOf, parseMultipart, type Body } from './upload.ts';
import { SIGNED_UPLOAD_LIMIT } from '../../app/dashboard-money.ts';

// What every dashboard route module shares (docs/dashboard.md): the headers, the Origin check and
// error pages installed once, the session read through the one authenticate use case, the CSRF
// checks, and the form helpers. Each area of the dashboard is a module of routes given this kit.

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
export type { Body } from './upload.ts';

export function cookies(req: FastifyRequest): Map<string, string> {
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
export function secureContext(req: FastifyRequest): boolean {
  return req.protocol === 'https' || ['localhost', '127.0.0.1', '[::1]', '::1'].includes(req.hostname);
}

export function cookieName(req: FastifyRequest, base: string): string {
  return secureContext(req) ? `__Host-${base}` : base;
}

export function setCookie(reply: FastifyReply, req: FastifyRequest, base: string, value: string, maxAgeSeconds: number | null): void {
  const attrs = [`${cookieName(req, base)}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict'];
  if (secureContext(req)) attrs.push('Secure');
  if (maxAgeSeconds !== null) attrs.push(`Max-Age=${maxAgeSeconds}`);
  const prev = reply.getHeader('Set-Cookie');
  reply.header('Set-Cookie', [...(Array.isArray(prev) ? prev : prev ? [String(prev)] : []), attrs.join('; ')]);
}

export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

export function client(req: FastifyRequest): Client {
  const ua = req.headers['user-agent'];
  return { ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua : null };
}

export function isJson(req: FastifyRequest): boolean {
  return Buffer.isBuffer(req.body) || (req.headers.accept ?? '').includes('application/json');
}

export function bodyOf(req: FastifyRequest): Body {
  if (Buffer.isBuffer(req.body)) {
    const text = utf8Text(req.body);
    try {
      const parsed = JSON.parse(text) as unknown;
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Body;
    } catch {
      // answered below
    }
    throw new GatewayError('VALIDATION_ERROR', 'The body must be a JSON object');
  }
  return (req.body as Body | undefined) ?? {};
}

export function field(body: Body, name: string): string {
  const v = body[name];
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '';
}

export function fields(body: Body, name: string): string[] {
  const v = body[name];
  return (Array.isArray(v) ? v : typeof v === 'string' ? [v] : []).filter((x): x is string => typeof x === 'string');
}

export function flag(body: Body, name: string): boolean {
  const v = field(body, name);
  if (v !== 'true' && v !== 'false') throw new GatewayError('VALIDATION_ERROR', `${name} must be true or false`);
  return v === 'true';
}

export function sendPage(reply: FastifyReply, status: number, h: Html): FastifyReply {
  return reply.code(status).header('Content-Type', 'text/html; charset=utf-8').send(htmlText(h));
}

export function redirect(reply: FastifyReply, to: string): FastifyReply {
  return reply.code(303).header('Location', to).send();
}

export interface DashboardOptions {
  /** dashboard.publicUrl's origin, when set: the one origin state-changing requests may come from. */
  publicOrigin: string | null;
}

export interface DashboardKit {
  deps: DaemonDeps;
  routes: RouteTable;
  layout(title: string, principal: DashboardPrincipal | null, csrf: string): pages.Layout;
  rp(req: FastifyRequest): RelyingParty;
  sessionToken(req: FastifyRequest): string | undefined;
  /** The signed-in user (`mfa`: a session still owing its second factor is enough). */
  principalOf(req: FastifyRequest, stage?: 'full' | 'mfa'): Promise<DashboardPrincipal>;
  /** A state-changing request of a session: signed in, then its CSRF token. */
  acting(req: FastifyRequest, stage?: 'full' | 'mfa'): Promise<DashboardPrincipal>;
  /** The pre-session CSRF check of a sign-in or set-up form. */
  preCsrf(req: FastifyRequest): void;
  /** The pre-session CSRF token of a sign-in or set-up form (double submit: the cookie and the field). */
  preToken(req: FastifyRequest, reply: FastifyReply): string;
  /** The passkey buttons' CSRF: the pre-session token or the session's; answers the session held, if any. */
  passkeyCsrf(req: FastifyRequest): Promise<DashboardPrincipal | null>;
  startBrowserSession(req: FastifyRequest, reply: FastifyReply, token: string): void;
  endBrowserSession(req: FastifyRequest, reply: FastifyReply): void;
}

/** Installs the dashboard's parsers, hooks, error pages and assets on its scope; answers the kit. */
export function installDashboard(app: FastifyInstance, deps: DaemonDeps, options: DashboardOptions): DashboardKit {
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

  // The signed-file upload (money-routes.ts): a browser's multipart form, size-limited here.
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: SIGNED_UPLOAD_LIMIT + 64 * 1024 }, (req, body, done) => {
    try {
      done(null, parseMultipart(body as Buffer, boundaryOf(req.headers['content-type'] ?? '')));
    } catch (err) {
      done(err as Error, undefined);
    }
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

  /**
   * The passkey buttons run on the sign-in page (the pre-session token) and on the second-factor
   * page (the session's token); the session a browser already holds is replaced by the new one.
   */
  const passkeyCsrf = async (req: FastifyRequest): Promise<DashboardPrincipal | null> => {
    const existing = await sessionOf(common, sessionToken(req));
    const header = req.headers['x-csrf-token'];
    const given = typeof header === 'string' ? header : '';
    const pre = cookies(req).get(cookieName(req, PRE));
    if ((pre && sameToken(given, pre)) || (existing && sameToken(given, existing.csrfToken))) return existing;
    throw new DashboardError('CSRF_FAILED', 403, 'The page is stale; reload it');
  };

  const routes = new RouteTable(app);
  routes.add('GET', '/assets/:name', async (req, reply) => {
    const asset = assets.get((req.params as { name: string }).name);
    if (!asset) return sendPage(reply, 404, pages.messagePage(layout('Not found', null, ''), 'No such file', null));
    const { v } = req.query as { v?: string };
    return reply.header('Content-Type', asset.type).header('Cache-Control', v === asset.version ? 'public, max-age=31536000, immutable' : 'no-cache').send(asset.body);
  });

  return {
    deps,
    routes,
    layout,
    rp,
    sessionToken,
    principalOf,
    acting,
    preCsrf,
    preToken,
    passkeyCsrf,
    startBrowserSession,
    endBrowserSession: (req, reply) => setCookie(reply, req, SESSION, '', 0),
  };
}
