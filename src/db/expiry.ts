import type { EntityManager } from '@mikro-orm/sql';
import { Invoice } from './entities/invoice.entity.ts';
import { Payment } from './entities/payment.entity.ts';
import { recordEvent } from './events.ts';
import type { Database } from './orm.ts';
import { inTransaction } from './transaction.ts';
import { invoiceView, paymentEventData } from '../domain/views.ts';

// Expiry (docs/expiry.md): enforced lazily whenever an invoice or payment is acted on, and by a
// scheduled sweep so that polling shows the truth too.
//  - A PENDING payment past its expiresAt becomes EXPIRED (nothing was seen on chain).
//  - Its invoice, left without a live payment, returns to OPEN while the invoice itself is still
//    within its expiresAt (the buyer may start another attempt), else becomes EXPIRED.
//  - An OPEN invoice past expiresAt becomes EXPIRED.
//  - A payment that is PROCESSING or CONFIRMING never expires: money is in flight.

export const LIVE_PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'CONFIRMING'] as const;

/**
 * Whether the expiry rules would change anything for this invoice now. Reads only; lets the hot
 * read paths (status polls) skip the transaction when nothing is due, which is almost always.
 */
export async function expiryDue(em: EntityManager, invoice: Pick<Invoice, 'id' | 'status' | 'expiresAt'>, now = new Date()): Promise<boolean> {
  if (invoice.status === 'OPEN') return invoice.expiresAt <= now;
  if (invoice.status !== 'PAYMENT_PENDING') return false;
  return (await em.count(Payment, { invoice: invoice.id, status: 'PENDING', expiresAt: { $lte: now } })) > 0;
}

/** Applies the expiry rules to one invoice and its payments inside the caller's transaction. */
export async function applyExpiry(em: EntityManager, invoiceId: string, now = new Date()): Promise<void> {
  const stale = await em.find(Payment, { invoice: invoiceId, status: 'PENDING', expiresAt: { $lte: now } }, { populate: ['invoice'] });
  for (const payment of stale) {
    const changed = await em.nativeUpdate(Payment, { id: payment.id, status: 'PENDING' }, { status: 'EXPIRED', updatedAt: now });
    if (changed === 0) continue;
    await em.refresh(payment);
    await recordEvent(em, {
      merchantId: payment.merchant.id,
      type: 'payment.expired',
      paymentId: payment.id,
      invoiceId,
      data: paymentEventData(payment, payment.invoice, '0'),
    }, now);
  }
  const invoice = await em.findOne(Invoice, { id: invoiceId }, { refresh: true });
  if (!invoice) return;
  if (invoice.status === 'PAYMENT_PENDING') {
    const live = await em.count(Payment, { invoice: invoiceId, status: { $in: [...LIVE_PAYMENT_STATUSES] } });
    if (live > 0) return;
    const next = invoice.expiresAt > now ? 'OPEN' : 'EXPIRED';
    const changed = await em.nativeUpdate(Invoice, { id: invoiceId, status: 'PAYMENT_PENDING' }, { status: next, updatedAt: now });
    if (changed && next === 'EXPIRED') await invoiceExpired(em, invoice, now);
  } else if (invoice.status === 'OPEN' && invoice.expiresAt <= now) {
    const changed = await em.nativeUpdate(Invoice, { id: invoiceId, status: 'OPEN' }, { status: 'EXPIRED', updatedAt: now });
    if (changed) await invoiceExpired(em, invoice, now);
  }
  await em.refresh(invoice);
}

async function invoiceExpired(em: EntityManager, invoice: Invoice, now: Date): Promise<void> {
  await em.refresh(invoice);
  await recordEvent(em, { merchantId: invoice.merchant.id, type: 'invoice.expired', invoiceId: invoice.id, data: { invoice: invoiceView(invoice) } }, now);
}

/** The scheduled sweep: expires what nobody touched. Returns how many invoices it looked at. */
export async function sweepExpired(db: Database, now = new Date(), batch = 500): Promise<number> {
  const em = db.em();
  const fromPayments = await em.find(Payment, { status: 'PENDING', expiresAt: { $lte: now } }, { fields: ['invoice'], limit: batch });
  const fromInvoices = await em.find(Invoice, { status: 'OPEN', expiresAt: { $lte: now } }, { fields: ['id'], limit: batch });
  const ids = new Set([...fromPayments.map((p) => p.invoice.id), ...fromInvoices.map((i) => i.id)]);
  for (const id of ids) await inTransaction(db, (tx) => applyExpiry(tx, id, now));
  return ids.size;
}
