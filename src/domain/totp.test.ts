import { test } from 'node:test';
import assert from 'node:assert/strict';
import { base32Decode, base32Encode, hotp, newTotpSecret, totpAt, verifyTotp } from './totp.ts';

// RFC 6238 Appendix B: the seeds are the ASCII strings below, 8 digits.
const SEEDS = {
  sha1: Buffer.from('12345678901234567890'),
  sha256: Buffer.from('12345678901234567890123456789012'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
};
const VECTORS: [number, string, string, string][] = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

test('hotp() gives the RFC 6238 test vectors for SHA-1, SHA-256 and SHA-512', () => {
  for (const [t, sha1, sha256, sha512] of VECTORS) {
    const counter = BigInt(Math.floor(t / 30));
    assert.equal(hotp(SEEDS.sha1, counter, 8, 'sha1'), sha1, `sha1 at ${t}`);
    assert.equal(hotp(SEEDS.sha256, counter, 8, 'sha256'), sha256, `sha256 at ${t}`);
    assert.equal(hotp(SEEDS.sha512, counter, 8, 'sha512'), sha512, `sha512 at ${t}`);
  }
});

test('base32 round-trips a secret; totpAt is the 6-digit tail of the RFC value', () => {
  assert.equal(base32Encode(SEEDS.sha1), 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  assert.deepEqual(base32Decode('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'), SEEDS.sha1);
  assert.equal(totpAt('GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', 59_000), '287082');
  assert.equal(base32Decode(newTotpSecret()).length, 20);
});

test('verifyTotp() takes one step of skew, refuses other codes and never the same step twice', () => {
  const secret = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';
  const now = 1_111_111_111_000;
  const step = Math.floor(now / 30_000);
  assert.equal(verifyTotp(secret, totpAt(secret, now), now, null), step);
  assert.equal(verifyTotp(secret, totpAt(secret, now - 30_000), now, null), step - 1);
  assert.equal(verifyTotp(secret, totpAt(secret, now + 30_000), now, null), step + 1);
  assert.equal(verifyTotp(secret, totpAt(secret, now - 90_000), now, null), null);
  assert.equal(verifyTotp(secret, totpAt(secret, now), now, step), null, 'a replayed code');
  assert.equal(verifyTotp(secret, 'abcdef', now, null), null);
});
