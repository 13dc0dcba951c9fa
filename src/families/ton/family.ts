import type { ChainFamilyAdapter } from '../family.ts';
import { tonAddresses } from './address.ts';

// TON wallets are contracts whose address hashes their code and ed25519 key: the pool is seeded from a list.
export const tonFamily: ChainFamilyAdapter = {
  family: 'ton',
  label: 'TON',
  native: { symbol: 'TON', atomicUnit: 'nanotons', rateId: 'the-open-network' },
  addresses: tonAddresses,
  // TON transfer links: `ton://transfer/<address>?amount=<nanotons>` (Tonkeeper's wallet API,
  // github.com/tonkeeper/wallet-api, "Plain transfers"; the ton:// scheme TON wallets register). For a
  // jetton the link names the jetton master and the amount is in the jetton's atomic units:
  // `ton://transfer/<address>?jetton=<master>&amount=<units>`, the form Tonkeeper's deep-link parser
  // and wallets following it accept (docs/hosted-page.md#wallet-links says what that rests on).
  paymentUri({ address, atomic, tokenAddress }) {
    const params = new URLSearchParams();
    if (tokenAddress) params.set('jetton', tokenAddress);
    if (atomic !== null) params.set('amount', atomic.toString());
    const query = params.toString();
    return query ? `ton://transfer/${address}?${query}` : `ton://transfer/${address}`;
  },
  connect: async () => (await import('./connect.ts')).connectTon,
  sweep: {
    planner: async () => (await import('./sweep-plan.ts')).tonSweepPlanner,
    signer: async () => (await import('./sweep-sign.ts')).tonSweepSigner,
    sender: async () => (await import('./sweep-send.ts')).tonSweepSender,
    verifier: async () => (await import('./sweep-verify.ts')).tonSweepVerifier,
  },
};
