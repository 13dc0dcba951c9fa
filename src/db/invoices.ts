import type { EntityManager } from '@mikro-orm/sql';
import { GatewayError } from '../domain/errors.ts';
import { invoiceView } from '../domain/views.ts';
import { Invoice } from './entities/invoice.entity.ts';
import { MerchantPoint } from './entities/merchant-point.entity.ts';
import { Payment } from './entities/payment.entity.ts';
import { recordEvent } from './events.ts';
import { applyExpiry, expiryDue } from './expiry.ts';
import type { Database } from './orm.ts';
import { nextReferenceId } from './reference-ids.ts';
import { inTransaction } from './transaction.ts';

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
    const changed = await em.nativeUpdate(
      Invoice,
      { id: invoice.id, status: { $in: ['OPEN', 'DRAFT'] } },
      { status: 'CANCELLED', cancelledAt: now, updatedAt: now },
    );
    await em.refresh(invoice);
    if (changed === 0) {
      throw new GatewayError('INVOICE_CANNOT_BE_CANCELLED', `Invoice is ${invoice.status}; only OPEN or DRAFT invoices can be cancelled`);
    }
    await recordEvent(em, { merchantId, type: 'invoice.cancelled', invoiceId: invoice.id, data: { invoice: invoiceView(invoice) } }, now);
    return invoice;
  });
}

/** Public read: stamps viewedAt once (conditional, so concurrent first reads stamp it once). */
export async function markViewed(db: Database, invoiceId: string, now = new Date()): Promise<void> {
  await db.em().nativeUpdate(Invoice, { id: invoiceId, viewedAt: null }, { viewedAt: now });
}
