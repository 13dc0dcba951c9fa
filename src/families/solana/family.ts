import { decodeBase58 } from '../base58check.ts';
import type { ChainFamilyAdapter } from '../family.ts';
import { solanaAddresses } from './address.ts';

// Solana wallets do not derive from an xpub (ed25519, hardened-only): the pool is seeded from a list.
export const solanaFamily: ChainFamilyAdapter = {
  family: 'solana',
  label: 'Solana',
  native: { symbol: 'SOL', atomicUnit: 'lamports', rateId: 'solana' },
  secretKeyForms: [
    // solana-keygen's key file: the 64-byte secret key as a JSON byte array.
    { what: 'a secret key file (a JSON byte array, as solana-keygen writes)', test: (text) => /^\[\s*\d{1,3}(\s*,\s*\d{1,3}){31,}\s*\]$/.test(text) },
    // Phantom and other Solana wallets export the 64-byte secret key as plain base58 (an address is 32 bytes).
    { what: 'a Solana secret key (64 bytes in base58)', test: (text) => decodeBase58(text)?.length === 64 },
  ],
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
