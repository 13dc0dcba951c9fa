import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatReferenceId, isValidReferenceId, referenceDay } from './reference-id.ts';

test('formatReferenceId() gives INV-YYMMDD-NNNL with a check letter', () => {
  const day = referenceDay(new Date('2026-11-21T23:59:59.999Z'));
  assert.equal(day, '261121');
  const id = formatReferenceId('INV', day, 7);
  assert.match(id, /^INV-261121-007[A-Z]$/);
  assert.ok(isValidReferenceId(id));
  assert.match(formatReferenceId('PAY', day, 12345), /^PAY-261121-12345[A-Z]$/);
});

test('isValidReferenceId() catches a mistyped digit', () => {
  const id = formatReferenceId('PAY', '261121', 42);
  const typo = id.replace('042', '043');
  assert.equal(isValidReferenceId(typo), false);
});
