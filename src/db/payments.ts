import type { FilterQuery } from '@mikro-orm/core';
import { GatewayError } from '../domain/errors.ts';
import type { PaymentStatus } from '../domain/lifecycle.ts';
import { Payment } from './entities/payment.entity.ts';
import { applyExpiry, closableWindows, expiryDue } from './expiry.ts';
import type { Database } from './orm.ts';
import { inTransaction } from './transaction.ts';

export interface ListPaymentsInput {
  merchantId: string;
  status?: PaymentStatus | undefined;
  blockchain?: string | undefined;
  skip: number;
  take: number;
}

/** Newest first; pagination per the spec: page = floor(skip/take)+1, hasMore = skip+take < total. */
export async function listPayments(db: Database, input: ListPaymentsInput, now = new Date()) {
  // Lazy expiry for the list too: overdue PENDING payments of this point are expired first.
  const em = db.em();
  const overdue = await em.find(Payment, await closableWindows(em, { merchant: input.merchantId }, now), { fields: ['invoice'], limit: 1000 });
  for (const invoiceId of new Set(overdue.map((p) => p.invoice.id))) await inTransaction(db, (em) => applyExpiry(em, invoiceId, now));
  const where: FilterQuery<Payment> = { merchant: input.merchantId };
  if (input.status) where.status = input.status;
  if (input.blockchain) where.blockchain = input.blockchain;
  const [items, total] = await db.em().findAndCount(Payment, where, {
    orderBy: { createdAt: 'desc', id: 'desc' },
    offset: input.skip,
    limit: input.take,
    populate: ['invoice'],
  });
  return {
    items,
    pagination: {
      total,
      page: Math.floor(input.skip / input.take) + 1,
      limit: input.take,
      hasMore: input.skip + input.take < total,
    },
  };
}

/** One payment after the expiry rules ran; scoped to a merchant point, or public when null. */
export async function loadPayment(db: Database, paymentId: string, merchantId: string | null, now = new Date()): Promise<Payment> {
  const em = db.em();
  const current = await em.findOne(Payment, merchantId ? { id: paymentId, merchant: merchantId } : { id: paymentId }, { populate: ['invoice'] });
  if (!current) throw new GatewayError('PAYMENT_NOT_FOUND', 'Payment not found');
  if (!(await expiryDue(em, current.invoice, now))) return current;
  return inTransaction(db, async (em) => {
    const payment = await em.findOne(Payment, merchantId ? { id: paymentId, merchant: merchantId } : { id: paymentId });
    if (!payment) throw new GatewayError('PAYMENT_NOT_FOUND', 'Payment not found');
    await applyExpiry(em, payment.invoice.id, now);
    return em.findOneOrFail(Payment, { id: payment.id }, { refresh: true, populate: ['invoice'] });
  });
}
