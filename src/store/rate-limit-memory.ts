import type { RateLimitCounters, RouteLimitName, RouteWindow, Taken, WindowLimit } from '../domain/rate-limits.ts';
import type { Config } from '../config/schema.ts';

// The rate-limit counters of a single process (SQLite), in its memory; docs/rate-limits.md.
// One small record per client holds both layers: the times of its allowed requests still inside the
// longest service-wide window (exact sliding windows) and its route windows (fixed windows, as
// @fastify/rate-limit counts them). A request costs one Map lookup; a known client allocates
// nothing but the answer, a new one a record of a few hundred bytes.

/** Distinct clients tracked at once; beyond this the least recently seen are forgotten (a second chance, not a reordering per request). */
const MAX_TRACKED_CLIENTS = 100_000;

/** Each route window's place in a client's `windows` (count, then reset time). */
const ROUTE_SLOT: Record<RouteLimitName, number> = { invoiceRead: 0, invoiceStatus: 2, checkout: 4, paymentStatus: 6, confirm: 8 };
const WINDOW_SLOTS = 10;

const ALLOWED: Taken = Object.freeze({ waitMs: 0 });

// Times are ms since the counters were made, small integers V8 keeps unboxed (for 24 days; then
// boxed numbers, equally correct).
interface Client {
  /** The allowed requests inside the longest service-wide window, oldest first. */
  times: number[];
  /** Per route: the count in its running window, then the time it resets; null until a limited route is asked for. */
  windows: number[] | null;
  seenAt: number;
  /** When it took its place in the eviction order (first seen, or a second chance). */
  queuedAt: number;
}

/**
 * Exact sliding windows for the service-wide buckets: a request is allowed when, for every limit,
 * fewer than `max` allowed requests fall in the last `windowMs`; only then is it recorded, in every
 * limit at once, so one list serves them all. Refused requests are not recorded: a client that
 * backs off regains its budget. An allowed request of a limited route is then counted in that
 * route's fixed window, which starts with the first request and counts every request, the ones it
 * refuses included.
 */
export class MemoryCounters implements RateLimitCounters {
  private readonly clients = new Map<string, Client>();
  private readonly longestWindowMs: number;
  private readonly epoch = Date.now();
  private readonly timer: NodeJS.Timeout | null;

  constructor(
    private readonly limits: readonly WindowLimit[],
    private readonly maxClients = MAX_TRACKED_CLIENTS,
    sweepEveryMs: number | null = Math.max(...limits.map((l) => l.windowMs)),
  ) {
    this.longestWindowMs = Math.max(...limits.map((l) => l.windowMs));
    this.timer = sweepEveryMs === null ? null : setInterval(() => this.sweep(), sweepEveryMs);
    this.timer?.unref();
  }

  take(key: string, route: RouteWindow | null, now = Date.now()): Taken {
    const t = now - this.epoch;
    let client = this.clients.get(key);
    if (client === undefined) {
      // A new client's first request fits every bucket (each max is at least 1).
      client = { times: [t], windows: null, seenAt: t, queuedAt: t };
      this.clients.set(key, client);
      if (this.clients.size > this.maxClients) this.evict(t);
      return route === null ? ALLOWED : countRoute(client, route, t);
    }
    client.seenAt = t;

    const times = client.times;
    // Times that have left the longest window count in none: dropped, so the list stays short.
    let expired = 0;
    while (expired < times.length && times[expired]! <= t - this.longestWindowMs) expired++;
    if (expired > 0) {
      times.copyWithin(0, expired);
      times.length -= expired;
    }
    const size = times.length;
    let waitMs = 0;
    for (let i = 0; i < this.limits.length; i++) {
      const limit = this.limits[i]!;
      if (size < limit.max) continue;
      // The limit.max-th most recent allowed request: the window has room once it has left it.
      const freeAt = times[size - limit.max]! + limit.windowMs;
      if (freeAt - t > waitMs) waitMs = freeAt - t;
    }
    if (waitMs > 0) return { waitMs };
    times.push(t);
    return route === null ? ALLOWED : countRoute(client, route, t);
  }

  /** Forgets clients with nothing left inside any window (called periodically). */
  sweep(now = Date.now()): void {
    const t = now - this.epoch;
    for (const [key, client] of this.clients) if (!this.counts(client, t)) this.clients.delete(key);
  }

  /** Whether anything of the client is still inside a window. */
  private counts(client: Client, t: number): boolean {
    const times = client.times;
    if (times.length > 0 && times[times.length - 1]! > t - this.longestWindowMs) return true;
    const windows = client.windows;
    if (windows) for (let slot = 0; slot < WINDOW_SLOTS; slot += 2) if (windows[slot]! > 0 && windows[slot + 1]! > t) return true;
    return false;
  }

  /**
   * Brings the clients back to the bound: from the longest queued, drops those with nothing left
   * in any window and those not seen since they were queued; one seen since goes to the back once.
   */
  private evict(t: number): void {
    for (const [key, client] of this.clients) {
      if (this.clients.size <= this.maxClients) return;
      this.clients.delete(key);
      if (client.seenAt > client.queuedAt && this.counts(client, t)) {
        client.queuedAt = t;
        this.clients.set(key, client);
      }
    }
  }

  get trackedClients(): number {
    return this.clients.size;
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }
}

/** Counts the request in its route's fixed window, started by the window's first request. */
function countRoute(client: Client, route: RouteWindow, t: number): Taken {
  const windows = (client.windows ??= new Array<number>(WINDOW_SLOTS).fill(0));
  const slot = ROUTE_SLOT[route.name];
  let resetAt = windows[slot + 1]!;
  if (resetAt <= t || windows[slot] === 0) {
    resetAt = t + route.windowMs;
    windows[slot] = 1;
    windows[slot + 1] = resetAt;
  } else windows[slot]!++;
  return { waitMs: 0, route: { current: windows[slot]!, ttl: resetAt - t } };
}

/** Counters in this process's memory: exact for one process, N times each budget for N processes. */
export function memoryCounters(config: Config['rateLimit']): MemoryCounters {
  const { burst, sustained } = config.serviceWide;
  return new MemoryCounters([burst, sustained]);
}
