import type { ChainFamilyAdapter } from '../family.ts';
import { tonAddresses } from './address.ts';

// TON wallets are contracts whose address hashes their code and ed25519 key: the pool is seeded from a list.
export const tonFamily: ChainFamilyAdapter = {
  family: 'ton',
  addresses: tonAddresses,
  connect: async () => (await import('./connect.ts')).connectTon,
  sweep: {
    planner: async () => (await import('./sweep-plan.ts')).tonSweepPlanner,
    signer: async () => (await import('./sweep-sign.ts')).tonSweepSigner,
    sender: async () => (await import('./sweep-send.ts')).tonSweepSender,
    verifier: async () => (await import('./sweep-verify.ts')).tonSweepVerifier,
  },
};
