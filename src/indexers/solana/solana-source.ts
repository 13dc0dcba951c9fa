import type { HttpClient } from '../http-client.ts';
import { assertLinked, type BlockRef, type ChainSource, type RangeResult, type SeenTransfer, type WatchSet } from '../source.ts';

/** getGenesisHash of each Solana cluster: the indexer refuses an endpoint serving another one. */
export const SOLANA_GENESIS: Readonly<Record<string, string>> = {
  MAINNET: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
  DEVNET: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG',
};

/** getBlock errors that mean the slot has no block (skipped by its leader, or pruned as skipped). */
const SKIPPED = new Set([-32007, -32009]);
/** Token balances get log indexes from here on, so they never meet a SOL balance's account index. */
export const TOKEN_LOG_INDEX_BASE = 1_000_000;

interface TokenBalance {
  accountIndex: number;
  mint: string;
  owner?: string;
  uiTokenAmount: { amount: string };
}
interface SolanaTx {
  transaction: { signatures: string[]; message: { accountKeys: (string | { pubkey: string })[] } };
  meta: {
    err: unknown;
    preBalances: (number | string)[];
    postBalances: (number | string)[];
    preTokenBalances?: TokenBalance[];
    postTokenBalances?: TokenBalance[];
    loadedAddresses?: { writable: string[]; readonly: string[] };
  } | null;
}
interface SolanaBlock {
  blockhash: string;
  previousBlockhash: string;
  parentSlot: number;
  blockTime: number | null;
  transactions?: SolanaTx[];
}

const BLOCK_CONFIG = { encoding: 'json', maxSupportedTransactionVersion: 0, rewards: false, commitment: 'confirmed' };

/**
 * Reads Solana slot by slot with getBlock (one call per slot, whatever the number of addresses).
 * A deposit is a rise in a watched account's lamports (SOL) or in a token balance whose owner is a
 * watched address (SPL tokens such as USDC land in the owner's token account). Failed transactions
 * move nothing and are passed over. Skipped slots have no block: the range simply has a gap.
 */
export function createSolanaSource(options: { http: HttpClient }): ChainSource {
  const { http } = options;

  async function block(slot: bigint, details: 'full' | 'none'): Promise<SolanaBlock | null> {
    const res = await http.jsonRpc<SolanaBlock | null>('getBlock', [Number(slot), { ...BLOCK_CONFIG, transactionDetails: details }]);
    if (res.error) {
      if (SKIPPED.has(res.error.code)) return null;
      throw new Error(`getBlock ${slot}: ${res.error.code} ${res.error.message}`);
    }
    return res.result ?? null;
  }

  const refOf = (slot: bigint, b: SolanaBlock): BlockRef => ({ number: slot, hash: b.blockhash, parentHash: b.previousBlockhash, timestamp: b.blockTime ?? 0 });

  function deposits(watch: WatchSet, ref: BlockRef, b: SolanaBlock): SeenTransfer[] {
    const found: SeenTransfer[] = [];
    for (const tx of b.transactions ?? []) {
      const meta = tx.meta;
      if (!meta || meta.err !== null) continue;
      const signature = tx.transaction.signatures[0]!;
      const keys = [
        ...tx.transaction.message.accountKeys.map((k) => (typeof k === 'string' ? k : k.pubkey)),
        ...(meta.loadedAddresses?.writable ?? []),
        ...(meta.loadedAddresses?.readonly ?? []),
      ];
      const base = { txHash: signature, blockNumber: ref.number, blockHash: ref.hash, blockTime: ref.timestamp, from: null, kind: 'native' as const, reverted: false };
      keys.forEach((key, i) => {
        if (!watch.addresses.has(key)) return;
        const delta = BigInt(meta.postBalances[i] ?? 0) - BigInt(meta.preBalances[i] ?? 0);
        if (delta > 0n) found.push({ ...base, logIndex: i, to: key, token: null, amount: delta });
      });
      for (const post of meta.postTokenBalances ?? []) {
        if (!post.owner || !watch.addresses.has(post.owner)) continue;
        const pre = (meta.preTokenBalances ?? []).find((p) => p.accountIndex === post.accountIndex && p.mint === post.mint);
        const delta = BigInt(post.uiTokenAmount.amount) - BigInt(pre?.uiTokenAmount.amount ?? '0');
        if (delta > 0n) found.push({ ...base, logIndex: TOKEN_LOG_INDEX_BASE + post.accountIndex, to: post.owner, token: post.mint, amount: delta, kind: 'token' });
      }
    }
    return found;
  }

  return {
    async head() {
      const res = await http.jsonRpc<number>('getSlot', [{ commitment: 'confirmed' }]);
      if (res.error || typeof res.result !== 'number') throw new Error(`getSlot: ${res.error?.message ?? 'no result'}`);
      return BigInt(res.result);
    },
    async blockAt(slot) {
      const b = await block(slot, 'none');
      return b ? refOf(slot, b) : null;
    },
    async fetchRange(from, to, watch): Promise<RangeResult> {
      const blocks: BlockRef[] = [];
      const transfers: SeenTransfer[] = [];
      for (let slot = from; slot <= to; slot++) {
        const b = await block(slot, watch.addresses.size ? 'full' : 'none');
        if (!b) continue;
        const ref = refOf(slot, b);
        blocks.push(ref);
        if (watch.addresses.size) transfers.push(...deposits(watch, ref, b));
      }
      assertLinked(blocks);
      return { blocks, transfers };
    },
    async receipt() {
      return null;
    },
    close() {},
  };
}
