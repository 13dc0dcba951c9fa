import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cachePrepared } from './statement-cache.ts';

test('prepared statements: a hit is not prepared again; the oldest unused one goes first, a used one gets a second chance', () => {
  const prepared: string[] = [];
  const prepare = cachePrepared((sql: string) => {
    prepared.push(sql);
    return { sql };
  }, 3);
  const a = prepare('a');
  prepare('b');
  prepare('c');
  assert.equal(prepare('a'), a, 'a hit returns the same statement');
  assert.deepEqual(prepared, ['a', 'b', 'c']);

  // Full: 'a' is the oldest but was used, so it goes round; 'b' (never used since) is dropped.
  prepare('d');
  prepare('a');
  prepare('c');
  assert.deepEqual(prepared, ['a', 'b', 'c', 'd']);
  prepare('b');
  assert.deepEqual(prepared, ['a', 'b', 'c', 'd', 'b'], "'b' was the one dropped");

  // Every entry used: one full turn clears the marks, then the oldest goes ('c', 'a', 'b' held, all used).
  prepare('c');
  prepare('a');
  prepare('b');
  prepare('x');
  assert.deepEqual(prepared.slice(-1), ['x']);
  const before = prepared.length;
  prepare('a');
  prepare('b');
  assert.equal(prepared.length, before, "'a' and 'b' stayed");
  prepare('c');
  assert.deepEqual(prepared.slice(before), ['c'], "'c', the oldest, was dropped");
});

test('prepared statements: a statement used on every turn stays while a thousand others pass through', () => {
  let made = 0;
  const prepare = cachePrepared((sql: string) => {
    made += 1;
    return { sql };
  }, 10);
  for (let i = 0; i < 1000; i++) {
    prepare(`once ${i}`);
    prepare('hot');
  }
  assert.equal(made, 1001, "'hot' was prepared once");
  prepare('once 0');
  assert.equal(made, 1002, 'an old one was dropped');
});
