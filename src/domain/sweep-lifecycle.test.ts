import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SWEEP_TRANSITIONS, SWEEP_TX_STATUSES, sweepTransition } from './sweep-lifecycle.ts';

test('a final sweep transaction never moves again', () => {
  for (const fact of Object.keys(SWEEP_TRANSITIONS) as (keyof typeof SWEEP_TRANSITIONS)[]) assert.equal(sweepTransition('FINAL', fact), null, fact);
});

test('a refused transaction may be sent again and found final; a sent one lost by the chain is signed again', () => {
  assert.equal(sweepTransition('FAILED', 'accepted')?.to, 'SENT');
  assert.equal(sweepTransition('FAILED', 'finalized')?.to, 'FINAL');
  assert.equal(sweepTransition('SENT', 'dropped')?.to, 'SIGNED');
  assert.equal(sweepTransition('SIGNED', 'dropped'), null);
  assert.equal(sweepTransition('SIGNED', 'reverted'), null, 'only what the chain included can revert');
});

test('every transition starts and ends in a known status', () => {
  for (const t of Object.values(SWEEP_TRANSITIONS)) {
    assert.ok(SWEEP_TX_STATUSES.includes(t.to));
    for (const from of t.from) assert.ok(SWEEP_TX_STATUSES.includes(from));
  }
});
