import { getAddress, zeroPadValue } from 'ethers';
import type { Logger } from '../../logger.ts';
import { finalizedReader } from './finality.ts';
import { PAYMENT_RECEIVED_TOPIC, paymentEventParties, topicAddress } from './payment-event.ts';
import { readClaimReceipt } from './receipt.ts';
import { RangeTooLargeError, type Rpc } from '../jsonrpc/rpc.ts';
import { BlockSchema, LogsSchema, TRANSFER_TOPIC, quantity, ReceiptStatusSchema, TraceBlockSchema, TraceFrameSchema, type RpcBlock, type RpcLog, type RpcTx, type TraceFrame } from '../jsonrpc/schemas.ts';
import { assertLinked, ReorgDuringFetch, RpcUnsupportedError, type BlockRef, type ChainSource, type RangeResult, type SeenTransfer, type WatchSet } from '../source.ts';

export { LogsSchema } from '../jsonrpc/schemas.ts';

const hex = (n: bigint) => `0x${n.toString(16)}`;

export interface EvmSourceOptions {
  rpc: Rpc;
  /** Follow contract-internal native transfers with call traces (RPC must offer debug tracing). */
  traces: boolean;
  /** Deposit addresses per eth_getLogs OR-list. */
  addressChunk?: number;
  /**
   * The node answers the `finalized` block tag (probed at start-up, finality.ts): its height then,
   * and a logger for the ticks whose read fails. Completion waits for the tag; absent, the count alone.
   */
  finality?: { atStart: bigint; log: Logger };
  /** Past this many address chunks, read every Transfer log of the range once and match locally. */
  unfilteredAboveChunks?: number;
}

/**
 * Reads one block range of an EVM chain. RPC calls per range: one per block (headers, with full
 * transactions when native deposits are watched), one eth_getLogs per chunk of watched addresses
 * (any token contract: look-alikes are recorded, never credited), one for the payment contract's
 * events, one receipt per matched native transaction, and per-transaction traces only when
 * `traces` is on. Nothing is one call per watched address (docs/indexers.md).
 */
