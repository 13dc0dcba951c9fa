import type { Database } from './orm.ts';
import { pgStatement } from './raw-sql.ts';
import type { Logger } from '../logger.ts';
import type { RateLimitCounters, RouteLimitName, RouteWindow, Taken, WindowLimit } from '../domain/rate-limits.ts';

// The rate-limit counters every `serve` process on one PostgreSQL database shares
// (docs/rate-limits.md#several-serve-processes), one row per client in an unlogged table of their
// own (`rate_limit_log`, migrations/postgresql/Migration20261129120000_rate_limit_rows.js):
//  - the service-wide buckets, exact sliding windows as in memory: the times of the client's last
//    allowed requests (as many as the largest bucket holds);
//  - the per-route limits, fixed windows as @fastify/rate-limit counts them: a count and a reset
//    time per route.
// A request's service-wide charge and its route window's count are taken in one step, and the
// requests arriving while a statement runs leave together
// as the next statement (one round trip, one row update per client), so the limiter costs the
// database a statement per batch, not per request. Times are the database's clock, the one clock every process shares. A store that fails
// or is slow lets requests through (fail open): a rate limiter never takes the checkout down.

/** A decision the store has not answered within this is not waited for: the requests pass. */
const STORE_DEADLINE_MS = 250;
/** After a failure, requests pass without asking the store for this long, then it is tried again. */
const RETRY_AFTER_MS = 1_000;
/** Rows whose windows have all passed are deleted this often (by every process; a cheap scan). */
const SWEEP_EVERY_MS = 60_000;
/** A store that keeps failing is logged at most this often. */
const LOG_EVERY_MS = 60_000;
/** Clients known to be refused until a time, at most this many (then forgotten at once). */
const MAX_REFUSED_CLIENTS = 10_000;

/** Why a request passed without a decision: the statement failed, did not answer in time, or the store had just failed. */
export type FailOpenReason = 'error' | 'timeout' | 'unavailable';

const UNDECIDED: Taken = Object.freeze({ waitMs: 0, route: Object.freeze({ current: 0, ttl: 0 }) });
const ALLOWED: Taken = Object.freeze({ waitMs: 0 });

/** Each route window's slot in a row's `counts` and `resets`; requests of routes without a window count in the last, unread. */
const ROUTE_SLOT: Record<RouteLimitName, number> = { invoiceRead: 1, invoiceStatus: 2, checkout: 3, paymentStatus: 4, confirm: 5 };
const NO_ROUTE = 6;

/** The database's clock in epoch ms (clock_timestamp: when the statement runs, not when its transaction began). */
const NOW = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;

/**
 * The statement for a batch, for `buckets` service-wide buckets: $1 the clients, $2 how many
 * requests each has in the batch, $3 their route slot, $4 its window (ms); then each bucket's max
 * and window (ms), and last the largest max. A client's requests in one statement share one route
 * slot (the store sends the others with the next one).
 *
 * A new row takes the first min(max) requests. On conflict, `excluded` holds the proposed row:
 * its `granted` is the requested count (at most the smallest max), its `at` the statement's time, its `resets` at the slot
 * the time plus the route's window. The requests that pass are as many as every bucket has room
 * for: a bucket's allowed requests inside its window are its times after now − window, counted by
 * width_bucket's binary search over the sorted times. Only those are recorded and counted in their
 * route window. A row another process wrote after this statement's time keeps its later time
 * (`greatest(excluded.at, r.at)`), so a row's times stay sorted; checking against the earlier time
 * can only refuse more. `wait` is the ms until every full bucket has room again (null while none
 * is full).
 */
