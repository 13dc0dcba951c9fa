import { GatewayError } from '../domain/errors.ts';
import { applyInvoiceFact } from './lifecycle.ts';
import { applyExpiry, readApplyingExpiry } from './expiry.ts';
import type { Database } from './orm.ts';
import { nextReference } from './reference-ids.ts';
import type { Executor, SqlValue } from './executor.ts';
import { invoiceById, invoiceOf, paymentOf, type InvoiceRow, type PaymentRow, type StoredInvoice, type StoredPayment } from './records.ts';
import { formatReferenceId, referenceDay } from '../domain/reference-id.ts';
import { newId } from '../domain/ids.ts';
import { jsonOf, poolReader } from './raw-sql.ts';
import { LIVE_PAYMENT_STATUSES } from '../domain/lifecycle.ts';
import type { BuyerInvoice } from '../domain/views.ts';

export interface CreateInvoiceInput {
  orderId: string;
  amount: string;
  currency: string;
  description: string;
  customerEmail: string | null;
  customerName: string | null;
  customerMetadata: Record<string, unknown>;
  metadata: Record<string, unknown>;
  returnUrl: string | null;
  cancelUrl: string | null;
  expiresInMinutes: number;
}

/** Creates an invoice in a write of its own (the CLI's demo; the gateway's goes through its idempotent write). */
export async function createInvoice(db: Database, merchantId: string, input: CreateInvoiceInput, now = new Date()): Promise<NewInvoice> {
  return db.write((x) => insertInvoice(x, merchantId, input, now));
}

/** The fields of a newly created invoice, as invoiceView reads them. */
export type NewInvoice = Pick<
  StoredInvoice,
  'id' | 'referenceId' | 'orderId' | 'description' | 'amount' | 'currency' | 'status' | 'customerEmail' | 'customerName' | 'customerMetadata' | 'metadata' | 'returnUrl' | 'cancelUrl' | 'expiresAt' | 'viewedAt' | 'paidAt' | 'cancelledAt' | 'createdAt'
>;

const INSERT_INVOICE_SQL = `insert into invoice (id, reference_id, merchant_id, order_id, description, amount, currency, status, customer_email, customer_name, customer_metadata, metadata, return_url, cancel_url, expires_at, viewed_at, paid_at, cancelled_at, created_at, updated_at)
  values (?, ?, ?, ?, ?, ?, ?, 'OPEN', ?, ?, ?, ?, ?, ?, ?, null, null, null, ?, ?)`;

function newInvoice(input: CreateInvoiceInput, now: Date, sequence: number): NewInvoice {
  return {
    id: newId(),
    referenceId: formatReferenceId('INV', referenceDay(now), sequence),
    orderId: input.orderId,
    description: input.description,
    amount: input.amount,
    currency: input.currency,
    status: 'OPEN',
    customerEmail: input.customerEmail,
    customerName: input.customerName,
    customerMetadata: input.customerMetadata,
    metadata: input.metadata,
    returnUrl: input.returnUrl,
    cancelUrl: input.cancelUrl,
    expiresAt: new Date(now.getTime() + input.expiresInMinutes * 60_000),
    viewedAt: null,
    paidAt: null,
    cancelledAt: null,
    createdAt: now,
  };
}

function insertParams(inv: NewInvoice, merchantId: string): SqlValue[] {
  return [
    inv.id, inv.referenceId, merchantId, inv.orderId, inv.description, inv.amount, inv.currency, inv.customerEmail ?? null, inv.customerName ?? null,
    JSON.stringify(inv.customerMetadata), JSON.stringify(inv.metadata), inv.returnUrl ?? null, inv.cancelUrl ?? null, inv.expiresAt, inv.createdAt, inv.createdAt,
  ];
}

/**
 * An invoice's creation inside the write's transaction: the day's reference number (unless one was
 * taken before, ReferenceBlocks on PostgreSQL), then the row.
 */
export async function insertInvoice(x: Executor, merchantId: string, input: CreateInvoiceInput, now = new Date(), referenceId: string | null = null): Promise<NewInvoice> {
  const inv = { ...newInvoice(input, now, 0), referenceId: referenceId ?? (await nextReference(x, 'INV', now)) };
  await x.run(INSERT_INVOICE_SQL, insertParams(inv, merchantId));
  return inv;
}

/**
 * An invoice as the buyer's read and the checkout see it, read as one plain row (no unit of work):
 * the merchant's name and choices, and whether a payment of it is live.
 */
export interface InvoiceSnapshot extends BuyerInvoice {
  /** A PENDING, PROCESSING or CONFIRMING payment exists for it. */
  hasLivePayment: boolean;
}

interface SnapshotRow extends InvoiceRow {
  merchant_name: string;
  accepted_chains: unknown;
  accepted_currencies: unknown;
  live: number | boolean;
  due: number | boolean;
}

