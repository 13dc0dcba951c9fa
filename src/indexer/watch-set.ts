import { changedDepositPayments, watchedDepositPayments, type WatchedPaymentRow } from '../store/ledger-rows.ts';
import type { Database } from '../store/orm.ts';
import { poolReader } from '../store/raw-sql.ts';
import { LIVE_PAYMENT_STATUSES } from '../domain/lifecycle.ts';
import type { Logger } from '../logger.ts';
import type { ChainKey } from './ledger.ts';
import type { WatchSet } from '../families/source.ts';

// The addresses an indexer watches, kept in memory between polls. Reading every watched payment
// each poll made a poll's cost grow with open payments (docs/performance.md#indexer-at-scale), so
// a poll reads only the payments changed since the previous read, and a full read now and then is
// the safety net for anything those reads missed. The set is exactly the one a full read would
// give: live payments, and the others while the chain's time is within the late-watch window of
// their own (docs/indexers.md).

/** One payment as the watch set sees it. */
export interface WatchRow {
  id: string;
  address: string;
  /** PENDING, PROCESSING or CONFIRMING: watched whatever the time. */
  live: boolean;
  /** Epoch ms; a payment that is not live is watched while `expiresAt >= since`. */
  expiresAt: number;
}

/** The payments watched at one late-watch boundary (`since`, epoch ms) and the addresses they use. */
export interface WatchIndex {
  readonly addresses: Set<string>;
  has(paymentId: string): boolean;
  /** Everything, from a full read made at `since`. */
  reset(rows: Iterable<WatchRow>, since: number): void;
  /** One payment as it is now: added, replaced or dropped. */
  apply(row: WatchRow): void;
  /** Moves the boundary forward, dropping what it passes; false if it would move back (a full read is needed). */
  advance(since: number): boolean;
}

export function createWatchIndex(): WatchIndex {
  const payments = new Map<string, WatchRow>();
  /** How many watched payments use each address (a pool address is leased again once released). */
  const users = new Map<string, number>();
  const addresses = new Set<string>();
  /** Min-heap on expiresAt of the watched payments that are not live; stale entries are skipped. */
  let closing: WatchRow[] = [];
  let since = -Infinity;

  const watched = (row: WatchRow) => row.live || row.expiresAt >= since;

  function push(row: WatchRow): void {
    let i = closing.push(row) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (closing[parent]!.expiresAt <= row.expiresAt) break;
      closing[i] = closing[parent]!;
      i = parent;
    }
    closing[i] = row;
  }

  function pop(): WatchRow {
    const top = closing[0]!;
    const last = closing.pop()!;
    if (closing.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= closing.length) break;
        const c = l + 1 < closing.length && closing[l + 1]!.expiresAt < closing[l]!.expiresAt ? l + 1 : l;
        if (closing[c]!.expiresAt >= last.expiresAt) break;
        closing[i] = closing[c]!;
        i = c;
      }
      closing[i] = last;
    }
    return top;
  }

  function drop(row: WatchRow): void {
    payments.delete(row.id);
    const n = (users.get(row.address) ?? 1) - 1;
    if (n > 0) users.set(row.address, n);
    else {
      users.delete(row.address);
      addresses.delete(row.address);
    }
  }

  function apply(row: WatchRow): void {
    const old = payments.get(row.id);
    if (old) drop(old);
    if (!watched(row)) return;
    payments.set(row.id, row);
    users.set(row.address, (users.get(row.address) ?? 0) + 1);
    addresses.add(row.address);
    if (!row.live) push(row);
  }

  return {
    addresses,
    has: (id) => payments.has(id),
    reset(rows, at) {
      payments.clear();
      users.clear();
      addresses.clear();
      closing = [];
      since = at;
      for (const row of rows) apply(row);
    },
    apply,
    advance(at) {
      if (at < since) return false;
      since = at;
      while (closing.length > 0 && closing[0]!.expiresAt < at) {
        const row = pop();
        if (payments.get(row.id) === row) drop(row); // else replaced since it was pushed
      }
      return true;
    },
  };
}

export interface WatchSetOptions {
  db: Database;
  key: ChainKey;
  paymentContract: string | null;
  lateWatchMs: number;
  log?: Logger;
  /**
   * Each read of changes reaches this far back before the previous read began: a writer whose clock
   * runs behind this process's (serve on another machine), or whose commit landed after the time it
   * stamped, is still read. Rows changed within it are read again each poll.
   */
  overlapMs?: number;
  /** A full read this often: the safety net for a change stamped further back than the overlap. */
  fullReadMs?: number;
  /** This process's wall clock (tests). */
  now?: () => number;
}

export interface WatchSetCache {
  /** The watch set at the chain's time (null: the wall clock), after reading what changed; its Set is the cache's own, valid until the next call. */
  at(chainTime: Date | null): Promise<WatchSet>;
}

const LIVE = new Set<string>(LIVE_PAYMENT_STATUSES);

const toWatchRow = (p: WatchedPaymentRow): WatchRow => ({ id: p.id, address: p.address, live: LIVE.has(p.status), expiresAt: p.expiresAt.getTime() });

export function createWatchSet(options: WatchSetOptions): WatchSetCache {
  const { db, key, paymentContract, lateWatchMs, log } = options;
  const overlapMs = options.overlapMs ?? 60_000;
  const fullReadMs = options.fullReadMs ?? 300_000;
  const now = options.now ?? Date.now;
  const index = createWatchIndex();
  /** Wall-clock ms the next read of changes starts from; null until the first full read. */
  let changedFrom: number | null = null;
  let lastFullRead = 0;


  async function readAll(since: number, started: number, compare: boolean): Promise<void> {
    const t0 = performance.now();
    const rows = await watchedDepositPayments(poolReader(db), key, new Date(since));
    if (compare && changedFrom !== null) {
      // Unchanged since before the last read of changes, yet not watched: a change those reads missed.
      const from = changedFrom;
      const missed = rows.filter((r) => r.updatedAt.getTime() < from && !index.has(r.id)).length;
      if (missed > 0) log?.warn({ chain: key.chain, network: key.network, missed, overlapMs }, 'watch set: a full read found payments the reads of changes missed (a writer\'s clock behind this one by more than the overlap?)');
    }
    index.reset(rows.map(toWatchRow), since);
    changedFrom = started - overlapMs;
    lastFullRead = performance.now();
    log?.debug({ chain: key.chain, network: key.network, payments: rows.length, addresses: index.addresses.size, ms: Math.round(lastFullRead - t0) }, 'watch set read in full');
  }

  async function readChanges(started: number): Promise<void> {
    const rows = await changedDepositPayments(poolReader(db), key, new Date(changedFrom!));
    for (const row of rows) index.apply(toWatchRow(row));
    changedFrom = started - overlapMs;
  }

  return {
    async at(chainTime) {
      const started = now();
      // Judged by the newest processed block's time, so a catch-up watches what a live indexer did.
      const since = (chainTime ?? new Date(started)).getTime() - lateWatchMs;
      // A boundary moving back (a reorg's rollback) may bring back payments already dropped.
      const moved = index.advance(since);
      if (changedFrom === null || !moved || performance.now() - lastFullRead >= fullReadMs) await readAll(since, started, moved);
      else await readChanges(started);
      return { addresses: index.addresses, paymentContract };
    },
  };
}
