import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLossless } from './solana-source.ts';

test('parseLossless() keeps integers beyond 2^53 digit for digit, as bigints; everything else as JSON.parse reads it', () => {
  const text = '{"preBalances":[9007199254740993,18446744073709551615,9007199254740991,0],"rewards":[{"lamports":-9007199254740993}],"uiAmount":25.5,"slot":336241991,"x":1e20}';
  assert.deepEqual(parseLossless(text), {
    preBalances: [9007199254740993n, 18446744073709551615n, 9007199254740991, 0],
    rewards: [{ lamports: -9007199254740993n }],
    uiAmount: 25.5,
    slot: 336241991,
    x: 1e20, // not written as an integer: left as a number, which no u64 field accepts
  });
  assert.deepEqual(parseLossless('{"a":[123456789012345,"9007199254740993"]}'), { a: [123456789012345, '9007199254740993'] }, 'strings stay strings');
});
