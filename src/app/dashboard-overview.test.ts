import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalConfirmingMs, periodStarts, stuckAfterMs } from './dashboard-overview.ts';

test('today and this month begin at UTC midnight', () => {
  const { day, month } = periodStarts(new Date('2026-11-28T23:59:59.999Z'));
  assert.equal(day.toISOString(), '2026-11-28T00:00:00.000Z');
  assert.equal(month.toISOString(), '2026-11-01T00:00:00.000Z');
  assert.equal(periodStarts(new Date('2026-01-01T00:00:00.000Z')).month.toISOString(), '2026-01-01T00:00:00.000Z');
});

test('a payment is stuck past twice its confirmations at the block time, plus 10 minutes', () => {
  assert.equal(normalConfirmingMs({ blockTimeMs: 12_000 }, 12), 144_000);
  assert.equal(stuckAfterMs({ blockTimeMs: 12_000 }, 12), 2 * 144_000 + 600_000);
  // Bitcoin's three 10-minute blocks: about half an hour is normal, 70 minutes is stuck.
  assert.equal(stuckAfterMs({ blockTimeMs: 600_000 }, 3), 70 * 60_000);
});
