import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/sql';
import { LIVE_PAYMENT_STATUSES } from '../domain/lifecycle.ts';
import { IndexerCursor } from './entities/indexer-cursor.entity.ts';
import { Invoice } from './entities/invoice.entity.ts';
import { Payment } from './entities/payment.entity.ts';
import type { Database } from './orm.ts';
import { inTransaction } from './transaction.ts';
import { applyInvoiceFact, applyPaymentFact } from './lifecycle.ts';

// Expiry (docs/expiry.md): enforced lazily whenever an invoice or payment is acted on, and by a
// scheduled sweep so that polling shows the truth too.
//  - A PENDING payment past its expiresAt becomes EXPIRED (nothing was seen on chain).
//  - Its invoice, left without a live payment, returns to OPEN while the invoice itself is still
//    within its expiresAt (the buyer may start another attempt), else becomes EXPIRED.
//  - An OPEN invoice past expiresAt becomes EXPIRED.
//  - A payment that is PROCESSING or CONFIRMING never expires: money is in flight.
// A payment window is closed at the chain's time, not ahead of it: a PENDING payment expires only
// once its chain's indexer has processed a block newer than its expiresAt, so funds sent within the
// window are always credited first, and an indexer that was down produces the same ledger and the
// same events as a live one. Chains no indexer has ever run for fall back to the wall clock.

/**
 * Narrows a PENDING-payment filter to the payments whose window may be closed now: per chain and
 * network, expiresAt at or before min(now, time of the newest block the indexer processed).
 */
export async function closableWindows(em: EntityManager, base: FilterQuery<Payment>, now = new Date()): Promise<FilterQuery<Payment>> {
  const cursors = await em.find(IndexerCursor, {}, { fields: ['chain', 'network', 'blockTime'] });
  const indexed = cursors.map((c) => {
    const chainTime = c.blockTime === null || c.blockTime === undefined ? new Date(0) : new Date(Number(c.blockTime) * 1000 - 1);
    return { blockchain: c.chain, network: c.network, expiresAt: { $lte: chainTime < now ? chainTime : now } };
  });
  const unindexed = { expiresAt: { $lte: now }, $and: cursors.map((c) => ({ $or: [{ blockchain: { $ne: c.chain } }, { network: { $ne: c.network } }] })) };
  return { $and: [base, { status: 'PENDING' }, { $or: [...indexed, unindexed] }] } as FilterQuery<Payment>;
}

/**
 * Whether the expiry rules would change anything for this invoice now. Reads only; lets the hot
 * read paths (status polls) skip the transaction when nothing is due, which is almost always.
 */
export async function expiryDue(em: EntityManager, invoice: Pick<Invoice, 'id' | 'status' | 'expiresAt'>, now = new Date()): Promise<boolean> {
  if (invoice.status === 'OPEN') return invoice.expiresAt <= now;
  if (invoice.status !== 'PAYMENT_PENDING') return false;
  if ((await em.count(Payment, { invoice: invoice.id, status: 'PENDING', expiresAt: { $lte: now } })) === 0) return false;
  return (await em.count(Payment, await closableWindows(em, { invoice: invoice.id }, now))) > 0;
}

/** Applies the expiry rules to one invoice and its payments inside the caller's transaction. */
export async function applyExpiry(em: EntityManager, invoiceId: string, now = new Date()): Promise<void> {
  const stale = await em.find(Payment, await closableWindows(em, { invoice: invoiceId }, now), { populate: ['invoice'] });
  // Stamped at the window's end, not at whenever this ran: the same event whoever applies it.
  for (const payment of stale) await applyPaymentFact(em, payment, 'windowClosed', payment.expiresAt);
  const invoice = await em.findOne(Invoice, { id: invoiceId }, { refresh: true });
  if (!invoice) return;
  if (invoice.status === 'PAYMENT_PENDING') {
    const live = await em.count(Payment, { invoice: invoiceId, status: { $in: [...LIVE_PAYMENT_STATUSES] } });
    if (live > 0) return;
    await applyInvoiceFact(em, invoiceId, invoice.expiresAt > now ? 'attemptEnded' : 'expired', now);
  } else if (invoice.status === 'OPEN' && invoice.expiresAt <= now) {
    await applyInvoiceFact(em, invoiceId, 'expired', now);
  }
  await em.refresh(invoice);
}

/** The scheduled sweep: expires what nobody touched. Returns how many invoices it looked at. */
export async function sweepExpired(db: Database, now = new Date(), batch = 500): Promise<number> {
  const em = db.em();
  const fromPayments = await em.find(Payment, await closableWindows(em, {}, now), { fields: ['invoice'], limit: batch });
  const fromInvoices = await em.find(Invoice, { status: 'OPEN', expiresAt: { $lte: now } }, { fields: ['id'], limit: batch });
  const ids = new Set([...fromPayments.map((p) => p.invoice.id), ...fromInvoices.map((i) => i.id)]);
  for (const id of ids) await inTransaction(db, (tx) => applyExpiry(tx, id, now));
  return ids.size;
}
