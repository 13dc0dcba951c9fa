import type { TransferStatus } from '../domain/lifecycle.ts';
import type { SqlValue } from './executor.ts';
import type { Database } from './orm.ts';
import { dateOf, poolReader } from './raw-sql.ts';

// The transfers the indexers observed, as `chaingate transfers list` shows them. The ledger's own
// reads of them are in src/store/ledger-rows.ts.

export interface ObservedTransferRow {
  id: string;
  chain: string;
  network: string;
  txHash: string;
  logIndex: number;
  blockNumber: string;
  toAddress: string;
  tokenAddress: string | null;
  /** The coin the indexer saw (null: a token it could not name). */
  symbol: string | null;
  /** Atomic units, decimal string. */
  amount: string;
  status: TransferStatus;
  paymentId: string | null;
  note: string | null;
  createdAt: Date;
}

/** Statuses of transfers that were not credited to a payment: left for manual reconciliation. */
const NOT_CREDITED: TransferStatus[] = ['UNMATCHED', 'LATE', 'EXTRA', 'NOT_CREDITED'];

/** Observed transfers, newest first: optionally only those not credited, or of one chain. */
export async function observedTransfers(db: Database, filter: { unmatched?: boolean | undefined; chain?: string | undefined; limit: number }): Promise<ObservedTransferRow[]> {
  const terms: string[] = [];
  const params: SqlValue[] = [];
  if (filter.unmatched) {
    terms.push(`status in (${NOT_CREDITED.map(() => '?').join(', ')})`);
    params.push(...NOT_CREDITED);
  }
  if (filter.chain) {
    terms.push('chain = ?');
    params.push(filter.chain);
  }
  const rows = await poolReader(db).all<{
    id: string;
    chain: string;
    network: string;
    tx_hash: string;
    log_index: number | string;
    block_number: string;
    to_address: string;
    token_address: string | null;
    symbol: string | null;
    amount: string;
    status: TransferStatus;
    payment_id: string | null;
    note: string | null;
    created_at: unknown;
  }>(
    `select id, chain, network, tx_hash, log_index, block_number, to_address, token_address, symbol, amount, status, payment_id, note, created_at
       from observed_transfer ${terms.length ? `where ${terms.join(' and ')}` : ''} order by created_at desc, id desc limit ?`,
    [...params, filter.limit],
  );
  return rows.map((t) => ({
    id: t.id,
    chain: t.chain,
    network: t.network,
    txHash: t.tx_hash,
    logIndex: Number(t.log_index),
    blockNumber: t.block_number,
    toAddress: t.to_address,
    tokenAddress: t.token_address,
    symbol: t.symbol,
    amount: t.amount,
    status: t.status,
    paymentId: t.payment_id,
    note: t.note,
    createdAt: dateOf(t.created_at),
  }));
}
