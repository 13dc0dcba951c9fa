import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashPassword, verifyPassword } from './password-hash.ts';

test('hashPassword() writes argon2id with OWASP parameters; verifyPassword() tells right from wrong', async () => {
  const hash = await hashPassword('correct horse battery staple');
  assert.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  assert.notEqual(await hashPassword('correct horse battery staple'), hash, 'salted');
  assert.equal(await verifyPassword('correct horse battery staple', hash), true);
  assert.equal(await verifyPassword('correct horse battery stapl', hash), false);
  assert.equal(await verifyPassword('x', 'not a hash'), false);
});
