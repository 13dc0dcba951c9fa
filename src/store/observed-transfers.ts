import type { TransferStatus } from '../domain/lifecycle.ts';
import type { SqlValue } from './executor.ts';
import type { Database } from './orm.ts';
import { poolReader } from './raw-sql.ts';
import { transferOf, type StoredTransfer, type TransferRow } from './records.ts';

// The transfers the indexers observed, as `chaingate transfers list` shows them. The ledger's own
// reads of them are in src/store/ledger-rows.ts.

/** A transfer as `chaingate transfers list` shows it. */
export type ObservedTransferRow = StoredTransfer;

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
  const rows = await poolReader(db).all<TransferRow>(
    `select * from observed_transfer ${terms.length ? `where ${terms.join(' and ')}` : ''} order by created_at desc, id desc limit ?`,
    [...params, filter.limit],
  );
  return rows.map(transferOf);
}
