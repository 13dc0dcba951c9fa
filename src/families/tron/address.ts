import type * as Ethers from 'ethers';
import { decodeBase58Check, encodeBase58Check } from '../base58check.ts';
import { InvalidAddressError } from '../../domain/errors.ts';
import type { FamilyAddresses, FamilyKeys } from '../family.ts';
import { lazyRequire } from '../lazy-require.ts';

const ethers = lazyRequire<typeof Ethers>('ethers');

/** The version byte of a Tron address: 0x41 followed by the 20 bytes of the EVM-style address. */
export const TRON_PREFIX = 0x41;

export const tronAddresses: FamilyAddresses & Pick<FamilyKeys, 'fromPublicKey'> = {
  validate(input) {
    // Nile and mainnet share the address format, so testnet does not matter here.
    if (input.length !== 34 || !input.startsWith('T')) {
      throw new InvalidAddressError('not a Tron address: expected 34 characters starting with T');
    }
    const payload = decodeBase58Check(input);
    if (payload?.length !== 21 || payload[0] !== TRON_PREFIX) {
      throw new InvalidAddressError('not a valid Tron address: bad Base58Check checksum or prefix');
    }
    return input;
  },
  // A Tron address is the EVM address's 20 bytes behind a 0x41 prefix, in Base58Check.
  fromPublicKey: () => (publicKey) => hexToTron(ethers().computeAddress(ethers().hexlify(publicKey))),
};

/** A T-form address as the 0x-hex EVM form java-tron's /jsonrpc speaks, or null when it is not one. */
export function tronToHex(address: string): string | null {
  const payload = decodeBase58Check(address);
  if (payload?.length !== 21 || payload[0] !== TRON_PREFIX) return null;
  return `0x${Buffer.from(payload.subarray(1)).toString('hex')}`;
}

/** A 0x-hex EVM-form address (any case) as Tron's T-form. */
export function hexToTron(address: string): string {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new InvalidAddressError('not a 20-byte hex address');
  return encodeBase58Check(Uint8Array.of(TRON_PREFIX, ...Buffer.from(address.slice(2), 'hex')));
}

/** 41-prefixed hex (java-tron's HTTP API) to T-form. */
export function hex41ToTron(address: string): string {
  return encodeBase58Check(Uint8Array.from(Buffer.from(address, 'hex')));
}
