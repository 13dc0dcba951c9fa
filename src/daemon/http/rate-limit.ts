import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastifyRateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { Config } from '../../config/schema.ts';
import { GatewayError } from '../../domain/errors.ts';

// Rate limits (spec "Limits"; docs/rate-limits.md). Two layers, both keyed by the client IP as
// Fastify sees it (req.ip: X-Forwarded-For counts only with server.trustProxy), IPv6 grouped by /64:
//  - per route of the checkout API: @fastify/rate-limit, one fixed window per route and IP;
//  - service-wide, across every route of the daemon: two sliding windows (burst and sustained),
//    both of which must allow a request. @fastify/rate-limit keeps one limit per route, so these
//    are a small counter of our own in a root onRequest hook.
// Where the counters live is a RateLimitCounters: this process's memory (SQLite, one process), or
// the PostgreSQL database every serve process shares (rate-limit-store.ts).

declare module 'fastify' {
  interface FastifyInstance {
    /** The counters of both layers, set on the root instance by registerServiceWideLimits. */
    rateLimitCounters?: RateLimitCounters;
  }
}

export type RateLimitConfig = Config['rateLimit'];
export type RouteLimitName = keyof RateLimitConfig['routes'];

export interface WindowLimit {
  max: number;
  windowMs: number;
}

/** Distinct clients tracked at once; the least recently seen are forgotten beyond this. */
const MAX_TRACKED_CLIENTS = 100_000;

/** A route's own limit, as the route's config carries it when the counters count route windows. */
export interface RouteWindow extends WindowLimit {
  name: RouteLimitName;
}

/** What @fastify/rate-limit's stores answer: the requests counted in the window, this one included, and the ms until it resets. */
export interface WindowCount {
  current: number;
  ttl: number;
}

/** One request as counted: the ms until the service-wide buckets have room (0: allowed), and its route window's count. */
export interface Taken {
  waitMs: number;
  route?: WindowCount;
}

/** Where both layers of limits count. */
export interface RateLimitCounters {
  /**
   * Takes one request of client `key` from the service-wide buckets and, when `route` is given, counts
   * it in that route's window (in the same step, refused or not). Never rejects.
   */
  take(key: string, route: RouteWindow | null): Taken | Promise<Taken>;
  /** True: `take` counts the route windows; false: @fastify/rate-limit counts them in this process's memory. */
  readonly countsRoutes: boolean;
  close(): void;
}

const ALLOWED: Taken = Object.freeze({ waitMs: 0 });

/** Counters in this process's memory: exact for one process, N times each budget for N processes. */
export function memoryCounters(config: RateLimitConfig): RateLimitCounters {
  const { burst, sustained } = config.serviceWide;
  const limiter = new SlidingWindowLimiter([burst, sustained]);
  const timer = setInterval(() => limiter.sweep(), Math.max(burst.windowMs, sustained.windowMs));
  timer.unref();
  return {
    take: (key) => {
      const waitMs = limiter.take(key);
      return waitMs === 0 ? ALLOWED : { waitMs };
    },
    countsRoutes: false,
    close: () => clearInterval(timer),
  };
}

/** The client key both layers use: req.ip (trustProxy applied), an IPv6 address reduced to its /64. */
export function clientKey(req: FastifyRequest): string {
  return normalizeIP(req.ip);
}

