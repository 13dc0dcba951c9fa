import { UsageError } from '../domain/errors.ts';
import type { ChainFamily } from '../chains/slugs.ts';
import { FAMILIES, secretKeyForms } from './families.ts';
import type { AddressScript } from './family.ts';
import { parseExtendedPublicKey, type ParsedExtendedKey } from './key-material.ts';

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

  const keys = FAMILIES[family].keys;
  const receive = parseAccountKey(xpub, family, testnet, script).node.derive(RECEIVE_CHAIN);
  const encode = keys!.fromPublicKey(testnet, network, script);
  const out: DerivedAddress[] = [];
  for (let index = start; index < start + count; index++) {
    out.push({ index, address: encode(receive.derive(index).publicKey) });
  }
  return out;
}

/**
 * Parses an extended public key for a family and network, refusing keys meant for another script
 * type or network, and families whose wallets do not derive from one.
 */
export function parseAccountKey(input: string, family: ChainFamily, testnet: boolean, script?: AddressScript): ParsedExtendedKey {
  const keys = FAMILIES[family].keys;
  if (!keys) throw new UsageError(`${family} addresses cannot be derived from an extended public key; seed the pool with --file (one address per line)`);
  if (script !== undefined && !keys.scripts?.includes(script)) {
    throw new UsageError(`--script chooses between bitcoin output types; ${family} has one kind of address, so leave it out`);
  }
  const parsed = parseExtendedPublicKey(input, secretKeyForms());
  if (parsed.kind.script === 'multisig') {
    throw new UsageError(`a ${parsed.kind.prefix} belongs to a multisig wallet; chaingate derives single-signature deposit addresses`);
  }
  keys.checkKind(parsed.kind, testnet, script);
  // A master key's children 0/i are addresses no wallet shows (a wallet derives them below an
  // account, m/purpose'/coin'/account'): funds sent there would look lost to the merchant.
  if (parsed.node.depth === 0) {
    throw new UsageError(
      `this ${parsed.kind.prefix} is a master key (depth 0), not an account key: its addresses would be key/0/i, which no wallet shows. Export the account's extended public key (depth 3, e.g. m/44'/60'/0' for EVM chains, m/84'/0'/0' for bitcoin) from your wallet (docs/wallets.md)`,
    );
  }
  return parsed;
}
