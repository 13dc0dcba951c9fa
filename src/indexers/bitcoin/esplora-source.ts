import * as bitcoin from 'bitcoinjs-lib';
import type { HttpClient } from '../http-client.ts';
import { assertLinked, ReorgDuringFetch, type BlockRef, type ChainSource, type RangeResult, type SeenTransfer, type WatchSet } from '../source.ts';

/** Hash of block 0 per network: the indexer refuses an API that serves another chain. */
export const GENESIS: Readonly<Record<string, string>> = {
  MAINNET: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f',
  TESTNET4: '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043',
};

const HEX64 = /^[0-9a-f]{64}$/;

function hex(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** Block hashes are shown byte-reversed (as in every explorer and API). */
function displayHash(bytes: Uint8Array): string {
  return hex(Uint8Array.from(bytes).reverse());
}

/**
 * Reads bitcoin through an Esplora API (mempool.space, Blockstream, or your own electrs). Each
 * block is fetched raw, once (`/block-height/:n` then `/block/:hash/raw`), and its outputs are
 * matched against the watched addresses locally: two calls per block whatever the number of
 * addresses, never a call per address. An output's index is its log index; bitcoin transactions
 * cannot revert.
 */
export function createEsploraSource(options: { http: HttpClient; testnet: boolean }): ChainSource {
  const { http } = options;
  const network = options.testnet ? bitcoin.networks.testnet : bitcoin.networks.bitcoin;

  async function hashAt(n: bigint): Promise<string | null> {
    const text = await http.text(`/block-height/${n}`, { allowNotFound: true });
    if (text === null) return null;
    const hash = text.trim();
    if (!HEX64.test(hash)) throw new ReorgDuringFetch(`unexpected answer for block ${n}: ${hash.slice(0, 80)}`);
    return hash;
  }

  function refOf(n: bigint, hash: string, block: bitcoin.Block): BlockRef {
    if (block.getId() !== hash) throw new ReorgDuringFetch(`block ${n} served with another hash than announced`);
    return { number: n, hash, parentHash: displayHash(block.prevHash!), timestamp: block.timestamp };
  }

  function outputsTo(watch: WatchSet, ref: BlockRef, block: bitcoin.Block): SeenTransfer[] {
    const found: SeenTransfer[] = [];
    for (const tx of block.transactions ?? []) {
      tx.outs.forEach((out, index) => {
        let address: string;
        try {
          address = bitcoin.address.fromOutputScript(out.script, network);
        } catch {
          return; // OP_RETURN and other scripts without an address
        }
        if (!watch.addresses.has(address)) return;
        found.push({
          txHash: tx.getId(),
          logIndex: index,
          blockNumber: ref.number,
          blockHash: ref.hash,
          blockTime: ref.timestamp,
          from: null,
          to: address,
          token: null,
          amount: BigInt(out.value),
          kind: 'native',
          reverted: false,
        });
      });
    }
    return found;
  }

  return {
    async head() {
      const text = (await http.text('/blocks/tip/height'))!.trim();
      if (!/^\d+$/.test(text)) throw new Error(`unexpected tip height: ${text.slice(0, 80)}`);
      return BigInt(text);
    },

    async blockAt(n) {
      const hash = await hashAt(n);
      if (!hash) return null;
      const header = bitcoin.Block.fromHex((await http.text(`/block/${hash}/header`))!.trim());
      return refOf(n, hash, header);
    },

    async fetchRange(from, to, watch): Promise<RangeResult> {
      const blocks: BlockRef[] = [];
      const transfers: SeenTransfer[] = [];
      for (let n = from; n <= to; n++) {
        const hash = await hashAt(n);
        if (!hash) throw new ReorgDuringFetch(`block ${n} is gone`);
        const block = bitcoin.Block.fromBuffer(await http.bytes(`/block/${hash}/raw`));
        const ref = refOf(n, hash, block);
        blocks.push(ref);
        if (watch.addresses.size) transfers.push(...outputsTo(watch, ref, block));
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
