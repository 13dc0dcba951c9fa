import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../config/load-config.ts';
import { retryDelayMs, retryPolicyFromConfig } from './retry-policy.ts';

test('the default schedule is 10 s, 1 min, 10 min, 1 h, 6 h, 24 h after attempts 1..6, then gives up', () => {
  const policy = retryPolicyFromConfig(loadConfig({ env: {} }).config.webhooks);
  const mid = () => 0.5; // no jitter
  assert.deepEqual([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(policy, n, mid)), [10_000, 60_000, 600_000, 3_600_000, 21_600_000, 86_400_000]);
  assert.equal(retryDelayMs(policy, 7, mid), null);
});

test('jitter stretches or shrinks each wait by at most retryJitter', () => {
  const policy = { maxAttempts: 7, scheduleSeconds: [10], jitter: 0.1 };
  assert.equal(retryDelayMs(policy, 1, () => 0), 9_000);
  assert.equal(retryDelayMs(policy, 1, () => 1), 11_000);
  for (let i = 0; i < 100; i++) {
    const d = retryDelayMs(policy, 1)!;
    assert.ok(d >= 9_000 && d <= 11_000, String(d));
  }
});

test('maxAttempts 1 is the spec\'s single attempt; a short schedule repeats its last wait', () => {
  assert.equal(retryDelayMs({ maxAttempts: 1, scheduleSeconds: [10], jitter: 0 }, 1), null);
  const long = { maxAttempts: 10, scheduleSeconds: [1, 2], jitter: 0 };
  assert.deepEqual([1, 2, 3, 9].map((n) => retryDelayMs(long, n)), [1000, 2000, 2000, 2000]);
  assert.equal(retryDelayMs(long, 10), null);
});