const LIVE_LIST = LIVE_PAYMENT_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * `due`: the expiry rules may change this invoice now, by the wall clock: an OPEN invoice past its
 * expiresAt, or a PAYMENT_PENDING one with a PENDING payment past its window (one probe of the
 * payment(invoice_id) index). readApplyingExpiry then decides exactly (at the chain's time).
 */
const DUE = `case when (i.status = 'OPEN' and i.expires_at <= ?)
      or (i.status = 'PAYMENT_PENDING' and exists (select 1 from payment p where p.invoice_id = i.id and p.status = 'PENDING' and p.expires_at <= ?))
      then 1 else 0 end as due`;
const INVOICE_SQL = `select i.*, ${DUE} from invoice i where i.id = ?`;
const INVOICE_SCOPED_SQL = `${INVOICE_SQL} and i.merchant_id = ?`;
const SNAPSHOT_SELECT = (live: string) => `select i.*, m.name as merchant_name, m.accepted_chains, m.accepted_currencies, ${live} as live, ${DUE}
  from invoice i join merchant_point m on m.id = i.merchant_id`;
const LIVE_PROBE = `case when exists (select 1 from payment p where p.invoice_id = i.id and p.status in (${LIVE_LIST})) then 1 else 0 end`;
const SNAPSHOT_SQL = `${SNAPSHOT_SELECT(LIVE_PROBE)} where i.id = ?`;
const SNAPSHOT_SCOPED_SQL = `${SNAPSHOT_SELECT(LIVE_PROBE)} where i.id = ? and i.merchant_id = ?`;
/** The buyer's invoice read shows no live-payment flag, so it skips that probe. */
const PUBLIC_SNAPSHOT_SQL = `${SNAPSHOT_SELECT('0')} where i.id = ?`;

function snapshotOf(r: SnapshotRow): InvoiceSnapshot {
  const inv = invoiceOf(r);
  return {
    id: inv.id,
    referenceId: inv.referenceId,
    amount: inv.amount,
    currency: inv.currency,
    description: inv.description,
    status: inv.status,
    customerEmail: inv.customerEmail,
    customerName: inv.customerName,
    returnUrl: inv.returnUrl,
    cancelUrl: inv.cancelUrl,
    expiresAt: inv.expiresAt,
    viewedAt: inv.viewedAt,
    paidAt: inv.paidAt,
    merchant: { id: inv.merchantId, name: r.merchant_name, acceptedChains: jsonOf(r.accepted_chains), acceptedCurrencies: jsonOf(r.accepted_currencies) },
    hasLivePayment: Number(r.live) === 1 || r.live === true,
  };
}

/** One invoice row read with the expiry rules applied first when they may be due (src/store/expiry.ts). */
function readDueRow<R extends { id: string; due: number | boolean }>(db: Database, sql: string, invoiceId: string, merchantId: string | null, now: Date): Promise<R> {
  return readApplyingExpiry(
    db,
    (r) => r.get<R>(sql, merchantId ? [now, now, invoiceId, merchantId] : [now, now, invoiceId]),
    (row) => row.id,
    () => {
      throw new GatewayError('INVOICE_NOT_FOUND', 'Invoice not found');
    },
    now,
  );
}

/** An invoice as a plain record, after the expiry rules ran. `merchantId` scopes it (null: the public surface). */
export async function loadInvoice(db: Database, invoiceId: string, merchantId: string | null, now = new Date()): Promise<StoredInvoice> {
  return invoiceOf(await readDueRow<InvoiceRow & { due: number | boolean }>(db, merchantId ? INVOICE_SCOPED_SQL : INVOICE_SQL, invoiceId, merchantId, now));
}

/**
 * The invoice for the hot reads and the checkout, with its merchant's choices: one bound statement
 * (a cached prepared statement on SQLite) and a plain object.
 */
export async function readInvoice(db: Database, invoiceId: string, merchantId: string | null, now = new Date()): Promise<InvoiceSnapshot> {
  return snapshotOf(await readDueRow<SnapshotRow>(db, merchantId ? SNAPSHOT_SCOPED_SQL : SNAPSHOT_SQL, invoiceId, merchantId, now));
}

/** readInvoice for the buyer's page: any merchant's invoice, without hasLivePayment. */
export async function readPublicInvoice(db: Database, invoiceId: string, now = new Date()): Promise<BuyerInvoice> {
  return snapshotOf(await readDueRow<SnapshotRow>(db, PUBLIC_SNAPSHOT_SQL, invoiceId, null, now));
}

/** The invoice's payments, oldest first. */
export async function invoicePayments(db: Database, invoiceId: string): Promise<StoredPayment[]> {
  return (await poolReader(db).all<PaymentRow>('select * from payment where invoice_id = ? order by created_at, id', [invoiceId])).map(paymentOf);
}

/** The invoice's newest payment, or null. */
export async function latestPayment(db: Database, invoiceId: string): Promise<StoredPayment | null> {
  const row = await poolReader(db).get<PaymentRow>('select * from payment where invoice_id = ? order by created_at desc, id desc limit 1', [invoiceId]);
  return row ? paymentOf(row) : null;
}

/** DELETE: only from OPEN or DRAFT (conditional update, so it cannot race a checkout), in the caller's write. */
export async function cancelInvoiceIn(x: Executor, invoiceId: string, merchantId: string, now = new Date()): Promise<StoredInvoice> {
  if (!(await x.get('select 1 as found from invoice where id = ? and merchant_id = ?', [invoiceId, merchantId]))) throw new GatewayError('INVOICE_NOT_FOUND', 'Invoice not found');
  await applyExpiry(x, invoiceId, now);
  const changed = await applyInvoiceFact(x, invoiceId, 'cancelled', now, { cancelledAt: now });
  const invoice = await invoiceById(x, invoiceId);
  if (!changed) {
    throw new GatewayError('INVOICE_CANNOT_BE_CANCELLED', `Invoice is ${invoice.status}; only OPEN or DRAFT invoices can be cancelled`);
  }
  return invoice;
}

/** Public read: stamps viewedAt once (conditional, so concurrent first reads stamp it once). */
export async function markViewed(db: Database, invoiceId: string, now = new Date()): Promise<void> {
  await db.write((x) => x.run('update invoice set viewed_at = ? where id = ? and viewed_at is null', [now, invoiceId]));
}
