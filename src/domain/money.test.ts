import { test } from 'node:test';
import assert from 'node:assert/strict';
import { divCeil, formatUnits, isDecimalString, parseUnits, subtractDecimals } from './money.ts';

test('parseUnits and formatUnits round-trip 18 decimals exactly', () => {
  const s = '123456789012345678901234567890.123456789012345678';
  assert.equal(formatUnits(parseUnits(s, 18), 18), s);
  assert.equal(parseUnits('1', 0), 1n);
  assert.equal(parseUnits('0.000001', 6), 1n);
  assert.equal(formatUnits(0n, 18), '0');
  assert.equal(formatUnits(1500000n, 6), '1.5');
  assert.equal(formatUnits(-5n, 1), '-0.5');
});

test('parseUnits refuses excess precision and non-decimals', () => {
  assert.throws(() => parseUnits('0.1234567', 6), RangeError);
  assert.throws(() => parseUnits('1e5', 6), RangeError);
  assert.throws(() => parseUnits('-1', 6), RangeError);
  assert.throws(() => parseUnits('01', 6), RangeError);
  assert.equal(isDecimalString('1'.repeat(81)), false);
});

test('divCeil rounds up and subtractDecimals is signed', () => {
  assert.equal(divCeil(10n, 3n), 4n);
  assert.equal(divCeil(9n, 3n), 3n);
  assert.equal(divCeil(0n, 7n), 0n);
  assert.equal(subtractDecimals('1.5', '2', 6), '-0.5');
  assert.equal(subtractDecimals('2', '2', 6), '0');
});
