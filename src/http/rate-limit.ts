import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { normalizeIP } from '@fastify/rate-limit';
import type { Config } from '../config/schema.ts';
import { GatewayError } from '../domain/errors.ts';
import type { RateLimitCounters, RouteLimitName, RouteWindow, Taken } from '../domain/rate-limits.ts';

// Rate limits (spec "Limits"; docs/rate-limits.md). Two layers, both keyed by the client IP as
// Fastify sees it (req.ip: X-Forwarded-For counts only with server.trustProxy), IPv6 grouped by /64:
//  - per route of the checkout API: one fixed window per route and IP, counted as
//    @fastify/rate-limit counts them (same headers and 429);
//  - service-wide, across every route of the daemon: two sliding windows (burst and sustained),
//    both of which must allow a request.
// Both are taken in one step in one root onRequest hook, from a RateLimitCounters: this process's
// memory (SQLite, one process; src/store/rate-limit-memory.ts), or the PostgreSQL database every serve
// process shares (src/store/rate-limit-counters.ts). The checkout scope's hook only answers a route's 429, after
// its CORS headers.

declare module 'fastify' {
  interface FastifyInstance {
    /** The counters of both layers, set on the root instance by registerServiceWideLimits. */
    rateLimitCounters?: RateLimitCounters;
  }
}

export type RateLimitConfig = Config['rateLimit'];

/** The client key both layers use: req.ip (trustProxy applied), an IPv6 address reduced to its /64. */
export function clientKey(req: FastifyRequest): string {
  const ip = req.ip ?? '';
  // Only an address with a colon can be IPv6: others are normalizeIP's identity (lower-cased).
  if (!ip.includes(':')) return ip.length <= MAX_KEY_LENGTH ? ip.toLowerCase() : longKey(ip);
  let key = ipv6Keys.get(ip);
  if (key === undefined) {
    key = normalizeIP(ip);
    if (key.length > MAX_KEY_LENGTH) key = longKey(key);
    if (ipv6Keys.size >= IPV6_KEYS_CACHED) ipv6Keys.clear();
    ipv6Keys.set(ip, key);
  }
  return key;
}

/** Longer than any address: with server.trustProxy, X-Forwarded-For may carry any text, which must not become a key of kilobytes. */
const MAX_KEY_LENGTH = 64;

/** A key for a text longer than any address: its digest, in the length of one. */
function longKey(text: string): string {
  return `#${createHash('sha256').update(text).digest('base64url')}`;
}

/** normalizeIP parses an IPv6 address twice (ip-address): its answers are kept, a bounded number. */
const ipv6Keys = new Map<string, string>();
const IPV6_KEYS_CACHED = 10_000;

