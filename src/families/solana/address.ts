import { decodeBase58 } from '../base58check.ts';
import { InvalidAddressError } from '../../domain/errors.ts';
import type { FamilyAddresses } from '../family.ts';

// Solana wallets do not derive from an xpub (ed25519, hardened-only): the pool is seeded from a list.
export const solanaAddresses: FamilyAddresses = {
  validate(input) {
    // A base58 string (32 to 44 characters) decoding to exactly 32 bytes, as @solana/web3.js's
    // isAddress checks; devnet and mainnet share the format.
    if (input.length < 32 || input.length > 44 || decodeBase58(input)?.length !== 32) {
      throw new InvalidAddressError('not a Solana address: expected 32 bytes in base58');
    }
    return input;
  },
};
