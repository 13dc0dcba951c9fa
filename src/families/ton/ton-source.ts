import type { BlockRef, ChainSource, RangeResult, SeenTransfer, WatchSet } from '../source.ts';
import { hex, raw } from './raw-address.ts';
import { createJettonWallets } from './jetton-wallets.ts';
import { readMasterchainRange } from './masterchain-range.ts';
import { readTransaction, type Watched } from './read-transaction.ts';
import { ACCOUNTS_PER_CALL, PAGE, type ToncenterV3, type TonTransaction } from './toncenter-v3.ts';

// TON through toncenter v3. Heights are masterchain seqnos: a transaction counts at the masterchain
// block that committed its shard block (`mc_block_seqno`), and nothing committed there is ever
// reorganised, so the reader asks for whole ranges of history per list of accounts instead of
// walking blocks: one call per 100 watched accounts per poll (plus pages), however many blocks;
// past `accountsPerScan` accounts it reads every transaction of each masterchain block instead, a
// cost that no longer grows with open payments. What a transaction means: read-transaction.ts;
// whether its value stayed: outcome.ts; the deposits' jetton wallets: jetton-wallets.ts; the
// masterchain blocks of a range: masterchain-range.ts.

export { OP_EXCESSES, OP_INTERNAL_TRANSFER, OP_TRANSFER_NOTIFICATION } from './read-transaction.ts';
export { raw } from './raw-address.ts';

/** global_id of each TON network's masterchain blocks. */
export const TON_GLOBAL_IDS: Readonly<Record<string, number>> = { MAINNET: -239, TESTNET: -3 };

/** A transaction is committed by a masterchain block no earlier than this after it happened (shard blocks lag a little). */
const SHARD_LAG_S = 60;

export interface TonSourceOptions {
  api: ToncenterV3;
  /** Jetton masters of the registry's tokens, in the registry's form (what payments carry). */
  jettonMasters: string[];
  /** Testnet or mainnet: the form in which transfers name their sender (`from`, as validateAddress returns it). */
  testnet: boolean;
  /** Past this many watched accounts (deposits and their jetton wallets), read whole masterchain blocks instead. */
  accountsPerScan?: number;
  /** get_wallet_address calls in flight at once when new deposits arrive. */
  getMethodConcurrency?: number;
}

export interface TonSource extends ChainSource {
  /** Deposits whose jetton wallets are kept (bounded by the watch set). */
  jettonWalletsKept(): number;
}

export function createTonSource(options: TonSourceOptions): TonSource {
  const { api } = options;
  const accountsPerScan = options.accountsPerScan ?? 1000;
  const jettonWallets = createJettonWallets(api, options.jettonMasters, options.getMethodConcurrency);

  /** Every transaction of the watched accounts committed in these blocks, handed to `take` (one call per 100 accounts, or per block). */
  async function eachTransaction(watched: Watched, blocks: BlockRef[], since: number, take: (tx: TonTransaction) => void): Promise<void> {
    const accounts = [...watched.owners.keys(), ...watched.wallets.keys()];
    const pages = async (fetch: (offset: number) => Promise<TonTransaction[]>, keep: (tx: TonTransaction) => boolean) => {
      for (let offset = 0; ; offset += PAGE) {
        const page = await fetch(offset);
        for (const tx of page) if (keep(tx)) take(tx);
        if (page.length < PAGE) break;
      }
    };
    if (accounts.length <= accountsPerScan) {
      for (let i = 0; i < accounts.length; i += ACCOUNTS_PER_CALL) {
        await pages((offset) => api.transactions(accounts.slice(i, i + ACCOUNTS_PER_CALL), since, offset), () => true);
      }
      return;
    }
    const isWatched = (tx: TonTransaction) => watched.owners.has(raw(tx.account)) || watched.wallets.has(raw(tx.account));
    for (const b of blocks) await pages((offset) => api.transactionsByMasterchainBlock(b.number, offset), isWatched);
  }

  return {
    async head() {
      return BigInt((await api.masterchainHead()).seqno);
    },
    // Masterchain-committed history does not change: the head is final.
    async finalized() {
      return BigInt((await api.masterchainHead()).seqno);
    },
    async blockAt(n) {
      const block = await api.masterchainBlock(n);
      return block ? { number: BigInt(block.seqno), hash: hex(block.root_hash), parentHash: '', timestamp: block.gen_utime } : null;
    },
    async fetchRange(from, to, watch: WatchSet): Promise<RangeResult> {
      const range = await readMasterchainRange(api, from, to);
      // The whole range lies before the oldest block the API holds: nothing there can be read.
      if (range === 'before-history') return { blocks: [], transfers: [], through: to };
      const { blocks } = range;
      const through = blocks.at(-1)?.number ?? from - 1n;
      if (through < from) return { blocks: [], transfers: [], through };

      const owners = new Map<string, string>(); // raw -> as the pool stores it
      for (const a of watch.addresses) owners.set(raw(a), a);
      const watched: Watched = { owners, wallets: await jettonWallets.resolve(owners), testnet: options.testnet };
      const at = new Map(blocks.map((b) => [b.number, b]));
      const transfers: SeenTransfer[] = [];
      // Each transaction is placed by its own mc_block_seqno; the time window only bounds the query.
      await eachTransaction(watched, blocks, range.since - SHARD_LAG_S, (tx) => {
        const block = tx.mc_block_seqno === null ? undefined : at.get(BigInt(tx.mc_block_seqno));
        if (block) transfers.push(...readTransaction(tx, watched, { number: block.number, time: block.timestamp, hash: block.hash })); // else outside the range
      });
      return { blocks, transfers, ...(through < to ? { through } : {}) };
    },
    close() {},
    jettonWalletsKept: () => jettonWallets.size(),
  };
}
