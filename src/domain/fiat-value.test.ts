import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coinToMinor, formatFiat, minorAtRate } from './fiat-value.ts';

test('coin amounts at a priced rate are exact minor units, signed, rounded half up', () => {
  assert.equal(coinToMinor('24.5', 6, '1', 'USD'), 2450n);
  assert.equal(coinToMinor('0.008333333333333334', 18, '3000', 'USD'), 2500n);
  assert.equal(minorAtRate(-500000n, 6, '1', 'USD'), -50n);
  assert.equal(minorAtRate(5n, 2, '1', 'USD'), 5n);
  assert.equal(coinToMinor('1', 8, '60000.5', 'JPY'), 60001n);
  assert.equal(coinToMinor('1', 6, null, 'USD'), null, 'verbatim pricing has no rate');
  assert.equal(coinToMinor('1', 6, '1', 'XYZ'), null, 'not an ISO currency');
  assert.equal(coinToMinor('1.1234567', 6, '1', 'USD'), null, 'more decimals than the coin has');
});

test('fiat amounts keep all their minor digits', () => {
  assert.equal(formatFiat(2450n, 'USD'), '24.50');
  assert.equal(formatFiat(-50n, 'USD'), '-0.50');
  assert.equal(formatFiat(2500n, 'EUR'), '25.00');
  assert.equal(formatFiat(45000n, 'JPY'), '45000');
  assert.equal(formatFiat(1000n, 'KWD'), '1.000');
  assert.equal(formatFiat(0n, 'USD'), '0.00');
});
