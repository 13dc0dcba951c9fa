import type { ChainFamily } from '../chains/slugs.ts';
import { FAMILIES, secretKeyForms } from './families.ts';
import { parseExtendedPublicKey } from './key-material.ts';

// The path a wallet shows for a derived deposit address, so an operator can check the pool against
// the wallet before publishing it. An account key records its depth and its own (hardened) index,
// not the purpose and coin above it: those are the standard ones for the address's kind (BIP44 coin
// types 60 and 195, BIP84 native segwit, BIP86 taproot, coin type 1' on bitcoin's test networks).

const HARDENED = 0x8000_0000;

/**
 * `m/44'/60'/0'/0/7` for child 7 of an account key at depth 3, or `key/0/7` (child 0/7 below the
 * given key) when the key is not an account-level one and its full path cannot be told.
 */
export function receivePath(input: { xpub: string; family: ChainFamily; testnet: boolean; index: number; address: string }): string {
  const { node } = parseExtendedPublicKey(input.xpub, secretKeyForms());
  const head = FAMILIES[input.family].keys?.purposeAndCoin(input.testnet, input.address) ?? null;
  if (head === null || node.depth !== 3 || node.index < HARDENED) return `key/0/${input.index}`;
  return `m/${head}/${node.index - HARDENED}'/0/${input.index}`;
}
