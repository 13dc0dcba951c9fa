import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { normalizeIP } from '@fastify/rate-limit';
import { MemoryCounters } from '../store/rate-limit-memory.ts';
import { clientKey } from './rate-limit.ts';
import type { RouteWindow, WindowLimit } from '../domain/rate-limits.ts';

/** In-memory counters without their sweep timer; `take` answers the ms to wait (0: allowed). */
function limiter(limits: WindowLimit[], maxClients?: number) {
  const counters = new MemoryCounters(limits, maxClients, null);
  return { counters, take: (key: string, now: number) => counters.take(key, null, now).waitMs };
}

test('the service-wide buckets allow max requests in any window and say when the next one fits', () => {
  const { take } = limiter([{ max: 3, windowMs: 1000 }]);
  assert.equal(take('a', 0), 0);
  assert.equal(take('a', 100), 0);
  assert.equal(take('a', 900), 0);
  assert.equal(take('a', 950), 50, 'the oldest (t=0) leaves the window at t=1000');
  assert.equal(take('b', 950), 0, 'keys are independent');
  assert.equal(take('a', 1000), 0);
  // Sliding, not fixed: at t=1050 the window (50, 1050] holds 100, 900 and 1000.
  assert.equal(take('a', 1050), 50);
  assert.equal(take('a', 1100), 0);
});

test('refused requests do not use up the budget', () => {
  const { take } = limiter([{ max: 1, windowMs: 1000 }]);
  assert.equal(take('a', 0), 0);
  for (let t = 1; t < 1000; t += 100) assert.ok(take('a', t) > 0);
  assert.equal(take('a', 1000), 0);
});

test('every bucket must allow a request; the wait is the longest', () => {
  const { take } = limiter([
    { max: 2, windowMs: 1000 },
    { max: 3, windowMs: 10_000 },
  ]);
  assert.equal(take('a', 0), 0);
  assert.equal(take('a', 10), 0);
  assert.equal(take('a', 20), 980, 'burst: 2 per second');
  assert.equal(take('a', 1000), 0);
  assert.equal(take('a', 2000), 8000, 'sustained: 3 per 10 s, the first leaves at t=10000');
  assert.equal(take('a', 10_000), 0);
});

test('the buckets stay exact once the ring of the largest one has wrapped around', () => {
  const { take } = limiter([
    { max: 2, windowMs: 100 },
    { max: 5, windowMs: 1000 },
  ]);
  const allowed: number[] = [];
  for (let t = 0; t < 5000; t += 10) if (take('a', t) === 0) allowed.push(t);
  // Checked against the definition: at each allowed time, fewer than max earlier allowed ones in each window.
  for (const [i, t] of allowed.entries()) {
    const earlier = allowed.slice(0, i);
    assert.ok(earlier.filter((x) => x > t - 100).length < 2, `burst at ${t}`);
    assert.ok(earlier.filter((x) => x > t - 1000).length < 5, `sustained at ${t}`);
  }
  assert.equal(allowed.length, 25, 'five a second for five seconds');
});

test('idle clients are swept and the number of tracked clients is bounded', () => {
  const { counters, take } = limiter([{ max: 2, windowMs: 1000 }], 3);
  for (const key of ['a', 'b', 'c', 'd']) take(key, 0);
  assert.equal(counters.trackedClients, 3, 'the least recently seen client is forgotten');
  take('b', 500);
  counters.sweep(1200);
  assert.equal(counters.trackedClients, 1, 'only b has a request inside the window');
});

test('a client seen since it was queued is kept when the bound is reached', () => {
  const { counters, take } = limiter([{ max: 1, windowMs: 1000 }], 3);
  for (const key of ['a', 'b', 'c']) take(key, 0);
  take('a', 10);
  take('d', 20);
  assert.equal(counters.trackedClients, 3);
  assert.ok(take('a', 30) > 0, 'a is still counted: b, queued before it and not seen since, was dropped');
  assert.equal(take('b', 30), 0, 'b starts over');
});

const READ: RouteWindow = { name: 'invoiceRead', max: 2, windowMs: 60_000 };

test('a route window counts every request, refused ones included, and resets a window after its first', () => {
  const counters = new MemoryCounters([{ max: 100, windowMs: 1000 }], undefined, null);
  assert.deepEqual(counters.take('a', READ, 0), { waitMs: 0, route: { current: 1, ttl: 60_000 } });
  assert.deepEqual(counters.take('a', READ, 1000), { waitMs: 0, route: { current: 2, ttl: 59_000 } });
  assert.deepEqual(counters.take('a', READ, 2000), { waitMs: 0, route: { current: 3, ttl: 58_000 } }, 'over the limit: the hook refuses it');
  assert.deepEqual(counters.take('a', { ...READ, name: 'checkout' }, 2000), { waitMs: 0, route: { current: 1, ttl: 60_000 } }, 'each route its own window');
  assert.deepEqual(counters.take('b', READ, 2000), { waitMs: 0, route: { current: 1, ttl: 60_000 } }, 'each client its own window');
  assert.deepEqual(counters.take('a', READ, 60_000), { waitMs: 0, route: { current: 1, ttl: 60_000 } }, 'a new window');
});

test('a request the buckets refuse is not counted in its route window, and a running window keeps its client', () => {
  const counters = new MemoryCounters([{ max: 1, windowMs: 1000 }], undefined, null);
  assert.equal(counters.take('a', READ, 0).route?.current, 1);
  assert.deepEqual(counters.take('a', READ, 500), { waitMs: 500 });
  assert.equal(counters.take('a', READ, 1000).route?.current, 2);
  counters.sweep(30_000);
  assert.equal(counters.trackedClients, 1, 'the route window runs until 60 s');
  assert.equal(counters.take('a', READ, 30_000).route?.current, 3);
  counters.sweep(90_001);
  assert.equal(counters.trackedClients, 0);
});

test('clientKey is normalizeIP: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
  for (const ip of ['203.0.113.7', '::ffff:203.0.113.7', '2001:db8:1:2:3:4:5:6', '2001:DB8:1:2::9', '::1', 'not-an-ip', 'Not:An:IP', '']) {
    const req = { ip } as FastifyRequest;
    assert.equal(clientKey(req), normalizeIP(ip), ip);
    assert.equal(clientKey(req), normalizeIP(ip), `${ip} (cached)`);
  }
});

test('clientKey gives a text longer than any address (X-Forwarded-For may carry any) a key of the length of one', () => {
  const long = `${'x'.repeat(5000)}`;
  const keys = [long, `${long}y`, `${'2001:db8:'.repeat(600)}1`].map((ip) => clientKey({ ip } as FastifyRequest));
  for (const key of keys) assert.ok(key.length <= 64, key);
  assert.equal(new Set(keys).size, 3, 'different texts, different keys');
  assert.equal(clientKey({ ip: long } as FastifyRequest), keys[0], 'the same text, the same key');
});
