import { newId } from '../domain/ids.ts';
import { NO_BLOCK_YET } from '../domain/lifecycle.ts';
import type { Executor } from './executor.ts';
import { insertBlock, type ChainRef, type WindowBlock } from './ledger-rows.ts';
import type { Database } from './orm.ts';
import { nullableDate, dateOf, poolReader } from './raw-sql.ts';

// The indexer's own writes to its cursor row outside a range (src/indexer/run-indexer.ts): the
// lease, what the node said, failures, and where a first start begins. What a range writes (the
// fence, the position, the window of block hashes) is in src/store/ledger-rows.ts. The cursor rows
// are read here too, for the indexer, `chaingate status`, /metrics and the start-up checks.

/** A cursor row as its readers see it. */
export interface IndexerCursorRow {
  id: string;
  chain: string;
  network: string;
  /** The processed height (a decimal string); meaningless while `placed` is false. */
  blockNumber: string;
  /** False for a row a failure wrote before the indexer read any block: no position, no report. */
  placed: boolean;
  /** Unix seconds of the newest processed block (a decimal string), when known. */
  blockTime: string | null;
  leaseOwner: string | null;
  leaseUntil: Date | null;
  headNumber: string | null;
  finalizedNumber: string | null;
  headSeenAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
  /** When the newest failure was recorded (lastErrorAt is when the run of failures began). */
  lastErrorSeenAt: Date | null;
  updatedAt: Date;
}

interface RawCursor {
  id: string;
  chain: string;
  network: string;
  block_number: string;
  block_hash: string;
  block_time: string | number | null;
  lease_owner: string | null;
  lease_until: unknown;
  head_number: string | null;
  finalized_number: string | null;
  head_seen_at: unknown;
  last_error: string | null;
  last_error_at: unknown;
  last_error_seen_at: unknown;
  updated_at: unknown;
}

const CURSOR_COLUMNS =
  'id, chain, network, block_number, block_hash, block_time, lease_owner, lease_until, head_number, finalized_number, head_seen_at, last_error, last_error_at, last_error_seen_at, updated_at';

function cursorOf(r: RawCursor): IndexerCursorRow {
  return {
    id: r.id,
    chain: r.chain,
    network: r.network,
    blockNumber: r.block_number,
    placed: r.block_hash !== NO_BLOCK_YET,
    blockTime: r.block_time === null ? null : String(r.block_time),
    leaseOwner: r.lease_owner,
    leaseUntil: nullableDate(r.lease_until),
    headNumber: r.head_number,
    finalizedNumber: r.finalized_number,
    headSeenAt: nullableDate(r.head_seen_at),
    lastError: r.last_error,
    lastErrorAt: nullableDate(r.last_error_at),
    lastErrorSeenAt: nullableDate(r.last_error_seen_at),
    updatedAt: dateOf(r.updated_at),
  };
}

/**
 * A process retrying a call that fails records it at least this often (the RPC clients back off to
 * 30 s, plus a timeout); one that recorded nothing for longer, and holds no lease, is gone.
 */
export const FAILURE_SEEN_WINDOW_MS = 120_000;

/**
 * An indexer is failing while a process is behind the error: it holds the lease, or (connecting,
 * before it takes one) it recorded a failure within the window. A stopped or killed indexer's last
 * error stays on the row for `status`, but it is no longer FAILING: it is stopped.
 */
export function isFailingNow(c: Pick<IndexerCursorRow, 'lastError' | 'lastErrorSeenAt' | 'leaseOwner' | 'leaseUntil'>, now: Date): boolean {
  if (!c.lastError) return false;
  if (c.leaseOwner && c.leaseUntil && c.leaseUntil > now) return true;
  // Rows from before the column: judged by nothing newer than the start of the failures.
  return c.lastErrorSeenAt !== null && now.getTime() - c.lastErrorSeenAt.getTime() <= FAILURE_SEEN_WINDOW_MS;
}

/** Every indexer's cursor, by chain and network. */
export async function indexerCursors(db: Database): Promise<IndexerCursorRow[]> {
  return (await poolReader(db).all<RawCursor>(`select ${CURSOR_COLUMNS} from indexer_cursor order by chain, network`)).map(cursorOf);
}

/** The cursor of one chain and network, if its indexer has written one. */
export async function indexerCursor(db: Database, key: ChainRef): Promise<IndexerCursorRow | null> {
  const row = await poolReader(db).get<RawCursor>(`select ${CURSOR_COLUMNS} from indexer_cursor where chain = ? and network = ?`, [key.chain, key.network]);
  return row ? cursorOf(row) : null;
}

