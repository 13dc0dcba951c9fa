import { indexerCursor, placeCursor, recordFailure, recordHead, recordStopped, releaseLease, takeLease, takeOverLease, type CursorPlacement } from '../store/indexer-cursor.ts';
import { originsOnly } from '../domain/http-url.ts';
import { windowBlocks } from '../store/ledger-rows.ts';
import type { Database } from '../store/orm.ts';
import { poolReader } from '../store/raw-sql.ts';
import type { Logger } from '../logger.ts';
import { leaseOwnerId, ownerIsGone } from './lease-owner.ts';
import { applyFinality, applyRange, DeepReorgError, hasInFlight, LeaseLostError, rollbackTo, type ChainKey } from './ledger.ts';
import { backoffMs, RpcAborted, sleep } from '../families/retry.ts';
import { faultText, onRpcFault, type RpcFault } from '../families/rpc-metrics.ts';
import { ReorgDuringFetch, RpcUnsupportedError, type BlockRef, type ChainSource } from '../families/source.ts';
import { createWatchSet } from './watch-set.ts';
import { BaseError, ChainError } from '../domain/errors.ts';

export interface IndexerOptions {
  db: Database;
  log: Logger;
  key: ChainKey;
  source: ChainSource;
  paymentContract: string | null;
  pollIntervalMs: number;
  /** Blocks behind the head where a first start begins (no cursor yet). */
  startMargin: number;
  /** Blocks kept for reorg checks; must cover the required confirmations. */
  windowSize: number;
  maxBlocksPerRange: number;
  fromBlock?: bigint;
  leaseMs?: number;
  lateWatchMs?: number;
  /** Second indexer for the same chain and network: wait for the lease (default) or exit. */
  onLeaseHeld?: 'wait' | 'exit';
  /** Ceiling of the back-off after repeated tick failures. */
  maxBackoffMs?: number;
  /** scheme://host[:port] of the node, named in failure logs and the recorded last error. */
  endpoint?: string;
}

export class LeaseHeldError extends BaseError {
  override readonly name = 'LeaseHeldError';
}

/** Retrying cannot help (the node lacks a method, serves another chain): stop with one clear line. */
export class IndexerFatalError extends ChainError {
  override readonly name = 'IndexerFatalError';
}

/**
 * Records a failure on the chain and network's cursor row: lastError is the newest failure,
 * lastErrorAt when the current run of failures began (a good poll clears both). An indexer that
 * fails before its first block gets a row with no block yet, so status and /metrics show it.
 */
/** The process stops (SIGTERM, or a fatal error after it was recorded): `status` shows it STOPPED, not FAILING. */
export async function recordIndexerStopped(db: Database, key: ChainKey): Promise<void> {
  await db.write((x) => recordStopped(x, key));
}

export async function recordIndexerFailure(db: Database, key: ChainKey, message: string, at = new Date()): Promise<void> {
  // Shown by `status` and serve's dashboard: a URL in the cause keeps only its origin (keys live in the rest).
  await db.write((x) => recordFailure(x, key, originsOnly(message).slice(0, 255), at));
}

/**
 * Until the returned function is called, RPC calls that keep failing (rpc-metrics.ts) are recorded
 * as this chain's last error, at most once a second. Started before the reader connects, so an
 * indexer that never reaches its endpoint is seen failing.
 */
export function recordRpcFaults(db: Database, key: ChainKey): () => void {
  let latest: RpcFault | null = null;
  // biome-ignore lint/correctness/noUnusedVariables: read by ??= (one writer loop at a time)
  let writing: Promise<void> | null = null;
  return onRpcFault((fault) => {
    latest = fault;
    writing ??= (async () => {
      while (latest) {
        const next: RpcFault = latest;
        latest = null;
        await recordIndexerFailure(db, key, faultText(next)).catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, 1000).unref());
      }
      writing = null;
    })();
  });
}

export interface Indexer {
  /** Resolves when stopped; rejects on a fatal error (a reorg deeper than the window). */
  done: Promise<void>;
  stop(): Promise<void>;
}

/**
 * cursor -> fetch -> match -> write -> confirmations, forever. One indexer per chain and network
 * holds a lease on its cursor row; every range commits with its cursor, so a crash replays at most
 * one range and the unique transfer rows keep that replay from counting anything twice.
 */
