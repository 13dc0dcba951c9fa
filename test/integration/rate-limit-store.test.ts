import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { pino } from 'pino';
import { migrate } from '../../src/store/migrate.ts';
import { openDatabase, type Database } from '../../src/store/orm.ts';
import { SharedRateLimitStore, type FailOpenReason } from '../../src/store/rate-limit-counters.ts';
import type { RouteWindow, Taken, WindowLimit } from '../../src/domain/rate-limits.ts';
import { createTestDatabase, skipUnless } from '../helpers/databases.ts';
import { waitFor } from '../helpers/indexer-process.ts';

// The shared counters (src/store/rate-limit-counters.ts) with two stores on one PostgreSQL
// database, each on a pool of its own, as two `serve` processes have them. Windows are a minute
// long, so nothing here depends on how fast the machine is.

const MINUTE = 60_000;
const HIGH: WindowLimit = { max: 100_000, windowMs: MINUTE };
const CHECKOUT: RouteWindow = { name: 'checkout', max: 10, windowMs: MINUTE };

interface Setup {
  url: string;
  dbs: Database[];
  failOpen: { reason: FailOpenReason; requests: number }[];
  lines: string[];
  store(serviceWide: WindowLimit[], db?: Database): SharedRateLimitStore;
}

async function setup(t: { after(fn: () => Promise<void>): void }): Promise<Setup> {
  const tdb = await createTestDatabase('postgresql');
  const dbs = [await openDatabase(tdb.url), await openDatabase(tdb.url)];
  await migrate(dbs[0]!);
  const stores: SharedRateLimitStore[] = [];
  t.after(async () => {
    for (const s of stores) s.close();
    for (const db of dbs) await db.close();
    await tdb.drop();
  });
  const failOpen: Setup['failOpen'] = [];
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
  return {
    url: tdb.url,
    dbs,
    failOpen,
    lines,
    store(serviceWide, db = dbs[stores.length % 2]!) {
      const s = new SharedRateLimitStore({ db, serviceWide, log, onFailOpen: (reason, requests) => failOpen.push({ reason, requests }) });
      stores.push(s);
      return s;
    },
  };
}

const allowed = (results: Taken[]) => results.filter((r) => r.waitMs === 0).length;

