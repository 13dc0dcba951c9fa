import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settlementOf } from './settlement.ts';

test('settlementOf(payment): exact, underpaid, overpaid, with the difference as an exact decimal string', () => {
  assert.deepEqual(settlementOf({ expectedAmount: '25', receivedAmount: '24.5' }), { kind: 'underpaid', difference: '0.5', expected: '25', received: '24.5' });
  assert.equal(settlementOf({ expectedAmount: '25', receivedAmount: '30.000000' }).difference, '5');
  assert.equal(settlementOf({ expectedAmount: '0.00831233233303932', receivedAmount: '0.00831233233303932' }).kind, 'exact');
  assert.deepEqual(settlementOf({ expectedAmount: '0.1', receivedAmount: '0.100000000000000001' }), { kind: 'overpaid', difference: '0.000000000000000001', expected: '0.1', received: '0.100000000000000001' });
  assert.throws(() => settlementOf({ expectedAmount: '1e3', receivedAmount: '1' }), /not a decimal amount/);
});