function takeStatement(buckets: number): string {
  const max = (i: number) => `$${5 + 2 * i}::integer`;
  const window = (i: number) => `$${6 + 2 * i}::bigint`;
  const all = (f: (i: number) => string) => Array.from({ length: buckets }, (_, i) => f(i)).join(', ');
  const largest = `$${5 + 2 * buckets}::integer`;
  const granted = `greatest(0, least(excluded.granted, ${all((i) => `${max(i)} - cardinality(r.times) + width_bucket(excluded.at - ${window(i)}, r.times)`)}))`;
  const slot = 'excluded.slot';
  return `insert into rate_limit_log as r (key, slot, granted, times, at, counts, resets)
select b.k, b.s, b.g, array_fill(c.now, array[b.g]), c.now,
  array_fill(0, array[b.s - 1]) || b.g || array_fill(0, array[${NO_ROUTE} - b.s]),
  array_fill(0::bigint, array[b.s - 1]) || (c.now + b.w) || array_fill(0::bigint, array[${NO_ROUTE} - b.s])
from unnest($1::text[], $2::integer[], $3::integer[], $4::bigint[]) as a(k, n, s, w),
  lateral (select a.k, a.s, a.w, least(a.n, ${all(max)}) as g) b,
  (select ${NOW} as now) c
on conflict (key) do update set slot = ${slot}, granted = ${granted},
  times = (r.times || array_fill(greatest(excluded.at, r.at), array[${granted}]))[greatest(1, cardinality(r.times) + ${granted} - ${largest} + 1):],
  at = greatest(excluded.at, r.at),
  counts[${slot}] = case when ${granted} = 0 then r.counts[${slot}] when r.resets[${slot}] > excluded.at then r.counts[${slot}] + ${granted} else ${granted} end,
  resets[${slot}] = case when ${granted} > 0 and r.resets[${slot}] <= excluded.at then greatest(excluded.at, r.at) + excluded.resets[${slot}] - excluded.at else r.resets[${slot}] end
returning key, granted, greatest(${all((i) => `case when cardinality(times) >= ${max(i)} then times[cardinality(times) - ${max(i)} + 1] + ${window(i)} - at end`)}) as wait,
  counts[slot] as count, resets[slot] - at as ttl`;
}

// $1 the longest service-wide window (ms): a row with no allowed request inside it (`at` is its
// last write) and every route window passed is as good as none.
const SWEEP = `delete from rate_limit_log where at < (extract(epoch from now()) * 1000)::bigint - $1::bigint
  and greatest(${Array.from({ length: NO_ROUTE }, (_, i) => `resets[${i + 1}]`).join(', ')}) <= (extract(epoch from now()) * 1000)::bigint`;

interface TakeRow {
  key: string;
  /** The client's requests that passed the buckets. */
  granted: number;
  /** ms until every full bucket has room (null: none is full). */
  wait: string | number | null;
  /** The requests counted in the route window, these included, and the ms until it resets. */
  count: number;
  ttl: string | number;
}

/** One client's requests in one statement, in arrival order: all on one route slot. */
interface Group {
  route: RouteWindow | null;
  slot: number;
  resolves: ((taken: Taken) => void)[];
}

/** A request of a client already in the batch on another route: it goes with the next statement. */
interface Later {
  key: string;
  route: RouteWindow | null;
  resolve(taken: Taken): void;
}

/** The requests waiting for one statement, by client in arrival order. */
interface Batch {
  clients: Map<string, Group>;
  /** The requests in `clients`. */
  size: number;
  later: Later[] | null;
  settled: boolean;
  /** When its statement left (performance.now()). */
  sentAt: number;
}

const emptyBatch = (): Batch => ({ clients: new Map(), size: 0, later: null, settled: false, sentAt: 0 });

function add(batch: Batch, key: string, route: RouteWindow | null, resolve: (taken: Taken) => void): void {
  const slot = route ? ROUTE_SLOT[route.name] : NO_ROUTE;
  const group = batch.clients.get(key);
  if (group === undefined) batch.clients.set(key, { route, slot, resolves: [resolve] });
  else if (group.slot === slot) group.resolves.push(resolve);
  else {
    (batch.later ??= []).push({ key, route, resolve });
    return;
  }
  batch.size++;
}

/** A text[] literal element: quoted, so that no key reads as NULL or splits the array. */
function arrayElement(key: string): string {
  return key.includes('"') || key.includes('\\') ? `"${key.replace(/["\\]/g, '\\$&')}"` : `"${key}"`;
}

