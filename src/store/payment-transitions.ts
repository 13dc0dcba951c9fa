import { evaluateDepth, IN_FLIGHT_PAYMENT_STATUSES } from '../domain/lifecycle.ts';
import { formatUnits } from '../domain/money.ts';
import type { Executor } from './executor.ts';
import { applyExpiry } from './expiry.ts';
import { amountDifference, applyInvoiceFact, applyPaymentFact, settlePayment } from './lifecycle.ts';
import { paymentById, type StoredPayment } from './records.ts';

// Applies the lifecycle of src/domain/lifecycle.ts to stored payments and invoices. Every change is
// a conditional update on the transition's `from` statuses, inside the caller's write, with the
// event it causes. `at` is the time of the fact: the block time for what the chain decides, so
// that an indexer that was down writes the same timestamps as a live one.

const IN_FLIGHT = IN_FLIGHT_PAYMENT_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * Recomputes a payment from its credited transfers: receivedAmount (sum), transactionHash (first),
 * blockNumber (newest credit, so new funds need their own confirmations) and amountDifference.
 * Nothing credited left (a reorg): back to PENDING. A first credit: PROCESSING, reviving an
 * EXPIRED payment and its invoice when the chain says the funds were sent in time. Returns the
 * payment as it is now.
 */
export async function recomputeCredit(x: Executor, paymentId: string, at: Date): Promise<StoredPayment> {
  const payment = await paymentById(x, paymentId);
  const rows = await x.all<{ tx_hash: string; log_index: number | string; block_number: string; amount: string }>(
    `select tx_hash, log_index, block_number, amount from observed_transfer where payment_id = ? and status = 'CREDITED'`,
    [paymentId],
  );
  // Chain order (block numbers are stored as strings: compare them as integers).
  const credited = rows.sort((a, b) =>
    BigInt(a.block_number) === BigInt(b.block_number) ? Number(a.log_index) - Number(b.log_index) : BigInt(a.block_number) < BigInt(b.block_number) ? -1 : 1,
  );
  const receivedAmount = formatUnits(credited.reduce((sum, t) => sum + BigInt(t.amount), 0n), payment.decimals);
  const metadata = { ...payment.metadata, amountDifference: amountDifference({ ...payment, receivedAmount }) };
  const first = credited[0];
  const last = credited.at(-1);
  await x.run(
    `update payment set received_amount = ?, metadata = ?, transaction_hash = ?, block_number = ?${first ? '' : ', confirmations = 0'}, updated_at = ? where id = ?`,
    [receivedAmount, JSON.stringify(metadata), first?.tx_hash ?? null, last?.block_number ?? null, new Date(), paymentId],
  );
  if (!first) {
    await applyPaymentFact(x, paymentId, 'uncredited', at, { confirmations: 0 });
  } else if (await applyPaymentFact(x, paymentId, 'credited', at, { confirmations: 0 })) {
    if (payment.status === 'EXPIRED') await applyInvoiceFact(x, payment.invoiceId, 'revived', at);
  }
  return paymentById(x, paymentId);
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
 * PAID and the events, all in the caller's write.
 */
export async function applyDepth(x: Executor, paymentId: string, ctx: DepthContext): Promise<void> {
  const payment = await paymentById(x, paymentId);
  if (payment.blockNumber === null) return;
  const blockNumber = BigInt(payment.blockNumber);
  const outcome = evaluateDepth({ status: payment.status, lastCreditBlock: blockNumber, required: payment.requiredConfirmations, at: ctx.at, finalized: ctx.finalized });
  for (const step of outcome.steps) {
    if (step === 'deepened') {
      // The payment became CONFIRMING at its credit block, with one confirmation.
      await applyPaymentFact(x, paymentId, 'deepened', await ctx.timeOf(blockNumber), { confirmations: 1 });
    } else if (step === 'settled') {
      await settlePayment(x, paymentId, await ctx.timeOf(outcome.settledAt!));
    }
  }
  const now = outcome.steps.length > 0 ? await paymentById(x, paymentId) : payment;
  if (now.status !== 'COMPLETED' && now.confirmations !== outcome.confirmations) {
    await x.run(`update payment set confirmations = ?, updated_at = ? where id = ? and status in (${IN_FLIGHT})`, [outcome.confirmations, new Date(), paymentId]);
  }
}

/** A reverted transaction: FAILED with metadata.failure_reason; the invoice reopens if it has not expired. */
export async function failPayment(x: Executor, paymentId: string, reason: string, at: Date): Promise<void> {
  const payment = await paymentById(x, paymentId);
  if (!(await applyPaymentFact(x, paymentId, 'reverted', at, { metadata: { ...payment.metadata, failure_reason: reason } }))) return;
  // No live payment is left: the invoice reopens for another attempt, or expires (docs/expiry.md).
  await applyExpiry(x, payment.invoiceId, at);
}
