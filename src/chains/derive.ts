import { createHash } from 'node:crypto';
import { UsageError } from '../domain/errors.ts';
import { FAMILIES } from '../indexers/families.ts';
import type { AddressScript } from './family-addresses.ts';
import type { ChainFamily } from './registry.ts';
import { parseAccountKey, parseExtendedPublicKey } from './key-material.ts';

// Watch-only address derivation: from an account-level extended public key (m/44'/60'/0',
// m/84'/0'/0', m/86'/0'/0', m/44'/195'/0', …) to the receive addresses at the non-hardened children
// 0/i. Only public derivation is used, so nothing here could ever spend.

export interface DeriveRequest {
  family: ChainFamily;
  testnet: boolean;
  xpub: string;
  start: number;
  count: number;
  /** The network's name where the family has variants with their own address prefix (bitcoin REGTEST: bcrt1). */
  network?: string;
  /** Bitcoin only: 'p2tr' derives BIP86 taproot addresses; the default is BIP84 P2WPKH. */
  script?: AddressScript;
}

export interface DerivedAddress {
  index: number;
  address: string;
}

/** Largest batch one call derives; a pool is refilled in batches, never all at once. */
export const MAX_DERIVE_COUNT = 10_000;
/** Children at and above 2^31 are hardened and need the private key. */
const HARDENED_OFFSET = 0x8000_0000;
/** The receive (external) chain under an account; 1 would be change addresses. */
const RECEIVE_CHAIN = 0;

export function deriveAddresses({ family, testnet, xpub, start, count, network, script }: DeriveRequest): DerivedAddress[] {
  if (!Number.isSafeInteger(start) || start < 0) throw new UsageError('start must be a non-negative integer');
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_DERIVE_COUNT) {
    throw new UsageError(`count must be an integer from 1 to ${MAX_DERIVE_COUNT}`);
  }
  if (start + count > HARDENED_OFFSET) throw new UsageError(`start + count must not pass ${HARDENED_OFFSET} (hardened indexes need the private key)`);

  const receive = parseAccountKey(xpub, family, testnet, script).node.derive(RECEIVE_CHAIN);
  const encoder = FAMILIES[family].addresses.fromPublicKey;
  // parseAccountKey already refused families without derivation, with the reason; kept for the types.
  if (!encoder) throw new UsageError(`${family} addresses cannot be derived from an extended public key; seed the pool with --file`);
  const encode = encoder(testnet, network, script);
  const out: DerivedAddress[] = [];
  for (let index = start; index < start + count; index++) {
    out.push({ index, address: encode(receive.derive(index).publicKey) });
  }
  return out;
}

/**
 * A short, stable id of an account key: the first 8 bytes of SHA-256 over its public key and chain
 * code, in hex. The same key gives the same id whether it was written as an xpub or a zpub, and the
 * id reveals nothing beyond what the public key already does. Taproot addresses of a key are another
 * series than its P2WPKH ones (their own indexes 0, 1, …), so their id is prefixed `p2tr:`.
 */
export function keyFingerprint(xpub: string, script?: AddressScript): string {
  const { node } = parseExtendedPublicKey(xpub);
  const id = createHash('sha256').update(node.publicKey).update(node.chainCode).digest('hex').slice(0, 16);
  return script === 'p2tr' ? `p2tr:${id}` : id;
}
