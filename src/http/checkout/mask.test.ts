import { test } from 'node:test';
import assert from 'node:assert/strict';
import { maskEmail, maskName } from './mask.ts';

test('maskEmail keeps the first character and the domain', () => {
  assert.equal(maskEmail('jane@example.com'), 'j***@example.com');
  assert.equal(maskEmail('j@example.com'), 'j***@example.com');
  assert.equal(maskEmail('Jane.Doe+shop@mail.example.co.uk'), 'J***@mail.example.co.uk');
  // The last @ separates the domain (a quoted local part may contain one).
  assert.equal(maskEmail('"a@b"@example.com'), '"***@example.com');
  assert.equal(maskEmail('no-at-sign'), 'n***');
});

test('maskName masks every word and normalises whitespace', () => {
  assert.equal(maskName('Jane Doe'), 'J*** D***');
  assert.equal(maskName('J'), 'J***');
  assert.equal(maskName('  Maria   de la  Cruz '), 'M*** d*** l*** C***');
  assert.equal(maskName('Zoë\tÅsa'), 'Z*** Å***');
  assert.equal(maskName('😀mile Smith'), '😀*** S***');
  assert.equal(maskName(''), '');
});
