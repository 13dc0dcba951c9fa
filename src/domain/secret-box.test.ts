import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSecretBox, SecretBoxError } from './secret-box.ts';

const KEY = 'a'.repeat(64);

test('seal() hides the secret and open() returns it', () => {
  const box = createSecretBox(KEY);
  const sealed = box.seal('s3cret', 'row1');
  assert.ok(!sealed.includes('s3cret'));
  assert.notEqual(box.seal('s3cret', 'row1'), sealed, 'a fresh IV each time');
  assert.equal(box.open(sealed, 'row1'), 's3cret');
});

test('open() fails loudly under a wrong master key or a wrong row', () => {
  const sealed = createSecretBox(KEY).seal('s3cret', 'row1');
  assert.throws(() => createSecretBox('b'.repeat(64)).open(sealed, 'row1'), (e: unknown) => e instanceof SecretBoxError && /another master key/.test(e.message));
  assert.throws(() => createSecretBox(KEY).open(sealed, 'row2'), SecretBoxError);
  // One bit of the ciphertext flipped (editing the base64url text could change only its padding bits).
  const [version, keyId, payload] = sealed.split('.') as [string, string, string];
  const raw = Buffer.from(payload, 'base64url');
  raw[14] = raw[14]! ^ 0x01;
  const tampered = `${version}.${keyId}.${raw.toString('base64url')}`;
  assert.throws(() => createSecretBox(KEY).open(tampered, 'row1'), SecretBoxError);
});
