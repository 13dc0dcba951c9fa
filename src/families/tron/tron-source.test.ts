import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hexToTron, tronToHex } from './address.ts';

test('Tron addresses map to and from their 20-byte hex form', () => {
  // Tether's TRC-20 contract: base58 and hex forms as published on Tronscan
  assert.equal(tronToHex('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t'), '0xa614f803b6fd780986a42c78ec9c7f77e6ded13c');
  assert.equal(hexToTron('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c'), 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  assert.equal(tronToHex('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6T'), null, 'a broken checksum maps to nothing');
  assert.equal(tronToHex('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c'), null);
});
