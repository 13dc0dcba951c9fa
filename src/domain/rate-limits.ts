// The counters of the rate limits (docs/rate-limits.md): what the HTTP hook asks and what each
// store of counts (this process's memory, or the PostgreSQL table every serve process shares) answers.

/** The checkout API's limited routes (config rateLimit.routes). */
export type RouteLimitName = 'invoiceRead' | 'invoiceStatus' | 'checkout' | 'paymentStatus' | 'confirm';

export interface WindowLimit {
  max: number;
  windowMs: number;
}

/** A route's own limit, as the route's config carries it. */
export interface RouteWindow extends WindowLimit {
  name: RouteLimitName;
}

/** A route window's count: the requests counted in the window, this one included, and the ms until it resets. */
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
   * Takes one request of client `key` from the service-wide buckets and, when they allow it and
   * `route` is given, counts it in that route's window (refused there or not). Never rejects.
   */
  take(key: string, route: RouteWindow | null): Taken | Promise<Taken>;
  close(): void;
}

