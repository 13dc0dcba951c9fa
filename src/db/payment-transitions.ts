import type { EntityManager } from '@mikro-orm/sql';
import { evaluateDepth, IN_FLIGHT_PAYMENT_STATUSES, } from '../domain/lifecycle.ts';
import { formatUnits } from '../domain/money.ts';
import { ObservedTransfer } from './entities/observed-transfer.entity.ts';
import { Payment } from './entities/payment.entity.ts';
import { applyExpiry } from './expiry.ts';
import { amountDifference, applyInvoiceFact, applyPaymentFact, settlePayment } from './lifecycle.ts';

// Applies the lifecycle of src/domain/lifecycle.ts to stored payments and invoices. Every change is
// a conditional update on the transition's `from` statuses, inside the caller's transaction, with
// the event it causes. `at` is the time of the fact: the block time for what the chain decides, so
// that an indexer that was down writes the same timestamps as a live one.

/**
 * Recomputes a payment from its credited transfers: receivedAmount (sum), transactionHash (first),
 * blockNumber (newest credit, so new funds need their own confirmations) and amountDifference.
 * Nothing credited left (a reorg): back to PENDING. A first credit: PROCESSING, reviving an
 * EXPIRED payment and its invoice when the chain says the funds were sent in time.
 */
export async function recomputeCredit(em: EntityManager, paymentId: string, at: Date): Promise<Payment> {
  const payment = await em.findOneOrFail(Payment, { id: paymentId }, { refresh: true });
  // Chain order (block numbers are stored as strings: compare them as integers).
  const credited = (await em.find(ObservedTransfer, { paymentId, status: 'CREDITED' })).sort(
    (a, b) => (BigInt(a.blockNumber) === BigInt(b.blockNumber) ? a.logIndex - b.logIndex : BigInt(a.blockNumber) < BigInt(b.blockNumber) ? -1 : 1),
  );
  const atomic = credited.reduce((sum, t) => sum + BigInt(t.amount), 0n);
  payment.receivedAmount = formatUnits(atomic, payment.decimals);
  payment.metadata = { ...payment.metadata, amountDifference: amountDifference(payment) };
  if (credited.length === 0) {
    payment.transactionHash = null;
    payment.blockNumber = null;
    payment.confirmations = 0;
  } else {
    payment.transactionHash = credited[0]!.txHash;
    payment.blockNumber = credited.at(-1)!.blockNumber;
  }
  payment.updatedAt = new Date();
  await em.flush();
  if (credited.length === 0) {
    await applyPaymentFact(em, payment, 'uncredited', at, { confirmations: 0 });
  } else {
    const revived = payment.status === 'EXPIRED';
    if (await applyPaymentFact(em, payment, 'credited', at, { confirmations: 0 })) {
      if (revived) await applyInvoiceFact(em, payment.invoice.id, 'revived', at);
    }
  }
  return payment;
}

export interface DepthContext {
  /** Height the indexer has processed. */
  at: bigint;
  finalized: bigint | null;
  /** Block time of a processed height (completedAt is the time the required depth was reached). */
  timeOf(height: bigint): Promise<Date>;
}

/**
 * Evaluates an in-flight payment at the processed height: CONFIRMING, then COMPLETED once the
 * required count is reached and the chain calls the block final, with completedAt, the invoice
 * PAID and the events, all in the caller's transaction.
 */
export async function applyDepth(em: EntityManager, payment: Payment, ctx: DepthContext): Promise<void> {
  if (payment.blockNumber === null || payment.blockNumber === undefined) return;
  const outcome = evaluateDepth({
    status: payment.status,
    lastCreditBlock: BigInt(payment.blockNumber),
    required: payment.requiredConfirmations,
    at: ctx.at,
    finalized: ctx.finalized,
  });
  const blockNumber = BigInt(payment.blockNumber);
  for (const step of outcome.steps) {
    if (step === 'deepened') {
      // The payment became CONFIRMING at its credit block, with one confirmation.
      await applyPaymentFact(em, payment, 'deepened', await ctx.timeOf(blockNumber), { confirmations: 1 });
    } else if (step === 'settled') {
      await settlePayment(em, payment, await ctx.timeOf(outcome.settledAt!));
    }
  }
  if (payment.status !== 'COMPLETED' && payment.confirmations !== outcome.confirmations) {
    await em.nativeUpdate(Payment, { id: payment.id, status: { $in: [...IN_FLIGHT_PAYMENT_STATUSES] } }, { confirmations: outcome.confirmations, updatedAt: new Date() });
    await em.refresh(payment);
  }
}


/** A reverted transaction: FAILED with metadata.failure_reason; the invoice reopens if it has not expired. */
export async function failPayment(em: EntityManager, paymentId: string, reason: string, at: Date): Promise<void> {
  const payment = await em.findOneOrFail(Payment, { id: paymentId }, { refresh: true });
  if (!(await applyPaymentFact(em, payment, 'reverted', at, { metadata: { ...payment.metadata, failure_reason: reason } }))) return;
  // No live payment is left: the invoice reopens for another attempt, or expires (docs/expiry.md).
  await applyExpiry(em, payment.invoice.id, at);
}
