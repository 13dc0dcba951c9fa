import { GatewayError } from '../domain/errors.ts';
import { Invoice } from './entities/invoice.entity.ts';
import { Payment } from './entities/payment.entity.ts';
import { applyInvoiceFact } from './lifecycle.ts';
import { applyExpiry, expiryDue } from './expiry.ts';
import type { Database } from './orm.ts';
import { nextReference } from './reference-ids.ts';
import type { Executor, SqlValue } from './executor.ts';
import { invoiceById, type StoredInvoice } from './records.ts';
import { formatReferenceId, referenceDay } from '../domain/reference-id.ts';
import { newId } from '../domain/ids.ts';
import { dateOf, jsonOf, nullableDate, poolReader, readApplyingExpiry, readRow } from './raw-sql.ts';
import { LIVE_PAYMENT_STATUSES, type InvoiceStatus } from '../domain/lifecycle.ts';
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
  Invoice,
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

/** Loads an invoice after applying the expiry rules. `merchantId` scopes it (null: the public surface). */
export async function loadInvoice(db: Database, invoiceId: string, merchantId: string | null, now = new Date()): Promise<Invoice> {
  const em = db.em();
  const current = await em.findOne(Invoice, merchantId ? { id: invoiceId, merchant: merchantId } : { id: invoiceId }, { populate: ['merchant'] });
  if (!current) throw new GatewayError('INVOICE_NOT_FOUND', 'Invoice not found');
  if (!(await expiryDue(poolReader(db), current, now))) return current;
  await db.write((x) => applyExpiry(x, current.id, now));
  return db.em().findOneOrFail(Invoice, { id: current.id }, { populate: ['merchant'] });
}

/**
 * An invoice as the buyer's read and the checkout see it, read as one plain row (no unit of work):
 * the merchant's name and choices, and whether a payment of it is live.
 */
export interface InvoiceSnapshot extends BuyerInvoice {
  /** A PENDING, PROCESSING or CONFIRMING payment exists for it. */
  hasLivePayment: boolean;
}

interface SnapshotRow {
  id: string;
  reference_id: string;
  merchant_id: string;
  amount: string;
  currency: string;
  description: string;
  status: InvoiceStatus;
  customer_email: string | null;
  customer_name: string | null;
  return_url: string | null;
  cancel_url: string | null;
  expires_at: unknown;
  viewed_at: unknown;
  paid_at: unknown;
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
 * payment(invoice_id) index). loadInvoice then decides exactly (closableWindows: at the chain's time).
 */
const SNAPSHOT_SELECT = (live: string) => `select i.id, i.reference_id, i.merchant_id, i.amount, i.currency, i.description, i.status, i.customer_email, i.customer_name,
    i.return_url, i.cancel_url, i.expires_at, i.viewed_at, i.paid_at, m.name as merchant_name, m.accepted_chains, m.accepted_currencies,
    ${live} as live,
    case when (i.status = 'OPEN' and i.expires_at <= ?)
      or (i.status = 'PAYMENT_PENDING' and exists (select 1 from payment p where p.invoice_id = i.id and p.status = 'PENDING' and p.expires_at <= ?))
      then 1 else 0 end as due
  from invoice i join merchant_point m on m.id = i.merchant_id`;
const LIVE_PROBE = `case when exists (select 1 from payment p where p.invoice_id = i.id and p.status in (${LIVE_LIST})) then 1 else 0 end`;
const SNAPSHOT_SQL = `${SNAPSHOT_SELECT(LIVE_PROBE)} where i.id = ?`;
const SNAPSHOT_SCOPED_SQL = `${SNAPSHOT_SELECT(LIVE_PROBE)} where i.id = ? and i.merchant_id = ?`;
/** The buyer's invoice read shows no live-payment flag, so it skips that probe. */
const PUBLIC_SNAPSHOT_SQL = `${SNAPSHOT_SELECT('0')} where i.id = ?`;

function snapshotOf(r: SnapshotRow): InvoiceSnapshot {
  return {
    id: r.id,
    referenceId: r.reference_id,
    amount: r.amount,
    currency: r.currency,
    description: r.description,
    status: r.status,
    customerEmail: r.customer_email,
    customerName: r.customer_name,
    returnUrl: r.return_url,
    cancelUrl: r.cancel_url,
    expiresAt: dateOf(r.expires_at),
    viewedAt: nullableDate(r.viewed_at),
    paidAt: nullableDate(r.paid_at),
    merchant: { id: r.merchant_id, name: r.merchant_name, acceptedChains: jsonOf(r.accepted_chains), acceptedCurrencies: jsonOf(r.accepted_currencies) },
    hasLivePayment: Number(r.live) === 1 || r.live === true,
  };
}

/**
 * loadInvoice for the hot reads, in hand-written SQL: one bound statement (a cached prepared
 * statement on SQLite) and a plain object. When the expiry rules may be due, loadInvoice applies
 * them exactly as before and the row is read again, so this never shows what loadInvoice would not.
 */
export async function readInvoice(db: Database, invoiceId: string, merchantId: string | null, now = new Date()): Promise<InvoiceSnapshot> {
  return snapshotOf(await readSnapshotRow(db, invoiceId, merchantId, merchantId ? SNAPSHOT_SCOPED_SQL : SNAPSHOT_SQL, now));
}

/** readInvoice for the buyer's page: any merchant's invoice, without hasLivePayment. */
export async function readPublicInvoice(db: Database, invoiceId: string, now = new Date()): Promise<BuyerInvoice> {
  return snapshotOf(await readSnapshotRow(db, invoiceId, null, PUBLIC_SNAPSHOT_SQL, now));
}

function readSnapshotRow(db: Database, invoiceId: string, merchantId: string | null, sql: string, now: Date): Promise<SnapshotRow> {
  return readApplyingExpiry(
    () => readRow<SnapshotRow>(db, sql, merchantId ? [now, now, invoiceId, merchantId] : [now, now, invoiceId]),
    () => loadInvoice(db, invoiceId, merchantId, now),
    () => {
      throw new GatewayError('INVOICE_NOT_FOUND', 'Invoice not found');
    },
  );
}

export async function invoicePayments(db: Database, invoiceId: string): Promise<Payment[]> {
  return db.em().find(Payment, { invoice: invoiceId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function latestPayment(db: Database, invoiceId: string): Promise<Payment | null> {
  return db.em().findOne(Payment, { invoice: invoiceId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
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
