import { randomBytes } from 'node:crypto';
import type { InvoiceStatus, PaymentStatus, TransferStatus } from '../../src/domain/lifecycle.ts';
import type { Executor, SqlValue } from '../../src/store/executor.ts';
import type { Database } from '../../src/store/orm.ts';

// Invoices, payments, transfers and refunds written straight as rows, in multi-row inserts through
// the store's one write path (Database.write): the dashboard list's tests and its bench need many
// rows in given states without a chain. The columns are the tables' own (src/store/entities).

export interface SeedPayment {
  id?: string;
  status: PaymentStatus;
  chain?: string;
  coin?: string;
  decimals?: number;
  expected?: string;
  received?: string;
  address?: string;
  txHash?: string | null;
  createdAt?: Date;
  updatedAt?: Date;
  /** Default: an hour after createdAt (a PENDING payment past it is expired by the next read). */
  expiresAt?: Date;
  /** Record a transfer of this status against the payment (LATE, EXTRA: late funds). */
  transfer?: { status: TransferStatus; txHash: string };
  /** Record a refund of the payment. */
  refund?: boolean;
}

export interface SeedInvoice {
  id?: string;
  merchantId: string;
  orderId?: string;
  email?: string | null;
  status?: InvoiceStatus;
  amount?: string;
  currency?: string;
  createdAt?: Date;
  updatedAt?: Date;
  /** Default: a day after createdAt (an OPEN invoice past it is expired by the next read). */
  expiresAt?: Date;
  payments?: SeedPayment[];
}

let counter = 0;
/** An id shaped like the store's (24 lowercase letters and digits), unique within the process. */
export function seedId(prefix = 's'): string {
  counter++;
  return `${prefix}${counter.toString(36)}${randomBytes(12).toString('hex')}`.slice(0, 24);
}

const INVOICE_COLS = ['id', 'reference_id', 'merchant_id', 'order_id', 'description', 'amount', 'currency', 'status', 'customer_email', 'customer_name', 'customer_metadata', 'metadata', 'return_url', 'cancel_url', 'expires_at', 'viewed_at', 'paid_at', 'cancelled_at', 'created_at', 'updated_at'];
const PAYMENT_COLS = ['id', 'reference_id', 'invoice_id', 'merchant_id', 'status', 'payment_type', 'method', 'blockchain', 'network', 'is_testnet', 'crypto_currency', 'decimals', 'token_address', 'amount', 'expected_amount', 'received_amount', 'address', 'confirmations', 'required_confirmations', 'transaction_hash', 'block_number', 'contract_address', 'external_id', 'external_id_uuid', 'metadata', 'expires_at', 'completed_at', 'created_at', 'updated_at'];
const TRANSFER_COLS = ['id', 'chain', 'network', 'tx_hash', 'log_index', 'block_number', 'block_hash', 'from_address', 'to_address', 'token_address', 'symbol', 'amount', 'payment_id', 'status', 'note', 'created_at', 'updated_at'];
const REFUND_COLS = ['id', 'payment_id', 'plan_id', 'chain', 'network', 'is_testnet', 'symbol', 'token_address', 'decimals', 'amount', 'to_address', 'from_address', 'from_kind', 'fee_from_payment', 'created_at'];

/** Rows of one table in statements of as many rows as ~30,000 bound values allow (both databases' limits). */
export async function insertRows(x: Executor, table: string, cols: string[], rows: SqlValue[][]): Promise<void> {
  const per = Math.max(1, Math.floor(30_000 / cols.length));
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    const one = `(${cols.map(() => '?').join(', ')})`;
    await x.run(`insert into ${table} (${cols.join(', ')}) values ${chunk.map(() => one).join(', ')}`, chunk.flat());
  }
}

export interface SeededRows {
  invoices: SqlValue[][];
  payments: SqlValue[][];
  transfers: SqlValue[][];
  refunds: SqlValue[][];
}

/** The rows of some invoices, without writing them (the bench writes many such batches). */
export function rowsOf(invoices: SeedInvoice[], now = new Date()): { rows: SeededRows; ids: string[]; paymentIds: string[][] } {
  const rows: SeededRows = { invoices: [], payments: [], transfers: [], refunds: [] };
  const ids: string[] = [];
  const paymentIds: string[][] = [];
  for (const inv of invoices) {
    const id = inv.id ?? seedId('i');
    ids.push(id);
    const created = inv.createdAt ?? now;
    const updated = inv.updatedAt ?? created;
    rows.invoices.push([
      id, `INV${id.toUpperCase()}`.slice(0, 32), inv.merchantId, inv.orderId ?? `order-${id}`, '', inv.amount ?? '2500', inv.currency ?? 'USD', inv.status ?? 'OPEN',
      inv.email ?? null, null, '{}', '{}', null, null, inv.expiresAt ?? new Date(created.getTime() + 86_400_000), null, inv.status === 'PAID' ? updated : null, inv.status === 'CANCELLED' ? updated : null, created, updated,
    ]);
    const pids: string[] = [];
    for (const [n, p] of (inv.payments ?? []).entries()) {
      const pid = p.id ?? seedId('p');
      pids.push(pid);
      const pcreated = p.createdAt ?? new Date(created.getTime() + 1000 * (n + 1));
      const coin = p.coin ?? 'ETH';
      const chain = p.chain ?? 'ethereum';
      const decimals = p.decimals ?? 18;
      const address = p.address ?? `0x${randomBytes(20).toString('hex')}`;
      rows.payments.push([
        pid, `PAY${pid.toUpperCase()}`.slice(0, 32), id, inv.merchantId, p.status, 'DIRECT', 'direct', chain, 'MAINNET', false, coin, decimals, null,
        p.expected ?? '1.5', p.expected ?? '1.5', p.received ?? '0', address, 0, 12, p.txHash ?? null, null, null, null, null, '{}',
        p.expiresAt ?? new Date(pcreated.getTime() + 3_600_000), p.status === 'COMPLETED' ? pcreated : null, pcreated, p.updatedAt ?? pcreated,
      ]);
      if (p.transfer) {
        rows.transfers.push([seedId('t'), chain, 'MAINNET', p.transfer.txHash, -1, '100', `0x${'b'.repeat(64)}`, null, address, null, coin, '1000', pid, p.transfer.status, null, pcreated, pcreated]);
      }
      if (p.refund) {
        rows.refunds.push([seedId('r'), pid, seedId('plan'), chain, 'MAINNET', false, coin, null, decimals, '1000', `0x${'c'.repeat(40)}`, address, 'deposit', '0', pcreated]);
      }
    }
    paymentIds.push(pids);
  }
  return { rows, ids, paymentIds };
}

export async function writeRows(x: Executor, rows: SeededRows): Promise<void> {
  await insertRows(x, 'invoice', INVOICE_COLS, rows.invoices);
  await insertRows(x, 'payment', PAYMENT_COLS, rows.payments);
  await insertRows(x, 'observed_transfer', TRANSFER_COLS, rows.transfers);
  await insertRows(x, 'refund', REFUND_COLS, rows.refunds);
}

/** Writes the invoices (and their payments, transfers, refunds) in one transaction; their ids. */
export async function seedInvoices(db: Database, invoices: SeedInvoice[], now = new Date()): Promise<{ ids: string[]; paymentIds: string[][] }> {
  const { rows, ids, paymentIds } = rowsOf(invoices, now);
  await db.write((x) => writeRows(x, rows));
  return { ids, paymentIds };
}
