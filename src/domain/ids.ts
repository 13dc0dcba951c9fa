import { randomFillSync } from 'node:crypto';

// Ids are CUID2-format strings: 24 characters of lowercase base36, the first a letter. They are
// drawn straight from the CSPRNG (about 123 bits), because an invoice id is a bearer capability on
// the checkout surface; the cuid2 package hashes a counter and a fingerprint instead, and costs
// tens of microseconds an id on the hot path.

const ALPHABET = Buffer.from('abcdefghijklmnopqrstuvwxyz0123456789', 'latin1');
export const ID_LENGTH = 24;

// CSPRNG bytes drawn 4 KiB at a time, each byte used once; the id is written into one scratch
// buffer and read out as a string (no buffer and no intermediate strings per id on the hot path).
const random = Buffer.alloc(4096);
let used = random.length;
const scratch = Buffer.alloc(ID_LENGTH);

function randomByte(): number {
  if (used === random.length) {
    randomFillSync(random);
    used = 0;
  }
  return random[used++]!;
}

export function newId(): string {
  for (let i = 0; i < ID_LENGTH; ) {
    const byte = randomByte();
    // Rejection sampling keeps every character uniform: 234 = 9 × 26, 252 = 7 × 36.
    const size = i === 0 ? 26 : 36;
    if (byte >= (size === 26 ? 234 : 252)) continue;
    scratch[i++] = ALPHABET[byte % size]!;
  }
  return scratch.toString('latin1');
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
