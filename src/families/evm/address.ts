import type * as Ethers from 'ethers';
import { InvalidAddressError } from '../../domain/errors.ts';
import type { FamilyAddresses, FamilyKeys } from '../family.ts';
import { lazyRequire } from '../lazy-require.ts';

const ethers = lazyRequire<typeof Ethers>('ethers');
const EVM_HEX_RE = /^0x[0-9a-fA-F]{40}$/;

export const evmAddresses: FamilyAddresses & Pick<FamilyKeys, 'fromPublicKey'> = {
  validate(input) {
    // getAddress alone would also accept ICAP ("XE…") forms, which no wallet pays to.
    if (!EVM_HEX_RE.test(input)) throw new InvalidAddressError('not an EVM address: expected 0x followed by 40 hex digits');
    try {
      // Mixed case must carry a valid EIP-55 checksum; all-lower and all-upper carry none and are accepted.
      return ethers().getAddress(input);
    } catch {
      throw new InvalidAddressError('EVM address has a wrong EIP-55 checksum (mixed case that does not match); check for a typo');
    }
  },
  // computeAddress decompresses the key and returns the EIP-55 checksummed form.
  fromPublicKey: () => (publicKey) => ethers().computeAddress(ethers().hexlify(publicKey)),
};
