import { randomBytes } from 'node:crypto';
import { IndexedBlock } from '../db/entities/indexed-block.entity.ts';
import { IndexerCursor } from '../db/entities/indexer-cursor.entity.ts';
import type { Database } from '../db/orm.ts';
import type { Logger } from '../logger.ts';
import { RpcAborted, sleep } from './retry.ts';
import { applyRange, DeepReorgError, LeaseLostError, loadWatchSet, readCursor, rollbackTo, updateConfirmations, type ChainKey } from './ledger.ts';
import { ReorgDuringFetch, type BlockRef, type ChainSource } from './source.ts';

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
}

export class LeaseHeldError extends Error {
  override readonly name = 'LeaseHeldError';
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
  const owner = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const leaseMs = options.leaseMs ?? 30_000;
  const controller = new AbortController();
  const signal = controller.signal;

  async function acquireLease(): Promise<boolean> {
    const now = new Date();
    const changed = await db.em().nativeUpdate(
      IndexerCursor,
      { chain: key.chain, network: key.network, $or: [{ leaseOwner: null }, { leaseUntil: { $lt: now } }, { leaseOwner: owner }] },
      { leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs) },
    );
    return changed > 0;
  }

  async function ensureCursor(): Promise<void> {
    const existing = await readCursor(db, key);
    if (existing && options.fromBlock === undefined) return;
    const head = await source.head();
    const start = options.fromBlock ?? (head > BigInt(options.startMargin) ? head - BigInt(options.startMargin) : 0n);
    const at = (start > 0n ? await source.blockAt(start - 1n) : null) ?? { number: start - 1n, hash: '0x', parentHash: '0x', timestamp: 0 };
    if (existing) {
      if (existing.leaseOwner && existing.leaseOwner !== owner && existing.leaseUntil && existing.leaseUntil > new Date()) return; // the holder keeps its cursor
      await db.em().nativeUpdate(IndexerCursor, { id: existing.id }, { blockNumber: at.number.toString(), blockHash: at.hash });
      await db.em().nativeDelete(IndexedBlock, { chain: key.chain, network: key.network });
    } else {
      const em = db.em();
      em.create(IndexerCursor, { chain: key.chain, network: key.network, blockNumber: at.number.toString(), blockHash: at.hash, leaseOwner: null, leaseUntil: null });
      try {
        await em.flush();
      } catch {
        return; // another indexer created it first
      }
    }
    if (at.hash !== '0x') {
      const em = db.em();
      em.create(IndexedBlock, { chain: key.chain, network: key.network, number: at.number.toString(), hash: at.hash, parentHash: at.parentHash });
      await em.flush();
    }
    log.info({ chain: key.chain, network: key.network, startBlock: (at.number + 1n).toString(), head: head.toString() }, 'indexer cursor initialised');
  }

  /** Walk back from the cursor to the newest block whose stored hash the chain still has. */
  async function findForkPoint(cursorNumber: bigint): Promise<BlockRef> {
    const stored = await db.em().find(IndexedBlock, { chain: key.chain, network: key.network }, { orderBy: { number: 'desc' } });
    for (const s of stored) {
      const n = BigInt(s.number);
      if (n > cursorNumber) continue;
      const onChain = await source.blockAt(n);
      if (onChain && onChain.hash === s.hash) return onChain;
    }
    throw new DeepReorgError(
      `${key.chain} ${key.network}: no block of the last ${stored.length} indexed blocks is still canonical — a reorg deeper than the window (${options.windowSize}); refusing to guess`,
    );
  }

  /** The newest block of the unfinalized window: what the chain must still have. */
  async function newestStored(): Promise<IndexedBlock | null> {
    const [newest] = await db.em().find(IndexedBlock, { chain: key.chain, network: key.network }, { orderBy: { number: 'desc' }, limit: 1 });
    return newest ?? null;
  }

  async function checkReorg(): Promise<void> {
    const cursor = await readCursor(db, key);
    const newest = await newestStored();
    if (!cursor || !newest) return;
    const n = BigInt(newest.number);
    const onChain = await source.blockAt(n);
    if (onChain && onChain.hash === newest.hash) return;
    const fork = await findForkPoint(n);
    const affected = await rollbackTo(db, key, fork);
    log.warn({ chain: key.chain, network: key.network, from: n.toString(), forkPoint: fork.number.toString(), affectedPayments: affected }, 'reorg: rolled back to the fork point');
  }

  async function tick(): Promise<boolean> {
    if (!(await acquireLease())) throw new LeaseHeldError('lease lost');
    await checkReorg();
    const head = await source.head();
    const cursor = (await readCursor(db, key))!;
    const next = BigInt(cursor.blockNumber) + 1n;
    let behind = false;
    if (next <= head) {
      const to = next + BigInt(options.maxBlocksPerRange) - 1n < head ? next + BigInt(options.maxBlocksPerRange) - 1n : head;
      const watch = await loadWatchSet(db, key, options.paymentContract, options.lateWatchMs ?? 7 * 86_400_000);
      const range = await source.fetchRange(next, to, watch);
      const tip = await newestStored();
      if (range.blocks[0] && tip && range.blocks[0].parentHash !== tip.hash) {
        throw new ReorgDuringFetch(`block ${range.blocks[0].number} does not extend block ${tip.number}`);
      }
      const result = await applyRange(db, key, { ...range, windowSize: options.windowSize, leaseOwner: owner, to });
      if (result.recorded) log.info({ chain: key.chain, network: key.network, from: next.toString(), to: to.toString(), ...result }, 'indexed range');
      else log.debug({ chain: key.chain, network: key.network, from: next.toString(), to: to.toString() }, 'indexed range');
      behind = to < head;
    }
    await updateConfirmations(db, key, head);
    return behind;
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
    while (!signal.aborted) {
      let behind = false;
      try {
        behind = await tick();
      } catch (err) {
        if (err instanceof RpcAborted || signal.aborted) break;
        if (err instanceof DeepReorgError) throw err;
        if (err instanceof ReorgDuringFetch) {
          log.warn({ chain: key.chain, err: err.message }, 'chain changed while reading a range; re-checking');
          continue;
        }
        if (err instanceof LeaseHeldError || err instanceof LeaseLostError) {
          log.error({ chain: key.chain }, 'lost the indexer lease to another process; stopping');
          throw err;
        }
        log.error({ err, chain: key.chain }, 'indexer tick failed; retrying');
      }
      if (!behind) await sleep(options.pollIntervalMs, signal).catch(() => undefined);
    }
    await db.em().nativeUpdate(IndexerCursor, { chain: key.chain, network: key.network, leaseOwner: owner }, { leaseOwner: null, leaseUntil: null });
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
