import type * as BitcoinJs from 'bitcoinjs-lib';
import type * as Secp256k1 from '@bitcoinerlab/secp256k1';
import { encodeBase58Check } from '../base58check.ts';
import { InvalidAddressError } from '../../domain/errors.ts';
import type { FamilyAddresses, FamilyKeys } from '../family.ts';
import { lazyRequire } from '../lazy-require.ts';
import { decodeSegwitAddress, encodeSegwitAddress, segwitProblem } from './bech32.ts';
import { bitcoinJsNetwork } from './networks.ts';

const bitcoinjs = lazyRequire<typeof BitcoinJs>('bitcoinjs-lib');
const secp256k1 = lazyRequire<typeof Secp256k1>('@bitcoinerlab/secp256k1');

/** The network each segwit prefix belongs to, to say so when an address is given for the wrong one. */
const HRP_NETWORK: Readonly<Record<string, string>> = { bc: 'mainnet', tb: 'testnet', bcrt: 'regtest' };
const SEGWIT_PREFIX_RE = /^(bc|tb|bcrt)1/i;

export const bitcoinAddresses: FamilyAddresses & Pick<FamilyKeys, 'fromPublicKey'> = {
  validate(input, testnet, { network: name }) {
    const bitcoin = bitcoinjs();
    const network = bitcoin.networks[bitcoinJsNetwork(testnet, name)];
    const expected = name === 'REGTEST' ? 'bcrt1…, m…, n… or 2…' : testnet ? 'tb1…, m…, n… or 2…' : 'bc1…, 1… or 3…';
    const refuse = (why: string) => new InvalidAddressError(`not a valid bitcoin ${testnet ? 'testnet' : 'mainnet'} address: ${why}`);
    if (SEGWIT_PREFIX_RE.test(input)) {
      const decoded = decodeSegwitAddress(input);
      if ('problem' in decoded) throw refuse(decoded.problem);
      if (decoded.hrp !== network.bech32) {
        const other = HRP_NETWORK[decoded.hrp];
        throw refuse(`expected ${expected}${other ? ` (this is a ${other} address)` : ''}`);
      }
      const problem = segwitProblem(decoded);
      if (problem) throw refuse(problem);
      // BIP341 output keys are x coordinates on secp256k1; any other 32 bytes lock the coins for good.
      if (decoded.version === 1 && !secp256k1().isXOnlyPoint(decoded.program)) {
        throw refuse('its 32 bytes are not a point on secp256k1, so no key could ever spend what is sent there');
      }
      // Re-encoding gives the canonical form (lower case, as QR codes may upper-case it).
      return encodeSegwitAddress(decoded.hrp, decoded.version, decoded.program);
    }
    try {
      return bitcoin.address.fromOutputScript(bitcoin.address.toOutputScript(input, network), network);
    } catch {
      const other = testnet ? bitcoin.networks.bitcoin : bitcoin.networks.testnet;
      const hint = belongsTo(input, other) ? ` (this is a ${testnet ? 'mainnet' : 'testnet'} address)` : '';
      throw refuse(`expected ${expected}${hint}`);
    }
  },
  // BIP84 native segwit (p2wpkh: bc1q…, tb1q…, bcrt1q…) or, with script 'p2tr', BIP86 taproot
  // (bc1p…, tb1p…, bcrt1p…): the key's x coordinate tweaked by TapTweak with no script tree.
  fromPublicKey(testnet, name, script = 'p2wpkh') {
    const bitcoin = bitcoinjs();
    const network = bitcoin.networks[bitcoinJsNetwork(testnet, name)];
    if (script === 'p2tr') {
      bitcoin.initEccLib(secp256k1());
      return (publicKey) => {
        const { address } = bitcoin.payments.p2tr({ internalPubkey: publicKey.subarray(1, 33), network });
        if (address === undefined) throw new Error('p2tr produced no address');
        return address;
      };
    }
    return (publicKey) => {
      const { address } = bitcoin.payments.p2wpkh({ pubkey: publicKey, network });
      if (address === undefined) throw new Error('p2wpkh produced no address');
      return address;
    };
  },
};

/**
 * The address an output pays, read from its script's template, or null for scripts without one
 * (OP_RETURN, bare multisig, P2PK, unknown witness versions). Covers what a deposit address can be:
 * P2PKH, P2SH, P2WPKH, P2WSH and P2TR (`OP_1 <32 bytes>`, bech32m). Outputs are matched to the
 * watched addresses by this string, which is the same canonical form validate() stores.
 */
export function outputAddress(script: Uint8Array, network: BitcoinJs.Network): string | null {
  const n = script.length;
  if (n === 25 && script[0] === 0x76 && script[1] === 0xa9 && script[2] === 0x14 && script[23] === 0x88 && script[24] === 0xac) {
    return encodeBase58Check(Uint8Array.from([network.pubKeyHash, ...script.subarray(3, 23)]));
  }
  if (n === 23 && script[0] === 0xa9 && script[1] === 0x14 && script[22] === 0x87) {
    return encodeBase58Check(Uint8Array.from([network.scriptHash, ...script.subarray(2, 22)]));
  }
  if (script[0] === 0x00 && script[1] === n - 2 && (n === 22 || n === 34)) return encodeSegwitAddress(network.bech32, 0, script.subarray(2));
  if (n === 34 && script[0] === 0x51 && script[1] === 0x20) return encodeSegwitAddress(network.bech32, 1, script.subarray(2));
  return null;
}

function belongsTo(input: string, network: BitcoinJs.Network): boolean {
  try {
    bitcoinjs().address.toOutputScript(input, network);
    return true;
  } catch {
    return false;
  }
}
