import type * as BitcoinJs from 'bitcoinjs-lib';
import { InvalidAddressError, type FamilyAddresses } from '../../chains/family-addresses.ts';
import { lazyRequire } from '../../chains/lazy-require.ts';
import { bitcoinJsNetwork } from './networks.ts';

const bitcoinjs = lazyRequire<typeof BitcoinJs>('bitcoinjs-lib');

export const bitcoinAddresses: FamilyAddresses = {
  validate(input, testnet, { network: name }) {
    const bitcoin = bitcoinjs();
    const network = bitcoin.networks[bitcoinJsNetwork(testnet, name)];
    try {
      // Re-encoding gives the canonical form (bech32 in lower case, as QR codes may upper-case it).
      return bitcoin.address.fromOutputScript(bitcoin.address.toOutputScript(input, network), network);
    } catch {
      const expected = name === 'REGTEST' ? 'bcrt1…, m…, n… or 2…' : testnet ? 'tb1…, m…, n… or 2…' : 'bc1…, 1… or 3…';
      const other = testnet ? bitcoin.networks.bitcoin : bitcoin.networks.testnet;
      const hint = belongsTo(input, other) ? ` (this is a ${testnet ? 'mainnet' : 'testnet'} address)` : '';
      throw new InvalidAddressError(`not a valid bitcoin ${testnet ? 'testnet' : 'mainnet'} address: expected ${expected}${hint}`);
    }
  },
  // Native segwit (p2wpkh) receive addresses: bc1q…, tb1q…, bcrt1q….
  fromPublicKey(testnet, name) {
    const bitcoin = bitcoinjs();
    const network = bitcoin.networks[bitcoinJsNetwork(testnet, name)];
    return (publicKey) => {
      const { address } = bitcoin.payments.p2wpkh({ pubkey: publicKey, network });
      if (address === undefined) throw new Error('p2wpkh produced no address');
      return address;
    };
  },
};

function belongsTo(input: string, network: BitcoinJs.Network): boolean {
  try {
    bitcoinjs().address.toOutputScript(input, network);
    return true;
  } catch {
    return false;
  }
}
