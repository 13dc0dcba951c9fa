import { UsageError } from '../../domain/errors.ts';
import type { ChainFamilyAdapter } from '../family.ts';
import { tronAddresses } from './address.ts';

export const tronFamily: ChainFamilyAdapter = {
  family: 'tron',
  label: 'Tron',
  native: { symbol: 'TRX', atomicUnit: 'sun', rateId: 'tron' },
  addresses: tronAddresses,
  keys: {
    fromPublicKey: tronAddresses.fromPublicKey,
    purposeAndCoin: () => "44'/195'",
    checkKind(kind) {
      // Tron addresses are the same on mainnet and testnets, so xpub and tpub both serve.
      if (kind.script !== 'any') throw new UsageError(`a ${kind.prefix} is a bitcoin segwit key; for Tron export the xpub of m/44'/195'/0'`);
    },
  },
  connect: async () => (await import('./connect.ts')).connectTron,
  sweep: {
    planner: async () => (await import('./sweep-plan.ts')).tronSweepPlanner,
    signer: async () => (await import('./sweep-sign.ts')).tronSweepSigner,
    sender: async () => (await import('./sweep-send.ts')).tronSweepSender,
    verifier: async () => (await import('./sweep-verify.ts')).tronSweepVerifier,
  },
};
