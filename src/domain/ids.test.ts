import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCuid } from '@paralleldrive/cuid2';
import { ID_LENGTH, newId } from './ids.ts';

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
