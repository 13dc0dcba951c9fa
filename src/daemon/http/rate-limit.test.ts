import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SlidingWindowLimiter } from './rate-limit.ts';

test('SlidingWindowLimiter allows max requests in any window and says when the next one fits', () => {
  const limiter = new SlidingWindowLimiter([{ max: 3, windowMs: 1000 }]);
  assert.equal(limiter.take('a', 0), 0);
  assert.equal(limiter.take('a', 100), 0);
  assert.equal(limiter.take('a', 900), 0);
  assert.equal(limiter.take('a', 950), 50, 'the oldest (t=0) leaves the window at t=1000');
  assert.equal(limiter.take('b', 950), 0, 'keys are independent');
  assert.equal(limiter.take('a', 1000), 0);
  // Sliding, not fixed: at t=1050 the window (50, 1050] holds 100, 900 and 1000.
  assert.equal(limiter.take('a', 1050), 50);
  assert.equal(limiter.take('a', 1100), 0);
});

test('refused requests do not use up the budget', () => {
  const limiter = new SlidingWindowLimiter([{ max: 1, windowMs: 1000 }]);
  assert.equal(limiter.take('a', 0), 0);
  for (let t = 1; t < 1000; t += 100) assert.ok(limiter.take('a', t) > 0);
  assert.equal(limiter.take('a', 1000), 0);
});

test('every limit must allow a request; the wait is the longest', () => {
  const limiter = new SlidingWindowLimiter([
    { max: 2, windowMs: 1000 },
    { max: 3, windowMs: 10_000 },
  ]);
  assert.equal(limiter.take('a', 0), 0);
  assert.equal(limiter.take('a', 10), 0);
  assert.equal(limiter.take('a', 20), 980, 'burst: 2 per second');
  assert.equal(limiter.take('a', 1000), 0);
  assert.equal(limiter.take('a', 2000), 8000, 'sustained: 3 per 10 s, the first leaves at t=10000');
  assert.equal(limiter.take('a', 10_000), 0);
});

test('idle clients are swept and the number of tracked clients is bounded', () => {
  const limiter = new SlidingWindowLimiter([{ max: 2, windowMs: 1000 }], 3);
  for (const key of ['a', 'b', 'c', 'd']) limiter.take(key, 0);
  assert.equal(limiter.trackedClients, 3, 'the least recently seen client is forgotten');
  limiter.take('b', 500);
  limiter.sweep(1200);
  assert.equal(limiter.trackedClients, 1, 'only b has a request inside the window');
});
