import { getAddress } from 'ethers';
import { decodeBase58Check, encodeBase58Check } from '../../chains/base58check.ts';
import type { ChainSource, SeenTransfer } from '../source.ts';

// Tron through java-tron's Ethereum-compatible JSON-RPC (TronGrid and any full node serve it at
// /jsonrpc): blocks, receipts and TRC-20 Transfer logs look exactly like an EVM chain's, with
// addresses as 20-byte hex. Tron's own form is base58check of 0x41 + those 20 bytes ("T…"). This
// wraps the EVM reader and translates addresses both ways; everything else is shared.

/** eth_chainId of each Tron network (the low 4 bytes of its genesis block id). */
export const TRON_CHAIN_IDS: Readonly<Record<string, bigint>> = {
  MAINNET: 0x2b6653dcn,
  NILE: 0xcd8690dcn,
};

export function tronToHex(address: string): string | null {
  const payload = decodeBase58Check(address);
  if (!payload || payload.length !== 21 || payload[0] !== 0x41) return null;
  return `0x${Buffer.from(payload.subarray(1)).toString('hex')}`;
}

export function hexToTron(address: string): string {
  const bytes = Buffer.from(getAddress(address).slice(2), 'hex');
  return encodeBase58Check(Uint8Array.from([0x41, ...bytes]));
}

export function createTronSource(evm: ChainSource): ChainSource {
  const toTron = (t: SeenTransfer): SeenTransfer => ({
    ...t,
    to: hexToTron(t.to),
    from: t.from ? hexToTron(t.from) : null,
    token: t.token ? hexToTron(t.token) : null,
  });
  return {
    head: () => evm.head(),
    blockAt: (n) => evm.blockAt(n),
    receipt: (hash) => evm.receipt(hash),
    close: () => evm.close(),
    async fetchRange(from, to, watch) {
      const hex = [...watch.addresses].map(tronToHex).filter((a): a is string => a !== null);
      const range = await evm.fetchRange(from, to, { addresses: new Set(hex), paymentContract: null });
      return { blocks: range.blocks, transfers: range.transfers.map(toTron) };
    },
  };
}