export function rateLimitedError(retryAfterSeconds: number, what: string): GatewayError {
  return new GatewayError('RATE_LIMITED', `Too many requests (${what}); retry in ${retryAfterSeconds} s`, {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

/**
 * Exact sliding windows: a request is allowed when, for every limit, fewer than `max` allowed
 * requests fall in the last `windowMs`. Each key keeps a ring of its last `max` allowed timestamps
 * per limit, so the check is O(1) and memory per client is bounded by the sum of the maxima.
 * Refused requests are not recorded: a client that backs off regains its budget.
 */
export class SlidingWindowLimiter {
  private readonly clients = new Map<string, Ring[]>();
  private readonly longestWindowMs: number;

  constructor(
    private readonly limits: readonly WindowLimit[],
    private readonly maxClients = MAX_TRACKED_CLIENTS,
  ) {
    this.longestWindowMs = Math.max(...limits.map((l) => l.windowMs));
  }

  /** Records the request and returns 0 when every limit allows it, else the ms until one does. */
  take(key: string, now = Date.now()): number {
    let rings = this.clients.get(key);
    if (rings) this.clients.delete(key); // re-inserted below: Map order doubles as recency order
    else rings = this.limits.map((l) => ({ times: new Float64Array(l.max), next: 0, size: 0 }));
    this.clients.set(key, rings);
    if (this.clients.size > this.maxClients) this.clients.delete(this.clients.keys().next().value!);

    let waitMs = 0;
    this.limits.forEach((limit, i) => {
      const ring = rings[i]!;
      if (ring.size < limit.max) return;
      const oldest = ring.times[ring.next]!; // full ring: the slot about to be overwritten is the oldest
      const freeAt = oldest + limit.windowMs;
      if (freeAt > now) waitMs = Math.max(waitMs, freeAt - now);
    });
    if (waitMs > 0) return waitMs;
    this.limits.forEach((limit, i) => {
      const ring = rings[i]!;
      ring.times[ring.next] = now;
      ring.next = (ring.next + 1) % limit.max;
      ring.size = Math.min(ring.size + 1, limit.max);
    });
    return 0;
  }

  /** Forgets clients with nothing inside any window (called periodically). */
  sweep(now = Date.now()): void {
    for (const [key, rings] of this.clients) {
      const newest = Math.max(...rings.map((r, i) => (r.size ? r.times[(r.next - 1 + this.limits[i]!.max) % this.limits[i]!.max]! : 0)));
      if (newest + this.longestWindowMs <= now) this.clients.delete(key);
    }
  }

  get trackedClients(): number {
    return this.clients.size;
  }
}

interface Ring {
  times: Float64Array;
  next: number;
  size: number;
}

/** A gateway request whose service-wide charge waits for its signature check. */
interface Deferred {
  /** Takes one request from the buckets; the ms to wait when they are full (0: allowed). */
  charge(): Taken | Promise<Taken>;
  charged: boolean;
  verified: boolean;
}
const deferred = new WeakMap<FastifyRequest, Deferred>();
/** A request's count in its route's window, taken with its service-wide charge (shared counters). */
const routeCounts = new WeakMap<FastifyRequest, WindowCount>();

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
  const taken = d.charge();
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
 * The two service-wide buckets, on every route of `app` (the root instance). No-op when disabled.
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
  // Callback-style hooks: no promise of their own when the counters answer at once (memory).
  app.addHook('onRequest', (req, _reply, done) => {
    // Signed merchant back ends are not throttled by the buyer-facing buckets unless asked to be.
    if (!config.serviceWide.gateway && (req.url === '/api/v1' || req.url.startsWith('/api/v1/'))) {
      const key = req.headers['x-api-key'];
      // Deferred only on a matched route, where the gateway checks the signature (not a 404).
      if (typeof key === 'string' && key.length <= 128 && req.routeOptions.url !== undefined && isTrustedKey(key)) {
        deferred.set(req, { charge: () => counters.take(clientKey(req), null), charged: false, verified: false });
        done();
        return;
      }
    }
    // A shared store counts the route's window in the same round trip; the route's hook reads the count.
    const route = counters.countsRoutes ? ((req.routeOptions.config as { routeWindow?: RouteWindow } | undefined)?.routeWindow ?? null) : null;
    const taken = counters.take(clientKey(req), route);
    if (taken instanceof Promise) taken.then((t) => done(refusal(req, t)), done);
    else done(refusal(req, taken));
  });
  app.addHook('onResponse', (req, _reply, done) => {
    const d = deferred.get(req);
    if (d && !d.charged && !d.verified) {
      d.charged = true;
      void d.charge();
    }
    done();
  });
}

/** Keeps the request's route count for its route's hook; the 429 when the buckets are full. */
function refusal(req: FastifyRequest, taken: Taken): GatewayError | undefined {
  if (taken.route) routeCounts.set(req, taken.route);
  return taken.waitMs > 0 ? limitedError(req, taken.waitMs) : undefined;
}

/**
 * The per-route limits in `scope` (routes opt in): returns the route config for a named limit, to
 * pass as a route's `config`. Disabled: nothing is registered and every config is empty. With
 * counters that count route windows (shared), a hook of this scope answers from the count taken
 * with the service-wide charge; else @fastify/rate-limit counts in memory.
 */
export async function registerRouteLimits(
  scope: FastifyInstance,
  config: RateLimitConfig,
): Promise<(name: RouteLimitName) => Record<string, unknown>> {
  if (!config.enabled) return () => ({});
  if (scope.rateLimitCounters?.countsRoutes) {
    scope.addHook('onRequest', answerRouteCount);
    return (name) => ({ routeWindow: { name, ...config.routes[name] } satisfies RouteWindow });
  }
  await scope.register(fastifyRateLimit, {
    global: false,
    hook: 'onRequest',
    keyGenerator: clientKey,
    cache: 10_000,
    errorResponseBuilder: (_req, ctx) => rateLimitedError(Math.max(1, Math.ceil(ctx.ttl / 1000)), 'route limit'),
  });
  return (name) => {
    const { max, windowMs } = config.routes[name];
    return { rateLimit: { max, timeWindow: windowMs, cache: 10_000 } };
  };
}

/** The headers and the 429 of a route limit, as @fastify/rate-limit gives them, from the count taken in the root hook. */
function answerRouteCount(req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
  const count = routeCounts.get(req);
  const limit = (req.routeOptions.config as { routeWindow?: RouteWindow } | undefined)?.routeWindow;
  if (!count || !limit) {
    done();
    return;
  }
  const resetSeconds = Math.ceil(count.ttl / 1000);
  reply.header('X-RateLimit-Limit', limit.max).header('X-RateLimit-Remaining', Math.max(0, limit.max - count.current)).header('X-RateLimit-Reset', resetSeconds);
  done(count.current > limit.max ? rateLimitedError(Math.max(1, resetSeconds), 'route limit') : undefined);
}
