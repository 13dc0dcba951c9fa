import type { EntityManager } from '@mikro-orm/sql';
import { GatewayError } from '../domain/errors.ts';
import { Invoice } from './entities/invoice.entity.ts';
import { MerchantPoint } from './entities/merchant-point.entity.ts';
import { Payment } from './entities/payment.entity.ts';
import { applyInvoiceFact } from './transitions.ts';
import { applyExpiry, expiryDue } from './expiry.ts';
import type { Database } from './orm.ts';
import { nextReferenceId } from './reference-ids.ts';
import { inTransaction } from './transaction.ts';
import type { Dialect } from './orm.ts';
import { formatReferenceId, referenceDay } from '../domain/reference-id.ts';
import { newId } from '../domain/ids.ts';
import { rawQuery, toDb, type NativeSqlite, type SqlValue } from './raw-sql.ts';

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

export async function createInvoice(db: Database, merchantId: string, input: CreateInvoiceInput, now = new Date()): Promise<Invoice> {
  return inTransaction(db, async (em) => {
    const invoice = em.create(Invoice, {
      ...input,
      referenceId: await nextReferenceId(em, 'INV', now),
      merchant: em.getReference(MerchantPoint, merchantId),
      status: 'OPEN',
      expiresAt: new Date(now.getTime() + input.expiresInMinutes * 60_000),
      viewedAt: null,
      paidAt: null,
      cancelledAt: null,
      createdAt: now,
    });
    await em.flush();
    return invoice;
  });
}

/** The fields of a newly created invoice, as invoiceView reads them. */
export type NewInvoice = Pick<
  Invoice,
  'id' | 'referenceId' | 'orderId' | 'description' | 'amount' | 'currency' | 'status' | 'customerEmail' | 'customerName' | 'customerMetadata' | 'metadata' | 'returnUrl' | 'cancelUrl' | 'expiresAt' | 'viewedAt' | 'paidAt' | 'cancelledAt' | 'createdAt'
>;

const COUNTER_SQL = 'insert into reference_counter (id, value) values (?, 1) on conflict (id) do update set value = reference_counter.value + 1 returning value';
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
 * The gateway's invoice creation in hand-written SQL inside the caller's transaction (the one that
 * holds the idempotency claim): the day's reference number, then the row. Same columns and values
 * as createInvoice's entity.
 */
export async function insertInvoiceIn(em: EntityManager, dialect: Dialect, merchantId: string, input: CreateInvoiceInput, now = new Date()): Promise<NewInvoice> {
  const { rows } = await rawQuery<{ value: number | string }>(em, dialect, COUNTER_SQL, [`INV-${referenceDay(now)}`]);
  const inv = newInvoice(input, now, Number(rows[0]!.value));
  await rawQuery(em, dialect, INSERT_INVOICE_SQL, insertParams(inv, merchantId));
  return inv;
}

/** insertInvoiceIn on a synchronous SQLite handle, inside syncSqliteTransaction. */
export function insertInvoiceSync(native: NativeSqlite, merchantId: string, input: CreateInvoiceInput, now = new Date()): NewInvoice {
  const { value } = native.prepare(COUNTER_SQL).get(`INV-${referenceDay(now)}`) as { value: number };
  const inv = newInvoice(input, now, Number(value));
  native.prepare(INSERT_INVOICE_SQL).run(...insertParams(inv, merchantId).map((v) => toDb('sqlite', v)));
  return inv;
}

/** Loads an invoice after applying the expiry rules. `merchantId` scopes it (null: the public surface). */
export async function loadInvoice(db: Database, invoiceId: string, merchantId: string | null, now = new Date()): Promise<Invoice> {
  const em = db.em();
  const current = await em.findOne(Invoice, merchantId ? { id: invoiceId, merchant: merchantId } : { id: invoiceId }, { populate: ['merchant'] });
  if (!current) throw new GatewayError('INVOICE_NOT_FOUND', 'Invoice not found');
  if (!(await expiryDue(em, current, now))) return current;
  return inTransaction(db, async (em) => {
    const invoice = await findScoped(em, invoiceId, merchantId);
    await applyExpiry(em, invoice.id, now);
    return em.findOneOrFail(Invoice, { id: invoice.id }, { refresh: true, populate: ['merchant'] });
  });
}

async function findScoped(em: EntityManager, invoiceId: string, merchantId: string | null): Promise<Invoice> {
  const invoice = await em.findOne(Invoice, merchantId ? { id: invoiceId, merchant: merchantId } : { id: invoiceId });
  if (!invoice) throw new GatewayError('INVOICE_NOT_FOUND', 'Invoice not found');
  return invoice;
}

export async function invoicePayments(db: Database, invoiceId: string): Promise<Payment[]> {
  return db.em().find(Payment, { invoice: invoiceId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

export async function latestPayment(db: Database, invoiceId: string): Promise<Payment | null> {
  return db.em().findOne(Payment, { invoice: invoiceId }, { orderBy: { createdAt: 'desc', id: 'desc' } });
}

/** DELETE: only from OPEN or DRAFT (conditional update, so it cannot race a checkout). */
export async function cancelInvoice(db: Database, invoiceId: string, merchantId: string, now = new Date()): Promise<Invoice> {
  return inTransaction(db, async (em) => {
    const invoice = await findScoped(em, invoiceId, merchantId);
    await applyExpiry(em, invoice.id, now);
    const changed = await applyInvoiceFact(em, invoice.id, 'cancelled', now, { cancelledAt: now });
    await em.refresh(invoice);
    if (!changed) {
      throw new GatewayError('INVOICE_CANNOT_BE_CANCELLED', `Invoice is ${invoice.status}; only OPEN or DRAFT invoices can be cancelled`);
    }
    return invoice;
  });
}

/** Public read: stamps viewedAt once (conditional, so concurrent first reads stamp it once). */
export async function markViewed(db: Database, invoiceId: string, now = new Date()): Promise<void> {
  await db.em().nativeUpdate(Invoice, { id: invoiceId, viewedAt: null }, { viewedAt: now });
}