describe('shared rate-limit counters on postgresql', { skip: await skipUnless('postgresql') }, () => {
  test('two stores share the service-wide buckets exactly, one after the other and all at once', async (t) => {
    const s = await setup(t);
    const [a, b] = [s.store([{ max: 5, windowMs: MINUTE }, HIGH]), s.store([{ max: 5, windowMs: MINUTE }, HIGH])];
    const sequential: Taken[] = [];
    for (let i = 0; i < 12; i++) sequential.push(await (i % 2 ? b : a).take('198.51.100.1', null));
    assert.deepEqual(sequential.map((r) => r.waitMs === 0), [true, true, true, true, true, false, false, false, false, false, false, false]);
    for (const r of sequential.slice(5)) assert.ok(r.waitMs > MINUTE - 10_000 && r.waitMs <= MINUTE, `wait ${r.waitMs} ms: until the first of the five leaves the minute`);

    const together = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? b : a).take('198.51.100.2', null)));
    assert.equal(allowed(together), 5, 'forty at once from both stores: five pass');
    // Refused requests are not recorded: the log holds the five that passed.
    const rows = await s.dbs[0]!.em().execute<{ n: number }[]>(`select cardinality(times) as n from rate_limit_log where key = '198.51.100.2'`);
    assert.equal(Number(rows[0]!.n), 5);
    assert.deepEqual(s.failOpen, []);
  });

  test('every bucket must have room: the sustained one refuses once the burst one would allow', async (t) => {
    const s = await setup(t);
    const limits = [HIGH, { max: 3, windowMs: MINUTE }];
    const [a, b] = [s.store(limits), s.store(limits)];
    const results = [await a.take('c', null), await b.take('c', null), await a.take('c', null), await b.take('c', null)];
    assert.deepEqual(results.map((r) => r.waitMs === 0), [true, true, true, false]);
  });

  test('a route window counts the requests that passed the buckets, each in its own place, across stores', async (t) => {
    const s = await setup(t);
    const [a, b] = [s.store([HIGH, HIGH]), s.store([HIGH, HIGH])];
    const counts: number[] = [];
    for (let i = 0; i < 6; i++) counts.push((await (i % 2 ? b : a).take('c', CHECKOUT)).route!.current);
    const together = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? b : a).take('c', CHECKOUT)));
    counts.push(...together.map((r) => r.route!.current));
    assert.deepEqual([...counts].sort((x, y) => x - y), Array.from({ length: 26 }, (_, i) => i + 1), 'places 1 to 26, none twice');
    for (const r of together) assert.ok(r.route!.ttl > 0 && r.route!.ttl <= MINUTE);
    // Another route and another client have windows of their own.
    assert.equal((await a.take('c', { ...CHECKOUT, name: 'confirm' })).route!.current, 1);
    assert.equal((await b.take('d', CHECKOUT)).route!.current, 1);
  });

  test('a request the buckets refuse is not counted in its route window', async (t) => {
    const s = await setup(t);
    const limits = [{ max: 2, windowMs: MINUTE }, HIGH];
    const [a, b] = [s.store(limits), s.store(limits)];
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? b : a).take('c', CHECKOUT)));
    assert.equal(allowed(results), 2);
    assert.deepEqual(results.filter((r) => r.waitMs === 0).map((r) => r.route!.current).sort(), [1, 2]);
    for (const r of results.filter((x) => x.waitMs > 0)) assert.equal(r.route, undefined);
    const rows = await s.dbs[0]!.em().execute<{ count: number }[]>(`select counts[3] as count from rate_limit_log where key = 'c'`);
    assert.equal(rows[0]!.count, 2);
  });

  test('a client on two routes at once: the other route goes with the next statement, each counted in its own window', async (t) => {
    const s = await setup(t);
    const store = s.store([{ max: 2, windowMs: MINUTE }, HIGH]);
    const confirm: RouteWindow = { ...CHECKOUT, name: 'confirm', max: 5 };
    const results = await Promise.all([store.take('c', CHECKOUT), store.take('c', confirm), store.take('c', CHECKOUT)]);
    // Both checkouts leave together and fill the bucket; the confirm, sent after them, is refused.
    assert.deepEqual(results.map((r) => r.waitMs === 0), [true, false, true]);
    assert.deepEqual([results[0]!.route!.current, results[2]!.route!.current], [1, 2]);
    const rows = await s.dbs[0]!.em().execute<{ counts: number[] }[]>(`select counts from rate_limit_log where key = 'c'`);
    assert.deepEqual(rows[0]!.counts.map(Number), [0, 0, 2, 0, 0, 0], 'the checkout window counts 2, the confirm window nothing');
  });

  test('any text is a key of its own, quotes, commas and NULL included', async (t) => {
    const s = await setup(t);
    const store = s.store([{ max: 1, windowMs: MINUTE }, HIGH]);
    const keys = ['a"b', 'a\\b', 'a,b', 'NULL', '{x}', '', ' a b '];
    const results = await Promise.all(keys.flatMap((k) => [store.take(k, CHECKOUT), store.take(k, CHECKOUT)]));
    assert.deepEqual(results.map((r) => r.waitMs === 0), keys.flatMap(() => [true, false]));
    const rows = await s.dbs[0]!.em().execute<{ key: string }[]>(`select key from rate_limit_log order by key`);
    assert.deepEqual(rows.map((r) => r.key), [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))));
    assert.deepEqual(s.failOpen, []);
  });

  test('times leave the sliding window and route windows reset, by the database clock', async (t) => {
    const s = await setup(t);
    const store = s.store([{ max: 2, windowMs: 300 }, HIGH]);
    const short: RouteWindow = { ...CHECKOUT, windowMs: 300 };
    const first = [await store.take('c', short), await store.take('c', short), await store.take('c', short)];
    assert.deepEqual(first.map((r) => r.waitMs === 0), [true, true, false]);
    assert.ok(first[2]!.waitMs > 0 && first[2]!.waitMs <= 300, `wait ${first[2]!.waitMs} ms`);
    assert.deepEqual([first[0]!.route!.current, first[1]!.route!.current], [1, 2]);
    await new Promise((r) => setTimeout(r, 350));
    const later = await store.take('c', short);
    assert.equal(later.waitMs, 0, 'both earlier times have left the window');
    assert.equal(later.route!.current, 1, 'a new route window');
    assert.ok(later.route!.ttl > 200 && later.route!.ttl <= 300, `ttl ${later.route!.ttl} ms`);
  });

  test('a client the store found refused is refused in this process without asking it, until the wait is over', async (t) => {
    const s = await setup(t);
    const store = s.store([{ max: 2, windowMs: 3000 }, HIGH]);
    const first = [await store.take('c', CHECKOUT), await store.take('c', CHECKOUT), await store.take('c', CHECKOUT)];
    assert.deepEqual(first.map((r) => r.waitMs === 0), [true, true, false]);
    const locker = new pg.Client({ connectionString: s.url });
    await locker.connect();
    locker.on('error', () => {});
    await locker.query('begin');
    await locker.query('lock table rate_limit_log in access exclusive mode');
    // The store is locked: only an answer without it comes at once, and it is a refusal, not a pass.
    const meanwhile = store.take('c', CHECKOUT);
    assert.ok(!(meanwhile instanceof Promise), 'answered without a statement');
    assert.ok(meanwhile.waitMs > 0 && meanwhile.waitMs <= first[2]!.waitMs, `wait ${meanwhile.waitMs} ms`);
    assert.equal(meanwhile.route, undefined, 'not counted in its route window');
    await locker.query('rollback');
    await locker.end();
    await new Promise((r) => setTimeout(r, first[2]!.waitMs + 50));
    const after = await store.take('c', CHECKOUT);
    assert.equal(after.waitMs, 0, 'asked again once the wait is over');
    assert.equal(after.route!.current, 3, 'the refused requests were counted in no window');
    assert.deepEqual(s.failOpen, []);
  });

  test('a locked table lets requests through at once, counted and logged once; the store is asked again once it answers', async (t) => {
    const s = await setup(t);
    const limits = [{ max: 3, windowMs: MINUTE }, HIGH];
    const store = s.store(limits);
    const locker = new pg.Client({ connectionString: s.url });
    await locker.connect();
    // Dropping the database at the end ends this session too, if the test has not got to its rollback.
    locker.on('error', () => {});
    await locker.query('begin');
    await locker.query('lock table rate_limit_log in access exclusive mode');

    // Waits at most the deadline, not the pool's 5 s lock_timeout; then everything passes undecided.
    const first = await store.take('c', CHECKOUT);
    assert.deepEqual(first, { waitMs: 0, route: { current: 0, ttl: 0 } });
    assert.deepEqual(s.failOpen, [{ reason: 'timeout', requests: 1 }]);
    const meanwhile = await Promise.all(Array.from({ length: 10 }, () => store.take('c', CHECKOUT)));
    assert.equal(allowed(meanwhile), 10, 'more than the bucket holds, all let through');
    assert.deepEqual(s.failOpen.slice(1).map((f) => f.reason), Array(10).fill('unavailable'));
    const warned = s.lines.filter((l) => l.includes('fail open'));
    assert.equal(warned.length, 1, 'logged once, not once a request');
    assert.match(warned[0]!, /"reason":"timeout"/);

    await locker.query('rollback');
    await locker.end();
    // The statement that waited for the lock returns; then requests are decided by the store again.
    await waitFor('the store answering again', async () => s.lines.some((l) => l.includes('store answers again')), 10_000, 50);
    const after = [];
    for (let i = 0; i < 5; i++) after.push(await store.take('d', null));
    assert.deepEqual(after.map((r) => r.waitMs === 0), [true, true, true, false, false]);
  });

  test('a failing statement lets its requests through and is retried after a pause', async (t) => {
    const s = await setup(t);
    const store = s.store([{ max: 2, windowMs: MINUTE }, HIGH]);
    await s.dbs[0]!.em().execute('alter table rate_limit_log rename to rate_limit_log_away');
    const taken = await Promise.all([store.take('c', null), store.take('c', null), store.take('c', null)]);
    assert.equal(allowed(taken), 3);
    assert.deepEqual(s.failOpen[0], { reason: 'error', requests: 3 });
    assert.match(s.lines.find((l) => l.includes('fail open')) ?? '', /rate_limit_log/);
    await s.dbs[0]!.em().execute('alter table rate_limit_log_away rename to rate_limit_log');
    await waitFor('the store asked again', async () => {
      const r = await store.take('e', null);
      return r.waitMs === 0 && s.lines.some((l) => l.includes('store answers again'));
    }, 10_000, 100);
    const again = [await store.take('f', null), await store.take('f', null), await store.take('f', null)];
    assert.deepEqual(again.map((r) => r.waitMs === 0), [true, true, false]);
  });
});
