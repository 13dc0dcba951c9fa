import type { Database } from '../store/orm.ts';
import { pgStatement } from '../store/raw-sql.ts';
import type { Logger } from '../logger.ts';
import type { RateLimitConfig, RateLimitCounters, RouteWindow, Taken, WindowLimit } from './rate-limit.ts';
import { memoryCounters } from './rate-limit-memory.ts';

// The rate-limit counters every `serve` process on one PostgreSQL database shares
// (docs/rate-limits.md#several-serve-processes), in two unlogged tables of their own
// (migrations/postgresql/Migration20261126000000_rate_limits.js):
//  - rate_limit_log: the service-wide buckets, exact sliding windows as in memory: per client the
//    times of its last allowed requests (as many as the largest bucket holds);
//  - rate_limit_window: the per-route limits, fixed windows as @fastify/rate-limit counts them.
// A request's service-wide charge and its route window's count are taken in one step, and the
// requests arriving while a statement runs leave together as the next statement (one round trip,
// one row update per client and per route window), so the limiter costs the database a statement
// per batch, not per request. Times are the database's clock, the one clock
// every process shares. A store that fails or is slow lets requests through (fail open): a rate
// limiter never takes the checkout down.

/** A decision the store has not answered within this is not waited for: the requests pass. */
const STORE_DEADLINE_MS = 250;
/** After a failure, requests pass without asking the store for this long, then it is tried again. */
const RETRY_AFTER_MS = 1_000;
/** Rows whose windows have all passed are deleted this often (by every process; a cheap scan). */
const SWEEP_EVERY_MS = 60_000;
/** A store that keeps failing is logged at most this often. */
const LOG_EVERY_MS = 60_000;

/** Why a request passed without a decision: the statement failed, did not answer in time, or the store had just failed. */
export type FailOpenReason = 'error' | 'timeout' | 'unavailable';

const UNDECIDED: Taken = Object.freeze({ waitMs: 0, route: Object.freeze({ current: 0, ttl: 0 }) });

// One statement for a batch: ?1 the buckets' maxima and ?2 their windows (ms), ?3 the clients
// [{k, n, q}]: n requests, q the route window of each in arrival order ({route, w}, or {} for none).
// An inserted row's `granted` carries the requested count into the conflict branch, where
// `excluded` is all there is. A client's first `granted` requests pass the buckets, and only those
// are counted in their route windows, as in memory, where a refused request never reaches the
// route's hook. `wait` is the ms until every bucket has room again (null while none is full), or
// until a route window resets.
const TAKE = `with lim as (select * from unnest(?::integer[], ?::bigint[]) as l(m, w)),
clients as (select * from jsonb_to_recordset(?::jsonb) as b(k text, n integer, q jsonb)),
sliding as (
  insert into rate_limit_log as l (key, times, granted, at)
  select b.k, array_fill(c.now, array[g.n]), g.n, c.now
  from clients b,
    lateral (select (extract(epoch from clock_timestamp()) * 1000)::bigint as now) c,
    lateral (select least(b.n, min(lim.m)) as n from lim) g
  on conflict (key) do update set (times, granted, at) = (
    select (l.times || array_fill(c.now, array[g.n]))[greatest(1, cardinality(l.times) + g.n - (select max(m) from lim) + 1):], g.n, c.now
    from (select (extract(epoch from clock_timestamp()) * 1000)::bigint as now) c,
      lateral (
        select greatest(0, least(excluded.granted, min(lim.m - (select count(*) from unnest(l.times) as t where t > c.now - lim.w))))::integer as n
        from lim
      ) g
  )
  returning key, granted as n, (select max(l.times[cardinality(l.times) - lim.m + 1] + lim.w - l.at) from lim where cardinality(l.times) >= lim.m) as wait
),
fixed as (
  insert into rate_limit_window as w (key, count, reset_at, at)
  select e.route || ' ' || s.key, count(*)::integer, max(c.now + e.w), max(c.now)
  from sliding s
    join clients b on b.k = s.key,
    rows from (jsonb_to_recordset(b.q) as (route text, w bigint)) with ordinality as e(route, w, i),
    lateral (select (extract(epoch from clock_timestamp()) * 1000)::bigint as now) c
  where e.i <= s.n and e.route is not null
  group by s.key, e.route
  on conflict (key) do update set (count, reset_at, at) = (
    select case when w.reset_at <= c.now then excluded.count else w.count + excluded.count end,
      case when w.reset_at <= c.now then excluded.reset_at else w.reset_at end, c.now
    from (select (extract(epoch from clock_timestamp()) * 1000)::bigint as now) c
  )
  returning key, count as n, reset_at - at as wait
)
select 's' as kind, * from sliding union all select 'f' as kind, * from fixed`;

// ?1 the longest service-wide window (ms): a log with nothing inside it is as good as none.
const SWEEP = `with clock as (select (extract(epoch from clock_timestamp()) * 1000)::bigint as now),
logs as (delete from rate_limit_log where at < (select now from clock) - ?::bigint)
delete from rate_limit_window where reset_at <= (select now from clock)`;

interface TakeRow {
  kind: 's' | 'f';
  /** The client (s), or the route window: route name and client (f). */
  key: string;
  /** The client's requests that passed the buckets (s), or the requests counted in the window (f). */
  n: number;
  /** ms until the buckets have room (s, null: none is full), or until the window resets (f). */
  wait: string | number | null;
}

/** One request waiting for its batch's statement. */
interface Entry {
  route: RouteWindow | null;
  resolve(taken: Taken): void;
}

