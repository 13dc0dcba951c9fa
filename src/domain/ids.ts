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

/**
 * An id that sorts by creation time (for rows that are never a capability: idempotency records).
 * A random id puts each new row in a random leaf of the primary-key index, a page of its own to
 * write per insert; these all go to its last leaf, which the inserts of a group commit share. A
 * letter, the creation time in milliseconds (base36, 9 characters), then 14 random characters.
 */
export function newTimeOrderedId(now = Date.now()): string {
  return `t${now.toString(36).padStart(9, '0')}${newId().slice(0, ID_LENGTH - 10)}`;
}
