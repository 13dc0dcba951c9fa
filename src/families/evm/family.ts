import { UsageError } from '../../domain/errors.ts';
import type { ChainFamilyAdapter } from '../family.ts';
import { evmAddresses } from './address.ts';

export const evmFamily: ChainFamilyAdapter = {
  family: 'evm',
  label: 'EVM',
  native: { symbol: 'ETH', atomicUnit: 'wei', rateId: 'ethereum' },
  addresses: evmAddresses,
  keys: {
    fromPublicKey: evmAddresses.fromPublicKey,
    purposeAndCoin: () => "44'/60'",
    checkKind(kind) {
      // EVM addresses are the same on mainnet and testnets, so xpub and tpub both serve.
      if (kind.script !== 'any') throw new UsageError(`a ${kind.prefix} is a bitcoin segwit key; for EVM export the xpub of m/44'/60'/0'`);
    },
  },
  // EIP-681: `ethereum:<address>@<chainId>?value=<wei>`, or for a token
  // `ethereum:<token>@<chainId>/transfer?address=<address>&uint256=<atomic units>`.
  paymentUri({ chainId, address, atomic, tokenAddress }) {
    if (chainId === null) return address;
    if (tokenAddress) {
      const base = `ethereum:${tokenAddress}@${chainId}/transfer?address=${address}`;
      return atomic === null ? base : `${base}&uint256=${atomic}`;
    }
    const base = `ethereum:${address}@${chainId}`;
    return atomic === null ? base : `${base}?value=${atomic}`;
  },
  connect: async () => (await import('./connect.ts')).connectEvm,
  receipts: async () => (await import('./receipt.ts')).evmReceiptReader,
  sweep: {
    planner: async () => (await import('./sweep-plan.ts')).evmSweepPlanner,
    signer: async () => (await import('./sweep-sign.ts')).evmSweepSigner,
    sender: async () => (await import('./sweep-send.ts')).evmSweepSender,
    verifier: async () => (await import('./sweep-verify.ts')).evmSweepVerifier,
  },
};
