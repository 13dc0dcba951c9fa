import * as bitcoin from 'bitcoinjs-lib';
import { outputAddress } from './address.ts';
import { BITCOIN_NETWORKS, targetOf, type BitcoinNetworkName } from './networks.ts';
import { bitsViolation, difficultyRules, type HeaderFacts } from './difficulty.ts';
import { assertLinked, ReorgDuringFetch, type BlockRef, type ChainSource, type RangeResult, type SeenTransfer, type WatchSet } from '../source.ts';
import { ChainError } from '../../domain/errors.ts';

/** Where raw blocks come from: an Esplora REST API (esplora-fetcher.ts) or Bitcoin Core's JSON-RPC (core-fetcher.ts). */
export interface BlockFetcher {
  tipHeight(): Promise<bigint>;
  /** The hash of the block at a height, or null when the chain is not that long. */
  hashAt(n: bigint): Promise<string | null>;
  header(hash: string): Promise<Uint8Array>;
  rawBlock(hash: string): Promise<Uint8Array>;
}

/** A block that fails its own checks (merkle root, proof of work): a node or API that cannot be trusted. */
export class InvalidBlockError extends ChainError {
  override readonly name = 'InvalidBlockError';
}

export const HEX64 = /^[0-9a-f]{64}$/;

/** Block hashes are shown byte-reversed (as in every explorer and API). */
function displayHash(bytes: Uint8Array): string {
  return Buffer.from(Uint8Array.from(bytes).reverse()).toString('hex');
}

/**
 * Reads bitcoin block by block, each block raw and once, and matches its outputs against the
 * watched addresses locally: a fixed number of calls per block whatever the number of addresses.
 * Nothing is trusted that the block does not prove itself: its hash must be the one announced,
 * meet the target its header claims, that target must be the one the chain demands after its
 * parent (difficulty.ts: no change within a 2016-block period, at most 4x at a retarget, testnet4's
 * minimum-difficulty blocks, none on regtest) and within the network's proof-of-work limit, and
 * the transactions must hash to the header's merkle root (and witness commitment). An output's
 * index is its log index; bitcoin transactions cannot revert. Bitcoin has no finality signal: the
 * confirmation count decides.
 */
export function createBitcoinSource(options: { fetcher: BlockFetcher; network: BitcoinNetworkName }): ChainSource {
  const { fetcher } = options;
  const params = BITCOIN_NETWORKS[options.network];
  const powLimit = targetOf(params.powLimitBits);
  const rules = difficultyRules(options.network, params.powLimitBits);
  // The newest block checked, so the next range's first block finds its parent without a call.
  let last: (HeaderFacts & { hash: string }) | null = null;
  // testnet4: the bits of the newest block that was not a minimum-difficulty one.
  let periodBits: number | null = null;

  async function parentOf(n: bigint, block: bitcoin.Block): Promise<HeaderFacts> {
    const hash = displayHash(block.prevHash!);
    if (last && last.hash === hash) return last;
    const header = bitcoin.Block.fromBuffer(await fetcher.header(hash));
    if (header.getId() !== hash) throw new ReorgDuringFetch(`the header of block ${n - 1n} came with another hash than ${hash}`);
    return { height: n - 1n, bits: header.bits, timestamp: header.timestamp };
  }

  function checkBits(n: bigint, hash: string, prev: HeaderFacts, block: bitcoin.Block): void {
    const facts = { height: n, bits: block.bits, timestamp: block.timestamp };
    const violation = bitsViolation(rules, prev, facts, periodBits);
    if (violation) throw new InvalidBlockError(`block ${n} ${hash}: ${violation}`);
    if (!rules.minDifficultyBlocks || block.bits !== rules.powLimitBits) periodBits = block.bits;
    last = { ...facts, hash };
  }

  function checkHeader(n: bigint, hash: string, block: bitcoin.Block): BlockRef {
    if (block.getId() !== hash) throw new ReorgDuringFetch(`block ${n} served with another hash than announced`);
    const target = targetOf(block.bits);
    if (target === 0n || target > powLimit) throw new InvalidBlockError(`block ${n} ${hash}: target ${block.bits.toString(16)} is easier than ${options.network} allows`);
    if (!block.checkProofOfWork()) throw new InvalidBlockError(`block ${n} ${hash}: hash does not meet its own target (no proof of work)`);
    return { number: n, hash, parentHash: displayHash(block.prevHash!), timestamp: block.timestamp };
  }

  const addressNetwork = bitcoin.networks[params.js];

  function outputsTo(watch: WatchSet, ref: BlockRef, block: bitcoin.Block): SeenTransfer[] {
    const found: SeenTransfer[] = [];
    for (const tx of block.transactions ?? []) {
      tx.outs.forEach((out, index) => {
        // By the script's template, taproot included (bitcoinjs-lib's fromOutputScript skips P2TR
        // outputs unless an ECC library is loaded, and tries each template by throwing).
        const address = outputAddress(out.script, addressNetwork);
        if (address === null || !watch.addresses.has(address)) return;
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
    head: () => fetcher.tipHeight(),

    async blockAt(n) {
      const hash = await fetcher.hashAt(n);
      if (!hash) return null;
      return checkHeader(n, hash, bitcoin.Block.fromBuffer(await fetcher.header(hash)));
    },

    async finalized() {
      return null;
    },

    async fetchRange(from, to, watch): Promise<RangeResult> {
      const blocks: BlockRef[] = [];
      const transfers: SeenTransfer[] = [];
      for (let n = from; n <= to; n++) {
        const hash = await fetcher.hashAt(n);
        if (!hash) throw new ReorgDuringFetch(`block ${n} is gone`);
        let block: bitcoin.Block;
        try {
          block = bitcoin.Block.fromBuffer(await fetcher.rawBlock(hash));
        } catch (err) {
          throw new InvalidBlockError(`block ${n} ${hash} does not parse: ${(err as Error).message}`);
        }
        const ref = checkHeader(n, hash, block);
        if (n > 0n) checkBits(n, hash, await parentOf(n, block), block);
        if (!block.checkTxRoots()) throw new InvalidBlockError(`block ${n} ${hash}: its transactions do not hash to the header's merkle root`);
        blocks.push(ref);
        if (watch.addresses.size) transfers.push(...outputsTo(watch, ref, block));
      }
      assertLinked(blocks);
      return { blocks, transfers };
    },

    close() {},
  };
}
