import type * as TonCore from '@ton/core';
import { InvalidAddressError } from '../../domain/errors.ts';
import type { FamilyAddresses } from '../family.ts';
import { lazyRequire } from '../lazy-require.ts';

const ton = lazyRequire<typeof TonCore>('@ton/core');

// TON wallets do not derive from an xpub (ed25519): the pool is seeded from a list.
export const tonAddresses: FamilyAddresses = {
  validate(input, testnet, { kind = 'deposit' }) {
    const { Address } = ton();
    let parsed: TonCore.Address;
    let testOnly = false;
    try {
      if (Address.isFriendly(input)) {
        const friendly = Address.parseFriendly(input);
        parsed = friendly.address;
        testOnly = friendly.isTestOnly;
      } else {
        parsed = Address.parseRaw(input);
      }
    } catch {
      throw new InvalidAddressError('not a TON address: expected the friendly (EQ…/UQ…) or raw (0:<64 hex>) form');
    }
    // A friendly address flagged test-only was made for testnet; paying it on mainnet is a mistake.
    if (testOnly && !testnet) throw new InvalidAddressError('TON address is flagged testnet-only but mainnet was asked for');
    return parsed.toString({ urlSafe: true, bounceable: kind === 'contract', testOnly: testnet });
  },
};
