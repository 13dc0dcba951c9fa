import type { EntityManager } from '@mikro-orm/sql';
import { INVOICE_TRANSITIONS, PAYMENT_TRANSITIONS, type InvoiceFact, type PaymentFact } from '../domain/lifecycle.ts';
import { formatUnits, parseUnits } from '../domain/money.ts';
import { invoiceView, paymentEventData } from '../domain/views.ts';
import { Invoice } from './entities/invoice.entity.ts';
import { Payment } from './entities/payment.entity.ts';
import { recordEvent } from './events.ts';

// The one place that moves stored payments and invoices between statuses: each move is a
// conditional update on the lifecycle's `from` statuses (src/domain/lifecycle.ts), in the caller's
// transaction, with the event it causes. `at` is when the fact happened (the block time for chain
// facts), stamped on the event.

export function amountDifference(p: Pick<Payment, 'receivedAmount' | 'expectedAmount' | 'decimals'>): string {
  try {
    return formatUnits(parseUnits(p.receivedAmount, p.decimals) - parseUnits(p.expectedAmount, p.decimals), p.decimals);
  } catch {
    // verbatim pricing stores fiat minor units as the expected amount; compare as plain decimals then
    return formatUnits(parseUnits(p.receivedAmount, 18) - parseUnits(p.expectedAmount, 18), 18);
  }
}

/** Records a payment.* event with the payment as it is now (refreshed with its invoice). */
export async function emitPaymentEvent(
  em: EntityManager,
  payment: Payment,
  type: 'payment.completed' | 'payment.confirming' | 'payment.failed' | 'payment.expired' | 'payment.late_funds',
  at: Date,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const invoice = await em.findOneOrFail(Invoice, { id: payment.invoice.id }, { refresh: true });
  await recordEvent(em, {
    merchantId: payment.merchant.id,
    type,
    paymentId: payment.id,
    invoiceId: invoice.id,
    data: { ...paymentEventData(payment, invoice, amountDifference(payment)), ...extra },
  }, at);
}

/** Moves a payment by one fact if its status allows; records the transition's event. Returns whether it moved. */
export async function applyPaymentFact(em: EntityManager, payment: Payment, fact: PaymentFact, at: Date, fields: Partial<Pick<Payment, 'completedAt' | 'confirmations' | 'metadata'>> = {}): Promise<boolean> {
  const t = PAYMENT_TRANSITIONS[fact];
  const changed = await em.nativeUpdate(Payment, { id: payment.id, status: { $in: [...t.from] } }, { status: t.to, ...fields, updatedAt: new Date() });
  if (changed === 0) return false;
  await em.refresh(payment);
  if (t.event) await emitPaymentEvent(em, payment, t.event, at);
  return true;
}

/** Moves an invoice by one fact if its status allows; records the transition's event. */
export async function applyInvoiceFact(em: EntityManager, invoiceId: string, fact: InvoiceFact, at: Date, fields: Partial<Pick<Invoice, 'paidAt' | 'cancelledAt'>> = {}): Promise<boolean> {
  const t = INVOICE_TRANSITIONS[fact];
  const changed = await em.nativeUpdate(Invoice, { id: invoiceId, status: { $in: [...t.from] } }, { status: t.to, ...fields, updatedAt: new Date() });
  if (changed === 0) return false;
  if (t.event) {
    const invoice = await em.findOneOrFail(Invoice, { id: invoiceId }, { refresh: true });
    await recordEvent(em, { merchantId: invoice.merchant.id, type: t.event, invoiceId, data: { invoice: invoiceView(invoice) } }, at);
  }
  return true;
}

