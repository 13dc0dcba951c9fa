import type { ChainFamilyAdapter } from '../family.ts';
import { checkBitcoinKeyKind } from './account-keys.ts';
import { bitcoinAddresses } from './address.ts';
import { bitcoinSecretKeyForms } from './secret-forms.ts';

export const bitcoinFamily: ChainFamilyAdapter = {
  family: 'bitcoin',
  label: 'Bitcoin',
  native: { symbol: 'BTC', atomicUnit: 'sat', rateId: 'bitcoin' },
  secretKeyForms: bitcoinSecretKeyForms,
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