export interface SharedRateLimitStoreOptions {
  db: Database;
  /** The service-wide buckets (burst, sustained). */
  serviceWide: readonly WindowLimit[];
  log: Logger;
  /** Told of every request let through undecided (the metrics). */
  onFailOpen?: (reason: FailOpenReason, requests: number) => void;
}

/** The counters of both layers in the PostgreSQL database, shared by every `serve` process on it. */
export class SharedRateLimitStore implements RateLimitCounters {
  private next = emptyBatch();
  private running: Batch | null = null;
  /** A send is due on the next turn. */
  private scheduled = false;
  /** The running statement outlived its deadline: requests pass until it returns. */
  private stalled = false;
  private unavailableUntil = 0;
  private failing = false;
  private letThrough = 0;
  private loggedAt = Number.NEGATIVE_INFINITY;
  private closed = false;
  /**
   * Clients whose service-wide buckets the store found full, and until when (performance.now()):
   * a bucket gains room only as its times leave its window, so until then every request of the
   * client is refused, in every process, and is recorded nowhere; this process refuses it without
   * asking the store.
   */
  private readonly refused = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly take_: string;
  /** The buckets' parameters: each max and window, then the largest max. */
  private readonly bucketParams: number[];

  constructor(private readonly options: SharedRateLimitStoreOptions) {
    const buckets = options.serviceWide;
    if (buckets.length === 0) throw new Error('the shared rate-limit store needs at least one service-wide bucket');
    this.take_ = takeStatement(buckets.length);
    this.bucketParams = [...buckets.flatMap((l) => [l.max, l.windowMs]), Math.max(...buckets.map((l) => l.max))];
    const longest = Math.max(...buckets.map((l) => l.windowMs));
    this.sweeper = setInterval(() => {
      const now = performance.now();
      for (const [key, until] of this.refused) if (until <= now) this.refused.delete(key);
      pgStatement(options.db, SWEEP, [longest]).catch((err: unknown) => options.log.debug({ err }, 'rate-limit sweep failed'));
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  take(key: string, route: RouteWindow | null): Taken | Promise<Taken> {
    if (this.closed) return UNDECIDED;
    if (this.refused.size > 0) {
      const until = this.refused.get(key);
      if (until !== undefined) {
        const waitMs = Math.ceil(until - performance.now());
        if (waitMs > 0) return { waitMs };
        this.refused.delete(key);
      }
    }
    if (this.stalled || Date.now() < this.unavailableUntil) {
      this.failedOpen('unavailable', 1);
      return UNDECIDED;
    }
    return new Promise((resolve) => {
      add(this.next, key, route, resolve);
      this.schedule();
    });
  }

  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
  }

  /**
   * The next statement leaves on the turn after the running one has returned: the requests that
   * arrived meanwhile share it. No wait is added between statements: with a fixed number of
   * connections a read's latency is its throughput (docs/rate-limits.md#cost).
   */
  private schedule(): void {
    if (this.running || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.send());
  }

  private send(): void {
    this.scheduled = false;
    if (this.running || this.next.size === 0) return;
    const batch = this.next;
    this.next = emptyBatch();
    this.running = batch;
    batch.sentAt = performance.now();
    if (batch.later) {
      for (const l of batch.later) add(this.next, l.key, l.route, l.resolve);
      batch.later = null;
    }
    // Array literals built here: cheaper than the driver's escaping of each element.
    let keys = '';
    let counts = '';
    let slots = '';
    let windows = '';
    for (const [key, group] of batch.clients) {
      const sep = keys === '' ? '' : ',';
      keys += sep + arrayElement(key);
      counts += sep + group.resolves.length;
      slots += sep + group.slot;
      windows += sep + (group.route?.windowMs ?? 0);
    }
    const deadline = setTimeout(() => this.timedOut(batch), STORE_DEADLINE_MS);
    pgStatement(this.options.db, this.take_, [`{${keys}}`, `{${counts}}`, `{${slots}}`, `{${windows}}`, ...this.bucketParams]).then(
      (res) => {
        clearTimeout(deadline);
        if (!batch.settled) this.settle(batch, res.rows as TakeRow[]);
        this.finished(null);
      },
      (err: unknown) => {
        clearTimeout(deadline);
        if (!batch.settled) this.failBatch(batch, 'error', err);
        this.finished(err);
      },
    );
  }

  private settle(batch: Batch, rows: TakeRow[]): void {
    // Every client has its row (an upsert always returns one); if one were missing, the batch passes.
    if (rows.length !== batch.clients.size) {
      this.failBatch(batch, 'error', new Error(`the rate-limit statement returned ${rows.length} rows for ${batch.clients.size} clients`));
      return;
    }
    batch.settled = true;
    for (const row of rows) {
      const group = batch.clients.get(row.key)!;
      const { resolves, route } = group;
      const granted = row.granted;
      if (resolves.length === 1 && granted === 1) {
        // One request that passed (the common case): its window's count is its place.
        resolves[0]!(route ? { waitMs: 0, route: { current: row.count, ttl: Math.max(0, Number(row.ttl)) } } : ALLOWED);
        continue;
      }
      const waitMs = Math.max(1, Number(row.wait ?? 0));
      // The wait counts from the statement's time, which is after it left: from then on, it is sure.
      if (granted < resolves.length && Number(row.wait) > 0) {
        if (this.refused.size >= MAX_REFUSED_CLIENTS) this.refused.clear();
        this.refused.set(row.key, batch.sentAt + waitMs);
      }
      const ttl = Math.max(0, Number(row.ttl));
      for (let i = 0; i < resolves.length; i++) {
        if (i >= granted) resolves[i]!({ waitMs });
        else resolves[i]!(route ? { waitMs: 0, route: { current: row.count - granted + i + 1, ttl } } : ALLOWED);
      }
    }
  }

  /** The statement outlived its deadline: its requests and those waiting behind it pass, and so do new ones until it returns. */
  private timedOut(batch: Batch): void {
    this.stalled = true;
    this.failBatch(batch, 'timeout', new Error(`the rate-limit store did not answer within ${STORE_DEADLINE_MS} ms`));
    const waiting = this.next;
    this.next = emptyBatch();
    this.failBatch(waiting, 'timeout', null);
  }

  private finished(err: unknown): void {
    this.running = null;
    this.stalled = false;
    if (err !== null) {
      this.unavailableUntil = Date.now() + RETRY_AFTER_MS;
      const waiting = this.next;
      this.next = emptyBatch();
      this.failBatch(waiting, 'unavailable', null);
      return;
    }
    if (this.failing) {
      this.failing = false;
      this.options.log.info({ letThrough: this.letThrough }, 'the rate-limit store answers again; requests are counted in it again');
      this.letThrough = 0;
      this.loggedAt = Number.NEGATIVE_INFINITY;
    }
    if (this.next.size > 0) this.schedule();
  }

  /** Lets every request of the batch through undecided. */
  private failBatch(batch: Batch, reason: FailOpenReason, err: unknown): void {
    batch.settled = true;
    let requests = batch.size;
    for (const group of batch.clients.values()) for (const resolve of group.resolves) resolve(UNDECIDED);
    if (batch.later) {
      for (const l of batch.later) l.resolve(UNDECIDED);
      requests += batch.later.length;
    }
    if (requests > 0) this.failedOpen(reason, requests, err);
    batch.clients.clear();
    batch.size = 0;
    batch.later = null;
  }

  /** Counted in the metrics; logged on the first failure, then at most once a LOG_EVERY_MS with the number let through. */
  private failedOpen(reason: FailOpenReason, requests: number, err: unknown = null): void {
    if (this.closed) return;
    this.options.onFailOpen?.(reason, requests);
    this.failing = true;
    this.letThrough += requests;
    const now = Date.now();
    if (now - this.loggedAt < LOG_EVERY_MS) return;
    this.loggedAt = now;
    this.options.log.warn(
      { err: err ?? undefined, reason, letThrough: this.letThrough },
      'the rate-limit store failed: requests pass without a rate-limit decision (fail open) until it answers again',
    );
  }
}