export function rateLimitedError(retryAfterSeconds: number, what: string): GatewayError {
  return new GatewayError('RATE_LIMITED', `Too many requests (${what}); retry in ${retryAfterSeconds} s`, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

/**
 * A gateway request whose service-wide charge waits for its signature check. It holds the client
 * key, not the request: a WeakMap value that reaches its request kept the connection's later
 * requests alive through scavenges (docs/rate-limits.md#cost).
 */
interface Deferred {
  counters: RateLimitCounters;
  key: string;
  charged: boolean;
  verified: boolean;
}
const deferred = new WeakMap<FastifyRequest, Deferred>();
/** The seconds to wait of a request its route's window refused, for the route scope's hook to answer. */
const routeRefusals = new WeakMap<FastifyRequest, number>();

/** The gateway verified this request's signature: it stays outside the service-wide buckets. */
export function markSignatureVerified(req: FastifyRequest): void {
  const d = deferred.get(req);
  if (d) d.verified = true;
}

/**
 * The gateway refused this request's credentials (bad signature, disabled or rotated point): it
 * counts against the service-wide buckets after all, and is answered 429 when they are full.
 */
export function chargeRefusedRequest(req: FastifyRequest): Promise<void> | undefined {
  const d = deferred.get(req);
  if (!d || d.charged) return;
  d.charged = true;
  const refuse = (taken: Taken) => {
    if (taken.waitMs > 0) throw limitedError(req, taken.waitMs);
  };
  const taken = d.counters.take(d.key, null);
  if (taken instanceof Promise) return taken.then(refuse);
  refuse(taken);
}

function limitedError(req: FastifyRequest, waitMs: number): GatewayError {
  const err = rateLimitedError(Math.max(1, Math.ceil(waitMs / 1000)), 'service-wide limit');
  // Refused before any route's CORS handling: let a cross-origin caller read the 429 and its
  // Retry-After (it reveals nothing a same-origin caller would not see).
  if (req.headers.origin) Object.assign(err.headers!, { 'Access-Control-Allow-Origin': '*', 'Access-Control-Expose-Headers': 'Retry-After, X-Request-Id' });
  return err;
}

/**
 * Both layers of limits, on every route of `app` (the root instance): the service-wide buckets, and
 * the window of a route whose config carries one (registerRouteLimits). No-op when disabled.
 * With `serviceWide.gateway` false, signed /api/v1 requests of active merchant points are exempt:
 *  - only a key the gateway's merchant cache already holds as active (`isTrustedKey`, no database
 *    query) defers the charge; every other request, unknown keys included, is counted first;
 *  - a deferred request is exempt only once its signature verified; a refused one is charged (and
 *    may get the 429); an unknown route is counted up front, and a deferred request that never
 *    reached the signature check is counted when it ends. A disabled or rotated point leaves the cache at its next request, so its key
 *    stops deferring at once.
 */
export function registerServiceWideLimits(
  app: FastifyInstance,
  config: RateLimitConfig,
  counters: RateLimitCounters | null,
  isTrustedKey: (apiKey: string) => boolean = () => false,
): void {
  if (!config.enabled || !counters) return;
  app.decorate('rateLimitCounters', counters);
  app.addHook('onClose', async () => counters.close());
  // A callback-style hook: no promise of its own when the counters answer at once (memory).
  app.addHook('onRequest', (req, reply, done) => {
    // Signed merchant back ends are not throttled by the buyer-facing buckets unless asked to be.
    if (!config.serviceWide.gateway && (req.url === '/api/v1' || req.url.startsWith('/api/v1/'))) {
      const key = req.headers['x-api-key'];
      // Deferred only on a matched route, where the gateway checks the signature (not a 404).
      if (typeof key === 'string' && key.length <= 128 && req.routeOptions.url !== undefined && isTrustedKey(key)) {
        const d: Deferred = { counters, key: clientKey(req), charged: false, verified: false };
        deferred.set(req, d);
        // When the answer has gone (or the connection with it), without an onResponse hook on every request.
        reply.raw.once('close', () => {
          if (d.charged || d.verified) return;
          d.charged = true;
          void counters.take(d.key, null);
        });
        done();
        return;
      }
    }
    const route = (req.routeOptions.config as RouteLimitConfig | undefined)?.routeWindow ?? null;
    const taken = counters.take(clientKey(req), route);
    if (taken instanceof Promise) answerLater(taken, req, reply, route, done);
    else done(answer(req, reply, taken, route));
  });
}

/** Apart from the hook, so that a hook answered at once makes no closure. */
function answerLater(taken: Promise<Taken>, req: FastifyRequest, reply: FastifyReply, route: RouteWindow | null, done: (err?: Error) => void): void {
  taken.then((t) => done(answer(req, reply, t, route)), done);
}

/** The route config of a limited route (registerRouteLimits). */
interface RouteLimitConfig {
  routeWindow?: RouteWindow;
}

/**
 * The 429 when the buckets are full; else the route window's headers, as @fastify/rate-limit sends
 * them, and its refusal kept for the route scope's hook.
 */
function answer(req: FastifyRequest, reply: FastifyReply, taken: Taken, route: RouteWindow | null): GatewayError | undefined {
  if (taken.waitMs > 0) return limitedError(req, taken.waitMs);
  const count = taken.route;
  if (route === null || count === undefined) return undefined;
  const resetSeconds = Math.ceil(count.ttl / 1000);
  reply.header('x-ratelimit-limit', route.max).header('x-ratelimit-remaining', route.max > count.current ? route.max - count.current : 0).header('x-ratelimit-reset', resetSeconds);
  if (count.current > route.max) routeRefusals.set(req, Math.max(1, resetSeconds));
  return undefined;
}

/**
 * The per-route limits in `scope` (routes opt in): returns the route config for a named limit, to
 * pass as a route's `config`; the root hook counts the window. Disabled: every config is empty.
 * A hook of this scope answers a refused request, once the scope's earlier hooks (CORS) have run.
 */
export function registerRouteLimits(scope: FastifyInstance, config: RateLimitConfig): (name: RouteLimitName) => Record<string, unknown> {
  if (!config.enabled || !scope.rateLimitCounters) return () => ({});
  scope.addHook('onRequest', (req, _reply, done) => {
    const seconds = routeRefusals.get(req);
    done(seconds === undefined ? undefined : rateLimitedError(seconds, 'route limit'));
  });
  return (name) => ({ routeWindow: { name, ...config.routes[name] } satisfies RouteWindow });
}

