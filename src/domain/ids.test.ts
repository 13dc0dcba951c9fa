import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCuid } from '@paralleldrive/cuid2';
import { ID_LENGTH, newId, newTimeOrderedId } from './ids.ts';

test('newId() gives distinct CUID2-format ids with a uniform spread of characters', () => {
  const ids = Array.from({ length: 5000 }, newId);
  assert.equal(new Set(ids).size, ids.length);
  for (const id of ids.slice(0, 200)) {
    assert.equal(id.length, ID_LENGTH);
    assert.match(id, /^[a-z][a-z0-9]{23}$/);
    assert.ok(isCuid(id));
  }
  const counts = new Map<string, number>();
  for (const id of ids) for (const c of id.slice(1)) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 36);
  const expected = (ids.length * (ID_LENGTH - 1)) / 36;
  for (const n of counts.values()) assert.ok(Math.abs(n - expected) < expected * 0.1, `skewed: ${n} vs ${expected}`);
});

test('newTimeOrderedId() sorts by creation time, stays distinct within a millisecond, and fits the id column', () => {
  const t = Date.UTC(2026, 10, 24, 6, 0, 0);
  const sameMs = Array.from({ length: 2000 }, () => newTimeOrderedId(t));
  assert.equal(new Set(sameMs).size, sameMs.length);
  for (const id of sameMs.slice(0, 100)) {
    assert.equal(id.length, ID_LENGTH);
    assert.match(id, /^t[0-9a-z]{23}$/);
  }
  // Later ids sort after earlier ones, whatever their random tails (string order is index order).
  const times = [t, t + 1, t + 999, t + 86_400_000, Date.UTC(2100, 0, 1)];
  const ids = times.map((ms) => newTimeOrderedId(ms));
  assert.deepEqual([...ids].sort(), ids);
  assert.ok(newTimeOrderedId(t + 1) > [...sameMs].sort().at(-1)!);
});