export function startIndexer(options: IndexerOptions): Indexer {
  const { db, log, key, source } = options;
  const owner = leaseOwnerId();
  const leaseMs = options.leaseMs ?? 30_000;
  const controller = new AbortController();
  const signal = controller.signal;
  // Kept between polls: each poll reads only the payments changed since the previous one.
  const watchSet = createWatchSet({ db, key, paymentContract: options.paymentContract, lateWatchMs: options.lateWatchMs ?? 7 * 86_400_000, log });

  async function acquireLease(): Promise<boolean> {
    const now = new Date();
    const until = new Date(now.getTime() + leaseMs);
    if (await db.write((x) => takeLease(x, key, owner, until, now))) return true;
    // A holder on this machine that no longer runs (kill -9, a crash) is not waited out.
    const holder = (await indexerCursor(db, key))?.leaseOwner;
    if (!holder || !ownerIsGone(holder)) return false;
    const taken = await db.write((x) => takeOverLease(x, key, holder, owner, until));
    if (taken) log.info({ chain: key.chain, network: key.network, previous: holder }, 'took over the lease of an indexer that no longer runs');
    return taken;
  }

  async function ensureCursor(): Promise<void> {
    const found = await indexerCursor(db, key);
    // A row recorded by a failure before any block was read is no position: initialise it.
    const existing = found?.placed ? found : null;
    if (existing && options.fromBlock === undefined) return;
    if (existing?.leaseOwner && existing.leaseOwner !== owner && existing.leaseUntil && existing.leaseUntil > new Date()) return; // the holder keeps its cursor
    const head = await source.head();
    const start = options.fromBlock ?? (head > BigInt(options.startMargin) ? head - BigInt(options.startMargin) : 0n);
    const at = (start > 0n ? await source.blockAt(start - 1n) : null) ?? { number: start - 1n, hash: '0x', parentHash: '0x', timestamp: 0 };
    const placement: CursorPlacement = existing ? { kind: 'moved', id: existing.id } : found ? { kind: 'placeholder', id: found.id } : { kind: 'fresh' };
    // False: another indexer placed or created it first.
    if (!(await db.write((x) => placeCursor(x, key, placement, at, new Date())))) return;
    log.info({ chain: key.chain, network: key.network, startBlock: (at.number + 1n).toString(), head: head.toString() }, 'indexer cursor initialised');
  }

  /** Walk back from the cursor to the newest block whose stored hash the chain still has. */
  async function findForkPoint(cursorNumber: bigint): Promise<BlockRef> {
    const stored = await windowBlocks(poolReader(db), key);
    for (const s of stored) {
      if (s.number > cursorNumber) continue;
      const onChain = await source.blockAt(s.number);
      if (onChain && onChain.hash === s.hash) return onChain;
    }
    throw new DeepReorgError(
      `${key.chain} ${key.network}: no block of the last ${stored.length} indexed blocks is still canonical — a reorg deeper than the window (${options.windowSize}); refusing to guess`,
    );
  }

  /** The newest block of the unfinalized window: what the chain must still have. */
  async function newestStored(): Promise<{ number: bigint; hash: string } | null> {
    const [newest] = await windowBlocks(poolReader(db), key, 1);
    return newest ?? null;
  }

  async function checkReorg(): Promise<void> {
    const cursor = await indexerCursor(db, key);
    const newest = await newestStored();
    if (!cursor || !newest) return;
    const n = newest.number;
    const onChain = await source.blockAt(n);
    if (onChain && onChain.hash === newest.hash) return;
    const fork = await findForkPoint(n);
    const affected = await rollbackTo(db, key, fork);
    log.warn({ chain: key.chain, network: key.network, from: n.toString(), forkPoint: fork.number.toString(), affectedPayments: affected }, 'reorg: rolled back to the fork point');
  }

  /** What the node said this tick, for status and metrics (and the finality the ledger waits for). */
  async function noteHead(head: bigint, finalized: bigint | null): Promise<void> {
    await db.write((x) => recordHead(x, key, owner, head, finalized, new Date()));
  }

  async function recordError(err: unknown): Promise<void> {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    const at = options.endpoint && !message.includes(options.endpoint) ? ` (endpoint ${options.endpoint})` : '';
    await recordIndexerFailure(db, key, message.slice(0, 255 - at.length) + at).catch(() => undefined);
  }

  async function tick(): Promise<boolean> {
    if (!(await acquireLease())) throw new LeaseHeldError('lease lost');
    const head = await source.head();
    // Idle polls stay cheap: the tip is re-checked when the chain moved (a tip replaced at the same
    // height is caught with the next block), and finality is read only when a payment waits for it.
    const before = BigInt((await indexerCursor(db, key))!.blockNumber);
    if (head !== before) await checkReorg();
    const cursor = (await indexerCursor(db, key))!;
    const next = BigInt(cursor.blockNumber) + 1n;
    const waiting = next > head ? await hasInFlight(db, key) : true;
    const finalized = source.finalized && waiting ? await source.finalized() : null;
    await noteHead(head, finalized);
    if (next > head) {
      // Nothing new to read: finality may still have moved over payments waiting for it.
      if (finalized !== null) await applyFinality(db, key, { leaseOwner: owner, finalized });
      return false;
    }
    const to = next + BigInt(options.maxBlocksPerRange) - 1n < head ? next + BigInt(options.maxBlocksPerRange) - 1n : head;
    const chainTime = cursor.blockTime ? new Date(Number(cursor.blockTime) * 1000) : null;
    const watch = await watchSet.at(chainTime);
    const range = await source.fetchRange(next, to, watch);
    const through = range.through !== undefined && range.through < to ? range.through : to;
    if (through < next) return false; // the reader could not read the first height yet (e.g. not available): wait a poll
    const tip = await newestStored();
    if (!range.sparse && range.blocks[0] && tip && range.blocks[0].parentHash !== tip.hash) {
      throw new ReorgDuringFetch(`block ${range.blocks[0].number} does not extend block ${tip.number}`);
    }
    const result = await applyRange(db, key, {
      from: next,
      to: through,
      blocks: range.blocks.filter((b) => b.number <= through),
      transfers: range.transfers.filter((t) => t.blockNumber <= through),
      windowSize: options.windowSize,
      leaseOwner: owner,
      finalized,
    });
    const fields = { chain: key.chain, network: key.network, from: next.toString(), to: through.toString(), ...result };
    if (result.recorded || result.reorged) log.info(fields, 'indexed range');
    else log.debug(fields, 'indexed range');
    return through < head;
  }

  const done = (async () => {
    await ensureCursor();
    while (!signal.aborted) {
      if (await acquireLease()) break;
      if (options.onLeaseHeld === 'exit') {
        throw new LeaseHeldError(`another indexer holds ${key.chain} ${key.network}; only one may run per chain and network`);
      }
      log.warn({ chain: key.chain, network: key.network }, 'another indexer holds this chain and network; waiting for its lease');
      await sleep(Math.max(1000, leaseMs / 2), signal).catch(() => undefined);
    }
    log.info({ chain: key.chain, network: key.network, owner }, 'indexer started');
    let failures = 0;
    while (!signal.aborted) {
      let behind = false;
      let wait = options.pollIntervalMs;
      try {
        behind = await tick();
        failures = 0;
      } catch (err) {
        if (err instanceof RpcAborted || signal.aborted) break;
        if (err instanceof DeepReorgError || err instanceof IndexerFatalError) throw err;
        if (err instanceof RpcUnsupportedError) {
          throw new IndexerFatalError(`${key.chain} ${key.network}: the node refuses a method the indexer needs (${err.message}); point the indexer at an endpoint that serves it`);
        }
        if (err instanceof LeaseHeldError || err instanceof LeaseLostError) {
          log.error({ chain: key.chain }, 'lost the indexer lease to another process; stopping');
          throw err;
        }
        failures++;
        // Every repeated failure backs off: a flapping node or a chain that keeps changing under
        // the reader is never hammered in a loop.
        wait = Math.max(options.pollIntervalMs, backoffMs(failures, options.maxBackoffMs ?? 60_000));
        await recordError(err);
        if (err instanceof ReorgDuringFetch) log.warn({ chain: key.chain, err: err.message, failures, retryInMs: Math.round(wait) }, 'chain changed while reading a range; re-checking');
        else log.error({ err, chain: key.chain, network: key.network, endpoint: options.endpoint, failures, retryInMs: Math.round(wait) }, 'indexer tick failed; retrying');
        behind = false;
      }
      if (!behind) await sleep(wait, signal).catch(() => undefined);
    }
    await db.write((x) => releaseLease(x, key, owner));
    log.info({ chain: key.chain, network: key.network }, 'indexer stopped');
  })();

  return {
    done,
    async stop() {
      controller.abort();
      await done.catch(() => undefined);
    },
  };
}
