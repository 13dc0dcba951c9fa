import { createHmac, createPrivateKey, createPublicKey, sign } from 'node:crypto';
import { UsageError } from '../domain/errors.ts';

// ed25519 keys for the offline signers (Solana, TON): SLIP-0010 derivation from a BIP39 seed, the
// public key and signatures, all synchronous through node:crypto so a signer needs no WebCrypto
// promise and no chain client.

const HARDENED = 0x8000_0000;
// PKCS#8 and SPKI DER prefixes of an Ed25519 key (RFC 8410): node:crypto reads a raw 32-byte key only this way.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX_LENGTH = 12;

/** SLIP-0010 ed25519: the 32-byte private key (ed25519 seed) and chain code at a hardened path. */
export function slip10Ed25519(seed: Uint8Array, path: readonly number[]): { key: Uint8Array; chainCode: Uint8Array } {
  let digest = createHmac('sha512', 'ed25519 seed').update(seed).digest();
  for (const index of path) {
    if (!Number.isInteger(index) || index < 0 || index >= HARDENED) throw new UsageError(`derivation index ${index} is out of range (0 to 2^31 - 1; SLIP-0010 ed25519 has hardened children only)`);
    const data = Buffer.alloc(37);
    digest.copy(data, 1, 0, 32);
    data.writeUInt32BE(index + HARDENED, 33);
    digest = createHmac('sha512', digest.subarray(32)).update(data).digest();
  }
  return { key: new Uint8Array(digest.subarray(0, 32)), chainCode: new Uint8Array(digest.subarray(32)) };
}

function privateKeyObject(key: Uint8Array) {
  if (key.length !== 32) throw new UsageError(`an ed25519 private key is 32 bytes, not ${key.length}`);
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, key]), format: 'der', type: 'pkcs8' });
}

export function ed25519PublicKey(key: Uint8Array): Uint8Array {
  const spki = createPublicKey(privateKeyObject(key)).export({ format: 'der', type: 'spki' });
  return new Uint8Array(spki.subarray(SPKI_PREFIX_LENGTH));
}

export function ed25519Sign(key: Uint8Array, message: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, privateKeyObject(key)));
}

