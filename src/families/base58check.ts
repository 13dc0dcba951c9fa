import { createHash } from 'node:crypto';

// Base58 and Base58Check of any payload length. bitcoinjs-lib only decodes its own 21-byte address
// payloads, and we also need to recognise 78-byte extended keys and WIF keys to refuse them.

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]+$/;

export function decodeBase58(text: string): Uint8Array | null {
  if (!BASE58_RE.test(text)) return null;
  let value = 0n;
  for (const char of text) value = value * 58n + BigInt(ALPHABET.indexOf(char));
  const body: number[] = [];
  while (value > 0n) {
    body.push(Number(value & 0xffn));
    value >>= 8n;
  }
  // Each leading '1' stands for one leading zero byte.
  const zeros = /^1*/.exec(text)?.[0].length ?? 0;
  return Uint8Array.from([...new Array<number>(zeros).fill(0), ...body.reverse()]);
}

export function encodeBase58(bytes: Uint8Array): string {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  let out = '';
  while (value > 0n) {
    out = ALPHABET[Number(value % 58n)] + out;
    value /= 58n;
  }
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  return '1'.repeat(zeros) + out;
}

function checksum(payload: Uint8Array): Uint8Array {
  const once = createHash('sha256').update(payload).digest();
  return createHash('sha256').update(once).digest().subarray(0, 4);
}

/** The payload without its 4-byte checksum, or null when the text is not valid Base58Check. */
export function decodeBase58Check(text: string): Uint8Array | null {
  const raw = decodeBase58(text);
  if (!raw || raw.length < 5) return null;
  const payload = raw.subarray(0, raw.length - 4);
  const expected = checksum(payload);
  for (let i = 0; i < 4; i++) if (raw[raw.length - 4 + i] !== expected[i]) return null;
  return payload;
}

export function encodeBase58Check(payload: Uint8Array): string {
  const out = new Uint8Array(payload.length + 4);
  out.set(payload);
  out.set(checksum(payload), payload.length);
  return encodeBase58(out);
}
