import type { ChainFamilyAdapter } from '../family.ts';
import { solanaAddresses } from './address.ts';

// Solana wallets do not derive from an xpub (ed25519, hardened-only): the pool is seeded from a list.
export const solanaFamily: ChainFamilyAdapter = {
  family: 'solana',
  addresses: solanaAddresses,
  // Solana Pay transfer request (docs.solanapay.com/spec, "Specification: Transfer Request"):
  // `solana:<recipient>?amount=<SOL or token units>` and, for a token, `&spl-token=<mint>`. The
  // recipient is the deposit's own wallet address; the wallet derives its associated token account
  // from it and the mint. The amount is in user units (SOL, not lamports; a token's uiAmountString),
  // as the spec requires, and left out when it does not fit the decimals (the wallet would refuse it).
  paymentUri({ address, amount, atomic, tokenAddress }) {
    const params = new URLSearchParams();
    if (atomic !== null) params.set('amount', amount);
    if (tokenAddress) params.set('spl-token', tokenAddress);
    const query = params.toString();
    return query ? `solana:${address}?${query}` : `solana:${address}`;
  },
  connect: async () => (await import('./connect.ts')).connectSolana,
  sweep: {
    planner: async () => (await import('./sweep-plan.ts')).solanaSweepPlanner,
    signer: async () => (await import('./sweep-sign.ts')).solanaSweepSigner,
    sender: async () => (await import('./sweep-send.ts')).solanaSweepSender,
    verifier: async () => (await import('./sweep-verify.ts')).solanaSweepVerifier,
  },
};
