import { decodeBase58Check } from '../base58check.ts';
import type { ChainFamilyAdapter } from '../family.ts';
import { checkBitcoinKeyKind } from './account-keys.ts';
import { bitcoinAddresses } from './address.ts';

export const bitcoinFamily: ChainFamilyAdapter = {
  family: 'bitcoin',
  label: 'Bitcoin',
  native: { symbol: 'BTC', atomicUnit: 'sat', rateId: 'bitcoin' },
  secretKeyForms: [{ what: 'a WIF private key', test: isWif }],
  addresses: bitcoinAddresses,
  keys: {
    fromPublicKey: bitcoinAddresses.fromPublicKey,
    scripts: ['p2wpkh', 'p2tr'],
    purposeAndCoin: (testnet, address) => `${/^(bc|tb|bcrt)1p/i.test(address) ? 86 : 84}'/${testnet ? 1 : 0}'`,
    checkKind: checkBitcoinKeyKind,
  },
  // BIP21: `bitcoin:<address>?amount=<BTC as a decimal>`.
  paymentUri: ({ address, amount, atomic }) => (atomic === null ? `bitcoin:${address}` : `bitcoin:${address}?amount=${amount}`),
  connect: async () => (await import('./connect.ts')).connectBitcoin,
  sweep: {
    planner: async () => (await import('./sweep-plan.ts')).bitcoinSweepPlanner,
    signer: async () => (await import('./sweep-sign.ts')).bitcoinSweepSigner,
    sender: async () => (await import('./sweep-send.ts')).bitcoinSweepSender,
    verifier: async () => (await import('./sweep-verify.ts')).bitcoinSweepVerifier,
  },
};

const WIF_VERSIONS = new Set([0x80, 0xef]);

/** Wallet Import Format: a version byte (mainnet 0x80, testnet 0xef), the 32-byte key and an optional 0x01 (compressed), base58check. */
function isWif(text: string): boolean {
  const payload = decodeBase58Check(text);
  return payload !== null && (payload.length === 33 || (payload.length === 34 && payload[33] === 0x01)) && WIF_VERSIONS.has(payload[0] ?? -1);
}