export function createEvmSource(options: EvmSourceOptions): ChainSource {
  const { rpc } = options;
  const chunk = options.addressChunk ?? 500;
  let traceBlockSupported: boolean | null = null;
  const readFinalized = options.finality ? finalizedReader(rpc, options.finality.log, options.finality.atStart) : null;

  async function getBlock(n: bigint, full: boolean): Promise<RpcBlock> {
    return rpc.call('eth_getBlockByNumber', [hex(n), full], { schema: BlockSchema });
  }

  async function getLogs(filter: Record<string, unknown>, from: bigint, to: bigint): Promise<RpcLog[]> {
    try {
      return await rpc.call('eth_getLogs', [{ ...filter, fromBlock: hex(from), toBlock: hex(to) }], { schema: LogsSchema });
    } catch (err) {
      if (!(err instanceof RangeTooLargeError) || from === to) throw err;
      const mid = from + (to - from) / 2n;
      return [...(await getLogs(filter, from, mid)), ...(await getLogs(filter, mid + 1n, to))];
    }
  }

  async function traceBlock(block: RpcBlock): Promise<{ txHash: string; result: TraceFrame }[]> {
    if (traceBlockSupported !== false) {
      try {
        const traces = await rpc.call('debug_traceBlockByNumber', [block.number, { tracer: 'callTracer' }], { schema: TraceBlockSchema });
        traceBlockSupported = true;
        if (traces.length !== block.transactions.length) {
          throw new Error(`malformed answer to debug_traceBlockByNumber: ${traces.length} traces for the ${block.transactions.length} transactions of block ${BigInt(block.number)}`);
        }
        return traces.map((t, i) => ({ txHash: t.txHash ?? txHashOf(block.transactions[i]!), result: t.result }));
      } catch (err) {
        if (!(err instanceof RpcUnsupportedError)) throw err;
        traceBlockSupported = false;
      }
    }
    // Fallback for nodes without block tracing (Hardhat 3): one trace per transaction.
    const out: { txHash: string; result: TraceFrame }[] = [];
    for (const tx of block.transactions) {
      const hash = txHashOf(tx);
      out.push({ txHash: hash, result: await rpc.call('debug_traceTransaction', [hash, { tracer: 'callTracer' }], { schema: TraceFrameSchema }) });
    }
    return out;
  }

  return {
    async head() {
      return BigInt(await rpc.call('eth_blockNumber', [], { schema: quantity }));
    },

    async blockAt(n) {
      const b = await rpc.call<RpcBlock | null>('eth_getBlockByNumber', [hex(n), false], { allowNull: true, schema: BlockSchema });
      return b ? toRef(b) : null;
    },

    async finalized() {
      return readFinalized ? readFinalized() : null;
    },

    async fetchRange(from, to, watch: WatchSet): Promise<RangeResult> {
      const watched = new Set([...watch.addresses].map((a) => a.toLowerCase()));
      const wantNative = watched.size > 0;
      const blocks: RpcBlock[] = [];
      for (let n = from; n <= to; n++) blocks.push(await getBlock(n, wantNative));
      const refs = blocks.map(toRef);
      assertLinked(refs);
      const hashAt = new Map(refs.map((r) => [r.number, r]));
      const transfers: SeenTransfer[] = [];

      // Native coin sent straight to a watched address.
      if (wantNative) {
        for (const block of blocks) {
          const ref = hashAt.get(BigInt(block.number))!;
          for (const tx of block.transactions) {
            if (typeof tx === 'string' || !tx.to || !watched.has(tx.to.toLowerCase()) || BigInt(tx.value) === 0n) continue;
            const receipt = await rpc.call('eth_getTransactionReceipt', [tx.hash], { schema: ReceiptStatusSchema });
            transfers.push({
              txHash: tx.hash,
              logIndex: -1,
              blockNumber: ref.number,
              blockHash: ref.hash,
              blockTime: ref.timestamp,
              from: getAddress(tx.from),
              to: getAddress(tx.to),
              token: null,
              amount: BigInt(tx.value),
              kind: 'native',
              reverted: BigInt(receipt.status) === 0n,
            });
          }
        }
        // Native coin moved by contracts (exchange hot wallets, smart wallets): only visible in traces.
        if (options.traces) {
          for (const block of blocks) {
            if (block.transactions.length === 0) continue;
            const ref = hashAt.get(BigInt(block.number))!;
            for (const { txHash, result } of await traceBlock(block)) {
              if (result.error) continue;
              let ordinal = 0;
              for (const frame of internalValueCalls(result)) {
                ordinal++;
                if (!frame.to || !watched.has(frame.to.toLowerCase())) continue;
                transfers.push({
                  txHash,
                  logIndex: -1 - ordinal,
                  blockNumber: ref.number,
                  blockHash: ref.hash,
                  blockTime: ref.timestamp,
                  from: frame.from ? getAddress(frame.from) : null,
                  to: getAddress(frame.to),
                  token: null,
                  amount: BigInt(frame.value!),
                  kind: 'trace',
                  reverted: false,
                });
              }
            }
          }
        }
      }

      // ERC-20 Transfer logs to watched addresses, from any contract. Few addresses: the node filters
      // by recipient (one call per chunk). Many: one call for every Transfer of the range, matched
      // here, so calls per block stay constant however many payments are open (docs/indexers.md).
      const chunks = Math.ceil(watched.size / chunk);
      // Recipients are padded to topics only when the node filters by them: at 100,000 watched
      // addresses the padding alone took a quarter of a poll.
      const unfiltered = chunks > (options.unfilteredAboveChunks ?? 4);
      const padded = unfiltered ? [] : [...watched].map((a) => zeroPadValue(a, 32));
      const filters = unfiltered ? [{ topics: [TRANSFER_TOPIC] }] : Array.from({ length: chunks }, (_, i) => ({ topics: [TRANSFER_TOPIC, null, padded.slice(i * chunk, (i + 1) * chunk)] }));
      for (const filter of filters) {
        for (const log of await getLogs(filter, from, to)) {
          if (log.removed || log.topics.length !== 3 || log.data.length !== 66) continue; // ERC-721 and odd events
          if (!watched.has(`0x${log.topics[2]!.slice(-40)}`.toLowerCase())) continue;
          transfers.push(
            logTransfer(log, checkLog(hashAt, log), { from: topicAddress(log.topics[1]!), to: topicAddress(log.topics[2]!), token: getAddress(log.address), kind: 'token' }),
          );
        }
      }

      // The payment contract's events, matched to web3/service_wallet payments by externalId.
      if (watch.paymentContract) {
        const logs = await getLogs({ address: watch.paymentContract, topics: [PAYMENT_RECEIVED_TOPIC] }, from, to);
        for (const log of logs) {
          if (log.removed || log.topics.length !== 4) continue;
          transfers.push(logTransfer(log, checkLog(hashAt, log), paymentEventParties(log)));
        }
      }
      return { blocks: refs, transfers };
    },

    receipt: (txHash, paymentContract) => readClaimReceipt(rpc, txHash, paymentContract),

    close: () => rpc.close(),
  };
}

/** A transfer read from an event log: position and amount from the log, parties from the caller. */
function logTransfer(log: RpcLog, ref: BlockRef, parties: Pick<SeenTransfer, 'from' | 'to' | 'token' | 'kind' | 'externalId'>): SeenTransfer {
  return {
    txHash: log.transactionHash,
    logIndex: Number(BigInt(log.logIndex)),
    blockNumber: ref.number,
    blockHash: ref.hash,
    blockTime: ref.timestamp,
    amount: BigInt(log.data),
    reverted: false,
    ...parties,
  };
}

function toRef(b: RpcBlock): BlockRef {
  return { number: BigInt(b.number), hash: b.hash, parentHash: b.parentHash, timestamp: Number(BigInt(b.timestamp)) };
}

function txHashOf(tx: string | RpcTx): string {
  return typeof tx === 'string' ? tx : tx.hash;
}

function checkLog(hashAt: Map<bigint, BlockRef>, log: RpcLog): BlockRef {
  const ref = hashAt.get(BigInt(log.blockNumber));
  if (!ref || ref.hash !== log.blockHash) throw new ReorgDuringFetch(`log in block ${BigInt(log.blockNumber)} has another hash than the block read`);
  return ref;
}

/** Value-carrying calls below the top-level call, skipping failed frames and everything under them. */
export function internalValueCalls(root: TraceFrame): TraceFrame[] {
  const out: TraceFrame[] = [];
  const walk = (frame: TraceFrame) => {
    for (const child of frame.calls ?? []) {
      if (child.error) continue;
      if (child.value && BigInt(child.value) > 0n && (child.type === 'CALL' || child.type === 'CREATE' || child.type === 'CREATE2' || child.type === undefined)) out.push(child);
      walk(child);
    }
  };
  walk(root);
  return out;
}
