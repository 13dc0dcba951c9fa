import { IN_FLIGHT_PAYMENT_STATUSES, LIVE_PAYMENT_STATUSES, type PaymentStatus } from '../domain/lifecycle.ts';
import { newId } from '../domain/ids.ts';
import type { Executor, Reader } from './executor.ts';
import { dateOf } from './raw-sql.ts';
import { paymentOf, transferOf, type PaymentRow, type StoredPayment, type StoredTransfer, type TransferRow } from './records.ts';

// The indexer ledger's statements (src/indexer/ledger.ts): its lease fence, the cursor, the
// unfinalized window of block hashes, and the reads of transfers and payments it decides on. Inside
// a write they go through its executor, so the ledger reads the rows it has just written. Block
// numbers are decimal strings (observed_transfer, the cursor) or bigint (indexed_block), bound as
// strings either way.

export interface ChainRef {
  chain: string;
  network: string;
}

/** A block as a chain source reports it (src/families/source.ts BlockRef); `timestamp` in unix seconds. */
export interface WindowBlock {
  number: bigint;
  hash: string;
  parentHash: string;
  timestamp: number;
}

/** Marks the cursor as touched by its lease holder; false when `owner` no longer holds the lease. */
export async function fenceLease(x: Executor, key: ChainRef, owner: string): Promise<boolean> {
  return (await x.run('update indexer_cursor set updated_at = ? where chain = ? and network = ? and lease_owner = ?', [new Date(), key.chain, key.network, owner])) > 0;
}

export interface CursorRow {
  blockNumber: string;
  /** Unix seconds of the newest processed block, when known. */
  blockTime: bigint | null;
}

export async function cursorRow(r: Reader, key: ChainRef): Promise<CursorRow> {
  const row = await r.get<{ block_number: string; block_time: string | number | null }>('select block_number, block_time from indexer_cursor where chain = ? and network = ?', [key.chain, key.network]);
  if (!row) throw new Error(`${key.chain} ${key.network}: no indexer cursor`);
  return { blockNumber: row.block_number, blockTime: row.block_time === null ? null : BigInt(row.block_time) };
}

/** Moves the cursor to `number` (with the hash and time of the newest real block, when given). */
export async function moveCursor(x: Executor, key: ChainRef, number: bigint, block: Pick<WindowBlock, 'hash' | 'timestamp'> | null): Promise<void> {
  if (block === null) {
    await x.run('update indexer_cursor set block_number = ?, updated_at = ? where chain = ? and network = ?', [number.toString(), new Date(), key.chain, key.network]);
    return;
  }
  await x.run('update indexer_cursor set block_number = ?, block_hash = ?, block_time = ?, updated_at = ? where chain = ? and network = ?', [
    number.toString(),
    block.hash,
    String(block.timestamp),
    new Date(),
    key.chain,
    key.network,
  ]);
}

/**
 * Stores a range's block hashes in the unfinalized window and drops those older than `windowSize`
 * below the newest: the range's own blocks are written after the trim, so they all stay until the
 * next range trims them.
 */
export async function storeBlocks(x: Executor, key: ChainRef, blocks: WindowBlock[], windowSize: number): Promise<void> {
  for (const b of blocks) await x.run('delete from indexed_block where chain = ? and network = ? and number = ?', [key.chain, key.network, b.number.toString()]);
  const last = blocks.at(-1);
  if (last) await x.run('delete from indexed_block where chain = ? and network = ? and number < ?', [key.chain, key.network, (last.number - BigInt(windowSize)).toString()]);
  for (const b of blocks) await insertBlock(x, key, b);
}

/** Adds a block to the unfinalized window. */
export async function insertBlock(x: Executor, key: ChainRef, b: WindowBlock): Promise<void> {
  await x.run('insert into indexed_block (id, chain, network, number, hash, parent_hash, timestamp) values (?, ?, ?, ?, ?, ?, ?)', [
    newId(),
    key.chain,
    key.network,
    b.number.toString(),
    b.hash,
    b.parentHash,
    String(b.timestamp),
  ]);
}

/** Drops the window's blocks above a fork point. */
export async function dropBlocksAbove(x: Executor, key: ChainRef, number: bigint): Promise<void> {
  await x.run('delete from indexed_block where chain = ? and network = ? and number > ?', [key.chain, key.network, number.toString()]);
}

/** The window's blocks, newest first (at most `limit`). */
export async function windowBlocks(r: Reader, key: ChainRef, limit?: number): Promise<{ number: bigint; hash: string }[]> {
  const rows = await r.all<{ number: string | number; hash: string }>(
    `select number, hash from indexed_block where chain = ? and network = ? order by number desc${limit === undefined ? '' : ' limit ?'}`,
    limit === undefined ? [key.chain, key.network] : [key.chain, key.network, limit],
  );
  return rows.map((b) => ({ number: BigInt(b.number), hash: b.hash }));
}

/** Unix seconds of the first stored block at or above `height` that has a time. */
export async function storedBlockTime(r: Reader, key: ChainRef, height: bigint): Promise<bigint | null> {
  const row = await r.get<{ timestamp: string | number }>(
    'select timestamp from indexed_block where chain = ? and network = ? and number >= ? and timestamp is not null order by number limit 1',
    [key.chain, key.network, height.toString()],
  );
  return row ? BigInt(row.timestamp) : null;
}