/** The requests waiting for one statement, by client in arrival order. */
interface Batch {
  clients: Map<string, Entry[]>;
  size: number;
  settled: boolean;
}

const emptyBatch = (): Batch => ({ clients: new Map(), size: 0, settled: false });

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
  private scheduled = false;
  /** The running statement outlived its deadline: requests pass until it returns. */
  private stalled = false;
  private unavailableUntil = 0;
  private failing = false;
  private letThrough = 0;
  private loggedAt = Number.NEGATIVE_INFINITY;
  private closed = false;
  private readonly sweeper: NodeJS.Timeout;
  private readonly maxima: string;
  private readonly windows: string;

  constructor(private readonly options: SharedRateLimitStoreOptions) {
    this.maxima = `{${options.serviceWide.map((l) => l.max).join(',')}}`;
    this.windows = `{${options.serviceWide.map((l) => l.windowMs).join(',')}}`;
    const longest = Math.max(...options.serviceWide.map((l) => l.windowMs));
    this.sweeper = setInterval(() => {
      pgStatement(options.db, SWEEP, [longest]).catch((err: unknown) => options.log.debug({ err }, 'rate-limit sweep failed'));
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  take(key: string, route: RouteWindow | null): Taken | Promise<Taken> {
    if (this.closed) return UNDECIDED;
    if (this.stalled || Date.now() < this.unavailableUntil) {
      this.failedOpen('unavailable', 1);
      return UNDECIDED;
    }
    return new Promise((resolve) => {
      const batch = this.next;
      const entries = batch.clients.get(key);
      if (entries) entries.push({ route, resolve });
      else batch.clients.set(key, [{ route, resolve }]);
      batch.size++;
      this.schedule();
    });
  }

  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
  }

  /** The next statement leaves once the running one returns, or on the next turn: requests arriving together share it. */
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
    const clients = JSON.stringify(Array.from(batch.clients, ([k, entries]) => ({ k, n: entries.length, q: entries.map((e) => (e.route ? { route: e.route.name, w: e.route.windowMs } : {})) })));
    const deadline = setTimeout(() => this.timedOut(batch), STORE_DEADLINE_MS);
    pgStatement(this.options.db, TAKE, [this.maxima, this.windows, clients]).then(
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
    const windows = new Map<string, TakeRow>();
    const granted = new Map<string, TakeRow>();
    for (const row of rows) (row.kind === 's' ? granted : windows).set(row.key, row);
    // Every client has its row (an upsert always returns one); if one were missing, its requests pass.
    if (granted.size < batch.clients.size) {
      this.failBatch(batch, 'error', new Error('the rate-limit statement returned no row for a client'));
      return;
    }
    batch.settled = true;
    for (const [client, entries] of batch.clients) {
      const row = granted.get(client)!;
      const waitMs = Math.max(1, Number(row.wait ?? 0));
      if (entries.length === 1) {
        // One request (the common case): its window's count is its place.
        const e = entries[0]!;
        const window = e.route ? windows.get(`${e.route.name} ${client}`) : undefined;
        if (row.n < 1) e.resolve({ waitMs });
        else if (!e.route) e.resolve(ALLOWED);
        else if (!window) e.resolve(UNDECIDED);
        else e.resolve({ waitMs: 0, route: { current: window.n, ttl: Math.max(0, Number(window.wait)) } });
        continue;
      }
      // The passing requests of each route window, to give each its own place in the window's count.
      const passing = new Map<string, number>();
      for (let i = 0; i < row.n && i < entries.length; i++) {
        const name = entries[i]!.route?.name;
        if (name) passing.set(name, (passing.get(name) ?? 0) + 1);
      }
      const seen = new Map<string, number>();
      entries.forEach((e, i) => {
        const name = e.route?.name;
        const window = name === undefined ? undefined : windows.get(`${name} ${client}`);
        if (i >= row.n) e.resolve({ waitMs });
        else if (name === undefined) e.resolve(ALLOWED);
        else if (!window) e.resolve(UNDECIDED);
        else {
          const place = (seen.get(name) ?? 0) + 1;
          seen.set(name, place);
          e.resolve({ waitMs: 0, route: { current: window.n - passing.get(name)! + place, ttl: Math.max(0, Number(window.wait)) } });
        }
      });
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
    if (this.next.size > 0) this.send();
  }

  /** Lets every request of the batch through undecided. */
  private failBatch(batch: Batch, reason: FailOpenReason, err: unknown): void {
    batch.settled = true;
    for (const entries of batch.clients.values()) for (const e of entries) e.resolve(UNDECIDED);
    if (batch.size > 0) this.failedOpen(reason, batch.size, err);
    batch.clients.clear();
    batch.size = 0;
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

const ALLOWED: Taken = Object.freeze({ waitMs: 0 });

/**
 * Where this daemon's limits count: in the PostgreSQL database every `serve` process on it shares,
 * or on SQLite (one process) in memory; null when limits are off.
 */
export function createRateLimitCounters(options: { db: Database; config: RateLimitConfig; log: Logger; onFailOpen?: (reason: FailOpenReason, requests: number) => void }): RateLimitCounters | null {
  const { db, config, log, onFailOpen } = options;
  if (!config.enabled) return null;
  if (db.dialect !== 'postgresql') return memoryCounters(config);
  const { burst, sustained } = config.serviceWide;
  return new SharedRateLimitStore({ db, serviceWide: [burst, sustained], log: log.child({ component: 'rate-limit' }), ...(onFailOpen ? { onFailOpen } : {}) });
}
