import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWatchIndex, type WatchRow } from './watch-set.ts';

const row = (id: string, address: string, live: boolean, expiresAt: number): WatchRow => ({ id, address, live, expiresAt });
const sorted = (s: Set<string>) => [...s].sort();

test('a live payment is watched whatever the time; a closed one until the boundary passes its window', () => {
  const index = createWatchIndex();
  index.reset([row('a', 'A', true, 100), row('b', 'B', false, 200)], 50);
  assert.deepEqual(sorted(index.addresses), ['A', 'B']);
  assert.equal(index.advance(200), true);
  assert.deepEqual(sorted(index.addresses), ['A', 'B'], 'watched while expiresAt >= since');
  index.advance(201);
  assert.deepEqual(sorted(index.addresses), ['A']);
  index.advance(10_000);
  assert.deepEqual(sorted(index.addresses), ['A'], 'a live payment never leaves by time');
});

test('a payment that closes outside the window leaves at once; one opened is added', () => {
  const index = createWatchIndex();
  index.reset([row('a', 'A', true, 100)], 500);
  index.apply(row('b', 'B', true, 900));
  assert.deepEqual(sorted(index.addresses), ['A', 'B']);
  index.apply(row('a', 'A', false, 100));
  assert.deepEqual(sorted(index.addresses), ['B']);
  assert.equal(index.has('a'), false);
});

test('an address leased again stays watched while any payment uses it', () => {
  const index = createWatchIndex();
  index.reset([row('old', 'A', false, 300)], 0);
  index.apply(row('new', 'A', true, 900));
  index.advance(400);
  assert.deepEqual(sorted(index.addresses), ['A'], 'the old payment left, the new one holds the address');
  index.apply(row('new', 'A', false, 900));
  index.advance(901);
  assert.deepEqual(sorted(index.addresses), []);
});

test('a payment changed after it was queued for leaving is judged by its new window', () => {
  const index = createWatchIndex();
  index.reset([row('a', 'A', false, 100)], 0);
  index.apply(row('a', 'A', false, 500)); // e.g. a window extended: the first queue entry is stale
  index.advance(200);
  assert.deepEqual(sorted(index.addresses), ['A']);
  index.advance(501);
  assert.deepEqual(sorted(index.addresses), []);
});

test('advance() refuses to move the boundary back (a rollback needs a full read)', () => {
  const index = createWatchIndex();
  index.reset([], 1000);
  assert.equal(index.advance(999), false);
  assert.equal(index.advance(1000), true);
});

test('any sequence of changes and boundaries gives the set a full read would', () => {
  let seed = 7;
  const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
  const truth = new Map<string, WatchRow>();
  const index = createWatchIndex();
  let since = 0;
  index.reset([], since);
  for (let step = 0; step < 5000; step++) {
    const r = rnd();
    if (r < 0.6) {
      const changed = row(`p${Math.floor(rnd() * 300)}`, `A${Math.floor(rnd() * 60)}`, rnd() < 0.4, since - 200 + Math.floor(rnd() * 1000));
      truth.set(changed.id, changed);
      index.apply(changed);
    } else if (r < 0.95) {
      since += Math.floor(rnd() * 40);
      assert.equal(index.advance(since), true);
    } else {
      since -= Math.floor(rnd() * 100);
      if (!index.advance(since)) index.reset(truth.values(), since);
    }
    const expected = new Set([...truth.values()].filter((p) => p.live || p.expiresAt >= since).map((p) => p.address));
    assert.deepEqual(sorted(index.addresses), sorted(expected), `step ${step}`);
  }
});
