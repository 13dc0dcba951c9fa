import type { EntityManager } from '@mikro-orm/sql';
import { formatUnits, parseUnits } from '../domain/money.ts';
import { invoiceView, paymentEventData } from '../domain/views.ts';
import { Invoice } from './entities/invoice.entity.ts';
import { ObservedTransfer } from './entities/observed-transfer.entity.ts';
import { Payment } from './entities/payment.entity.ts';
import { recordEvent } from './events.ts';
import { applyExpiry } from './expiry.ts';

// The payment state machine as the chain watchers drive it. Each function runs inside the caller's
// transaction, so a state change and the event it causes commit together. Amounts are compared
// and recorded, never used to block completion (spec rule 10).

export function amountDifference(p: Pick<Payment, 'receivedAmount' | 'expectedAmount' | 'decimals' | 'isTestnet'> & { metadata: Record<string, unknown> }): string {
  try {
    return formatUnits(parseUnits(p.receivedAmount, p.decimals) - parseUnits(p.expectedAmount, p.decimals), p.decimals);
  } catch {
    // verbatim pricing stores fiat minor units as the expected amount; compare as plain decimals then
    return formatUnits(parseUnits(p.receivedAmount, 18) - parseUnits(p.expectedAmount, 18), 18);
  }
}

async function emit(em: EntityManager, payment: Payment, type: 'payment.completed' | 'payment.confirming' | 'payment.failed', now: Date): Promise<void> {
  const invoice = await em.findOneOrFail(Invoice, { id: payment.invoice.id }, { refresh: true });
  await recordEvent(em, {
    merchantId: payment.merchant.id,
    type,
    paymentId: payment.id,
    invoiceId: invoice.id,
    data: paymentEventData(payment, invoice, amountDifference(payment)),
  }, now);
}

/**
 * Recomputes a payment from its credited transfers: receivedAmount (sum), transactionHash (first),
 * blockNumber (latest, so new funds need their own confirmations) and amountDifference. A payment
 * with nothing credited left (a reorg) steps back to PENDING.
 */
export async function recomputeCredit(em: EntityManager, paymentId: string, now: Date): Promise<Payment> {
  const payment = await em.findOneOrFail(Payment, { id: paymentId }, { refresh: true });
  const credited = await em.find(ObservedTransfer, { paymentId, status: 'CREDITED' }, { orderBy: { blockNumber: 'asc', logIndex: 'asc' } });
  const atomic = credited.reduce((sum, t) => sum + BigInt(t.amount), 0n);
  payment.receivedAmount = formatUnits(atomic, payment.decimals);
  payment.metadata = { ...payment.metadata, amountDifference: amountDifference(payment) };
  if (credited.length === 0) {
    if (payment.status === 'PROCESSING' || payment.status === 'CONFIRMING') {
      payment.status = 'PENDING';
      payment.confirmations = 0;
      payment.transactionHash = null;
      payment.blockNumber = null;
    }
  } else {
    payment.transactionHash = credited[0]!.txHash;
    payment.blockNumber = credited.reduce((max, t) => (BigInt(t.blockNumber) > BigInt(max) ? t.blockNumber : max), credited[0]!.blockNumber);
    if (payment.status === 'PENDING') {
      payment.status = 'PROCESSING';
      payment.confirmations = 0;
    }
  }
  payment.updatedAt = now;
  await em.flush();
  return payment;
}

/**
 * PROCESSING -> CONFIRMING while 0 < confirmations < required; -> COMPLETED at >= required, with
 * completedAt, the invoice PAID and the events, all in the caller's transaction.
 */
export async function applyConfirmations(em: EntityManager, paymentId: string, head: bigint, now: Date): Promise<Payment> {
  const payment = await em.findOneOrFail(Payment, { id: paymentId }, { refresh: true });
  if ((payment.status !== 'PROCESSING' && payment.status !== 'CONFIRMING') || payment.blockNumber === null || payment.blockNumber === undefined) return payment;
  const depth = head - BigInt(payment.blockNumber) + 1n;
  const confirmations = depth < 0n ? 0 : Number(depth > 1_000_000n ? 1_000_000n : depth);
  const before = payment.status;
  payment.confirmations = confirmations;
  if (confirmations >= payment.requiredConfirmations) {
    payment.status = 'COMPLETED';
    payment.completedAt = now;
  } else if (confirmations > 0) {
    payment.status = 'CONFIRMING';
  }
  payment.updatedAt = now;
  await em.flush();
  if (payment.status === 'CONFIRMING' && before !== 'CONFIRMING') await emit(em, payment, 'payment.confirming', now);
  if (payment.status === 'COMPLETED') {
    const paid = await em.nativeUpdate(
      Invoice,
      { id: payment.invoice.id, status: 'PAYMENT_PENDING' },
      { status: 'PAID', paidAt: now, updatedAt: now },
    );
    await emit(em, payment, 'payment.completed', now);
    if (paid) {
      const invoice = await em.findOneOrFail(Invoice, { id: payment.invoice.id }, { refresh: true });
      await recordEvent(em, { merchantId: payment.merchant.id, type: 'invoice.paid', invoiceId: invoice.id, paymentId: payment.id, data: { invoice: invoiceView(invoice) } }, now);
    }
  }
  return payment;
}

/** A reverted transaction: FAILED with metadata.failure_reason; the invoice reopens if it has not expired. */
export async function failPayment(em: EntityManager, paymentId: string, reason: string, now: Date): Promise<void> {
  const changed = await em.nativeUpdate(
    Payment,
    { id: paymentId, status: { $in: ['PENDING', 'PROCESSING', 'CONFIRMING'] } },
    { status: 'FAILED', updatedAt: now },
  );
  if (!changed) return;
  const payment = await em.findOneOrFail(Payment, { id: paymentId }, { refresh: true });
  payment.metadata = { ...payment.metadata, failure_reason: reason };
  await em.flush();
  await emit(em, payment, 'payment.failed', now);
  // No live payment is left: the invoice reopens for another attempt, or expires (docs/expiry.md).
  await applyExpiry(em, payment.invoice.id, now);
}