/** Whether a block a /confirm receipt names is the one the indexer holds at that height. */
export async function claimIsOffChain(r: Reader, key: ChainRef, blockNumber: bigint, blockHash: string): Promise<boolean> {
  const stored = await r.get<{ hash: string }>('select hash from indexed_block where chain = ? and network = ? and number = ?', [key.chain, key.network, blockNumber.toString()]);
  return stored !== undefined && stored.hash.toLowerCase() !== blockHash.toLowerCase();
}

/** What the ledger decides on of a recorded transfer. */
export type TransferRef = Pick<StoredTransfer, 'id' | 'status' | 'paymentId' | 'blockNumber' | 'blockHash'>;

/** The row of a transfer (chain, tx, log index: unique), if recorded. */
export async function findTransfer(r: Reader, key: ChainRef, txHash: string, logIndex: number): Promise<TransferRef | null> {
  const row = await r.get<TransferRow>('select * from observed_transfer where chain = ? and network = ? and tx_hash = ? and log_index = ?', [
    key.chain,
    key.network,
    txHash,
    logIndex,
  ]);
  return row ? transferOf(row) : null;
}

/** Heights per statement: a list padded to this length keeps one statement text whatever the range size. */
const HEIGHTS_PER_STATEMENT = 64;

/** Transfers recorded at these heights, REORGED ones aside. */
export async function transfersAtHeights(r: Reader, key: ChainRef, heights: string[]): Promise<TransferRef[]> {
  const out: TransferRef[] = [];
  const sql = `select * from observed_transfer
    where chain = ? and network = ? and status <> 'REORGED' and block_number in (${Array(HEIGHTS_PER_STATEMENT).fill('?').join(', ')})`;
  for (let i = 0; i < heights.length; i += HEIGHTS_PER_STATEMENT) {
    const part = heights.slice(i, i + HEIGHTS_PER_STATEMENT);
    const padded = [...part, ...Array<string>(HEIGHTS_PER_STATEMENT - part.length).fill(part[0]!)];
    out.push(...(await r.all<TransferRow>(sql, [key.chain, key.network, ...padded])).map(transferOf));
  }
  return out;
}

/** The payment a transfer pays: by its contract event's externalId, or by its deposit address. */
export async function paymentOfTransfer(
  r: Reader,
  key: { chain: string; isTestnet: boolean },
  t: { kind: string; externalId?: string | undefined; to: string },
): Promise<StoredPayment | null> {
  let row: PaymentRow | undefined;
  if (t.kind === 'contract') {
    if (!t.externalId) return null;
    row = await r.get<PaymentRow>(`select * from payment where external_id = ? and blockchain = ? and is_testnet = ? and payment_type = 'SMART_CONTRACT' limit 1`, [t.externalId, key.chain, key.isTestnet]);
  } else {
    row = await r.get<PaymentRow>(`select * from payment where blockchain = ? and is_testnet = ? and payment_type = 'DIRECT' and address = ? limit 1`, [key.chain, key.isTestnet, t.to]);
  }
  return row ? paymentOf(row) : null;
}

const IN_FLIGHT = IN_FLIGHT_PAYMENT_STATUSES.map((s) => `'${s}'`).join(', ');

/** Whether any payment of this chain is counting confirmations (or waiting for finality). */
export async function hasInFlightPayment(r: Reader, key: { chain: string; isTestnet: boolean }): Promise<boolean> {
  return (await r.get(`select 1 as x from payment where blockchain = ? and is_testnet = ? and status in (${IN_FLIGHT}) limit 1`, [key.chain, key.isTestnet])) !== undefined;
}

/** Ids of this chain's payments counting confirmations (or waiting for finality). */
export async function inFlightPayments(r: Reader, key: { chain: string; isTestnet: boolean }): Promise<string[]> {
  return (await r.all<{ id: string }>(`select id from payment where blockchain = ? and is_testnet = ? and status in (${IN_FLIGHT}) order by created_at, id`, [key.chain, key.isTestnet])).map(
    (p) => p.id,
  );
}

/** A deposit payment as the indexer's watch set sees it (src/indexer/watch-set.ts). */
export interface WatchedPaymentRow {
  id: string;
  address: string;
  status: PaymentStatus;
  expiresAt: Date;
  updatedAt: Date;
}

const LIVE = LIVE_PAYMENT_STATUSES.map((s) => `'${s}'`).join(', ');

async function depositPayments(r: Reader, key: { chain: string; isTestnet: boolean }, condition: string, at: Date): Promise<WatchedPaymentRow[]> {
  const rows = await r.all<{ id: string; address: string; status: PaymentStatus; expires_at: unknown; updated_at: unknown }>(
    `select id, address, status, expires_at, updated_at from payment where blockchain = ? and is_testnet = ? and payment_type = 'DIRECT' and ${condition}`,
    [key.chain, key.isTestnet, at],
  );
  return rows.map((p) => ({ id: p.id, address: p.address, status: p.status, expiresAt: dateOf(p.expires_at), updatedAt: dateOf(p.updated_at) }));
}

/** This chain's deposit payments that are live, or expire at or after `since`. */
export function watchedDepositPayments(r: Reader, key: { chain: string; isTestnet: boolean }, since: Date): Promise<WatchedPaymentRow[]> {
  return depositPayments(r, key, `(status in (${LIVE}) or expires_at >= ?)`, since);
}

/** This chain's deposit payments changed at or after `from`. */
export function changedDepositPayments(r: Reader, key: { chain: string; isTestnet: boolean }, from: Date): Promise<WatchedPaymentRow[]> {
  return depositPayments(r, key, 'updated_at >= ?', from);
}