/** Takes or renews the lease when it is free, expired or already ours. */
export async function takeLease(x: Executor, key: ChainRef, owner: string, until: Date, now: Date): Promise<boolean> {
  return (
    (await x.run('update indexer_cursor set lease_owner = ?, lease_until = ? where chain = ? and network = ? and (lease_owner is null or lease_until < ? or lease_owner = ?)', [
      owner,
      until,
      key.chain,
      key.network,
      now,
      owner,
    ])) > 0
  );
}

/** Takes the lease from a holder known to be gone (a process of this machine that no longer runs). */
export async function takeOverLease(x: Executor, key: ChainRef, holder: string, owner: string, until: Date): Promise<boolean> {
  return (await x.run('update indexer_cursor set lease_owner = ?, lease_until = ? where chain = ? and network = ? and lease_owner = ?', [owner, until, key.chain, key.network, holder])) > 0;
}

export async function releaseLease(x: Executor, key: ChainRef, owner: string): Promise<void> {
  await x.run('update indexer_cursor set lease_owner = null, lease_until = null where chain = ? and network = ? and lease_owner = ?', [key.chain, key.network, owner]);
}

/** What the node said this tick (head, finality); a good tick clears the last error. */
export async function recordHead(x: Executor, key: ChainRef, owner: string, head: bigint, finalized: bigint | null, now: Date): Promise<void> {
  await x.run(
    'update indexer_cursor set head_number = ?, finalized_number = ?, head_seen_at = ?, last_error = null, last_error_at = null, last_error_seen_at = null where chain = ? and network = ? and lease_owner = ?',
    [head.toString(), finalized === null ? null : finalized.toString(), now, key.chain, key.network, owner],
  );
}

/**
 * The newest failure on the cursor row; lastErrorAt keeps when the current run of failures began.
 * A chain with no row yet gets one with no block (dated as never written: updatedAt counts as a
 * report of the indexer, and it has made none).
 */
export async function recordFailure(x: Executor, key: ChainRef, lastError: string, at: Date): Promise<void> {
  await x.run(
    `insert into indexer_cursor (id, chain, network, block_number, block_hash, block_time, lease_owner, lease_until, last_error, last_error_at, last_error_seen_at, updated_at)
     values (?, ?, ?, '-1', ?, null, null, null, ?, ?, ?, ?)
     on conflict (chain, network) do update set last_error = excluded.last_error, last_error_seen_at = excluded.last_error_seen_at,
       last_error_at = case when indexer_cursor.last_error is null then excluded.last_error_at else indexer_cursor.last_error_at end`,
    [newId(), key.chain, key.network, NO_BLOCK_YET, lastError, at, at, new Date(0)],
  );
}

/** The indexer process exits: its last error stays on the row, but nobody is behind it any more (isFailingNow). */
export async function recordStopped(x: Executor, key: ChainRef): Promise<void> {
  await x.run('update indexer_cursor set last_error_seen_at = null where chain = ? and network = ?', [key.chain, key.network]);
}

export type CursorPlacement = { kind: 'fresh' } | { kind: 'placeholder'; id: string } | { kind: 'moved'; id: string };

/**
 * Where a first start begins (or `--from-block` moves it): the cursor at `at`, the block just
 * before the first to read. False when another indexer placed or created it first.
 */
export async function placeCursor(x: Executor, key: ChainRef, placement: CursorPlacement, at: WindowBlock, now: Date): Promise<boolean> {
  const time = at.timestamp ? String(at.timestamp) : null;
  if (placement.kind === 'placeholder') {
    const placed = await x.run('update indexer_cursor set block_number = ?, block_hash = ?, block_time = ?, updated_at = ? where id = ? and block_hash = ?', [
      at.number.toString(),
      at.hash,
      time,
      now,
      placement.id,
      NO_BLOCK_YET,
    ]);
    if (placed === 0) return false;
  } else if (placement.kind === 'moved') {
    await x.run('update indexer_cursor set block_number = ?, block_hash = ?, block_time = ? where id = ?', [at.number.toString(), at.hash, time, placement.id]);
    await x.run('delete from indexed_block where chain = ? and network = ?', [key.chain, key.network]);
  } else {
    const created = await x.run(
      `insert into indexer_cursor (id, chain, network, block_number, block_hash, block_time, lease_owner, lease_until, updated_at)
       values (?, ?, ?, ?, ?, ?, null, null, ?) on conflict (chain, network) do nothing`,
      [newId(), key.chain, key.network, at.number.toString(), at.hash, time, now],
    );
    if (created === 0) return false;
  }
  if (at.hash !== '0x') await insertBlock(x, key, at);
  return true;
}
