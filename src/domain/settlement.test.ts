import { test } from 'node:test';
import assert from 'node:assert/strict';
import { settlementOf } from './settlement.ts';

test('settlementOf: exact, under- and over-payment with the difference in coin units, exactly', () => {
  assert.deepEqual(settlementOf('25', '25.000000', 6), { kind: 'exact', difference: '0' });
  assert.deepEqual(settlementOf('25', '24.5', 6), { kind: 'underpaid', difference: '0.5' });
  assert.deepEqual(settlementOf('25', '30', 6), { kind: 'overpaid', difference: '5' });
  assert.deepEqual(settlementOf('0.008333333333333334', '0.008333333333333333', 18), { kind: 'underpaid', difference: '0.000000000000000001' });
  assert.equal(settlementOf('2500', '0.1234567', 6), null, 'more digits than the coin has: no verdict');
});
