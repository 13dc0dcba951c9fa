import type { ChainFamilyAdapter } from '../family.ts';
import { solanaAddresses } from './address.ts';

// Solana wallets do not derive from an xpub (ed25519, hardened-only): the pool is seeded from a list.
export const solanaFamily: ChainFamilyAdapter = {
  family: 'solana',
  addresses: solanaAddresses,
  connect: async () => (await import('./connect.ts')).connectSolana,
  sweep: {
    planner: async () => (await import('./sweep-plan.ts')).solanaSweepPlanner,
    signer: async () => (await import('./sweep-sign.ts')).solanaSweepSigner,
    sender: async () => (await import('./sweep-send.ts')).solanaSweepSender,
    verifier: async () => (await import('./sweep-verify.ts')).solanaSweepVerifier,
  },
};
