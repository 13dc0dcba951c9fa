import { randomBytes } from 'node:crypto';

// Ids are CUID2-format strings: 24 characters of lowercase base36, the first a letter. They are
// drawn straight from the CSPRNG (about 123 bits), because an invoice id is a bearer capability on
// the checkout surface; the cuid2 package hashes a counter and a fingerprint instead, and costs
// tens of microseconds an id on the hot path.

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const ID_LENGTH = 24;

export function newId(): string {
  let out = '';
  while (out.length < ID_LENGTH) {
    for (const byte of randomBytes(32)) {
      // Rejection sampling keeps every character uniform: 234 = 9 × 26, 252 = 7 × 36.
      const size = out.length === 0 ? 26 : 36;
      if (byte >= (size === 26 ? 234 : 252)) continue;
      out += ALPHABET[byte % size];
      if (out.length === ID_LENGTH) break;
    }
  }
  return out;
}
