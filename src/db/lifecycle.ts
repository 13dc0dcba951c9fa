import type { EntityManager } from '@mikro-orm/sql';
import {
  DELIVERY_TRANSITIONS,
  INVOICE_TRANSITIONS,
  KEY_TRANSITIONS,
  LIVE_PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  POOL_TRANSITIONS,
  TRANSFER_TRANSITIONS,
  type DeliveryFact,
  type InvoiceFact,
  type PaymentEventType,
  type PaymentFact,
} from '../domain/lifecycle.ts';
import { SWEEP_TRANSITIONS, type SweepFact } from '../domain/sweep-lifecycle.ts';
import { formatUnits, parseUnits } from '../domain/money.ts';
import { invoiceView, paymentEventData, refundView } from '../domain/views.ts';
import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import type { ChainSlug } from '../chains/slugs.ts';
import { Invoice } from './entities/invoice.entity.ts';
import type { ObservedTransfer } from './entities/observed-transfer.entity.ts';
import { Payment } from './entities/payment.entity.ts';
import { SweepTx } from './entities/sweep-tx.entity.ts';
import { WebhookDelivery } from './entities/webhook-delivery.entity.ts';
import type { Executor } from './executor.ts';
import { recordEvent } from './events.ts';
import { receivedTotal, refundedTotals, refundsOfPayment } from './refunds.ts';

// The one place that writes a status: payments, invoices, pool addresses, observed transfers,
// webhook deliveries, idempotency keys and sweep transactions (test/integration/layers.test.ts
// fails the build when another file does). Each move is a conditional update on its transition
// table's `from` statuses (src/domain/lifecycle.ts, src/domain/sweep-lifecycle.ts), in the caller's
// transaction, with the event it causes. `at` is when the fact happened (the block time for chain
// facts), stamped on the event. A new row is written with its table's first status by its creator.

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
  type: PaymentEventType | 'payment.late_funds',
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
export async function applyPaymentFact(
  em: EntityManager,
  payment: Payment,
  fact: PaymentFact,
  at: Date,
  fields: Partial<Pick<Payment, 'completedAt' | 'confirmations' | 'metadata'>> = {},
  eventExtra: Record<string, unknown> = {},
): Promise<boolean> {
  const t = PAYMENT_TRANSITIONS[fact];
  const changed = await em.nativeUpdate(Payment, { id: payment.id, status: { $in: [...t.from] } }, { status: t.to, ...fields, updatedAt: new Date() });
  if (changed === 0) return false;
  await em.refresh(payment);
  if (t.event) await emitPaymentEvent(em, payment, t.event, at, eventExtra);
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

/**
 * COMPLETED at the time the required depth was reached; the invoice PAID (money outranks the clock:
 * also from OPEN or EXPIRED). payment.completed carries the invoice stub as PAID, then invoice.paid.
 */
export async function settlePayment(em: EntityManager, payment: Payment, at: Date): Promise<void> {
  const t = PAYMENT_TRANSITIONS.settled;
  const changed = await em.nativeUpdate(
    Payment,
    { id: payment.id, status: { $in: [...t.from] } },
    { status: t.to, confirmations: payment.requiredConfirmations, completedAt: at, updatedAt: new Date() },
  );
  if (changed === 0) return;
  await em.refresh(payment);
  const p = INVOICE_TRANSITIONS.paid;
  const paid = await em.nativeUpdate(Invoice, { id: payment.invoice.id, status: { $in: [...p.from] } }, { status: p.to, paidAt: at, updatedAt: new Date() });
  await emitPaymentEvent(em, payment, t.event, at);
  if (paid) {
    const invoice = await em.findOneOrFail(Invoice, { id: payment.invoice.id }, { refresh: true });
    await recordEvent(em, { merchantId: invoice.merchant.id, type: p.event, invoiceId: invoice.id, paymentId: payment.id, data: { invoice: invoiceView(invoice) } }, at);
  }
}

/**
 * Moves a sweep transaction it by a fact if its status allows
 * (`where status in (from)`), with the fields that go with the fact. Returns whether it moved.
 */
export async function applySweepFact(
  em: EntityManager,
  id: string,
  fact: SweepFact,
  fields: { error?: string | null; fee?: string; attempted?: boolean } = {},
): Promise<boolean> {
  const t = SWEEP_TRANSITIONS[fact];
  const now = new Date();
  const set: Record<string, unknown> = { status: t.to, updatedAt: now };
  if (fields.error !== undefined) set.error = fields.error === null ? null : fields.error.slice(0, 500);
  if (fields.fee !== undefined) set.fee = fields.fee;
  if (fact === 'accepted') set.sentAt = now;
  if (fact === 'finalized') set.finalAt = now;
  const changed = await em.nativeUpdate(SweepTx, { id, status: { $in: [...t.from] } }, set);
  if (changed > 0 && fields.attempted) {
    await em.execute('update sweep_tx set attempts = attempts + 1 where id = ?', [id]);
  }
  return changed > 0;
}

/**
 * OPEN -> PAYMENT_PENDING, only while the invoice is within its expiresAt and has no live payment:
 * the claim and the one-live-payment rule in one conditional statement, the first write.
 */
const CHECKOUT_CLAIM_SQL = `update invoice set status = '${INVOICE_TRANSITIONS.checkedOut.to}', updated_at = ?
  where id = ? and status in (${INVOICE_TRANSITIONS.checkedOut.from.map((s) => `'${s}'`).join(', ')}) and expires_at > ?
    and not exists (select 1 from payment where invoice_id = ? and status in (${LIVE_PAYMENT_STATUSES.map((s) => `'${s}'`).join(', ')}))`;

/** The checkout's claim of its invoice (OPEN -> PAYMENT_PENDING, the one-live-payment rule in the same statement); false when it was not claimable. */
/**
 * A sweep or refund transaction reached finality. When it was the last of a refund plan, and the
 * refunds now final cover everything the payment received, the payment moves to REFUNDED with its
 * payment.refunded event: all in one transaction, so the event is sent exactly once.
 */
export async function finalizeSweepTx(em: EntityManager, id: string, fields: { fee?: string }, refundedPayment: string | null): Promise<boolean> {
  return em.transactional(async (tem) => {
    const moved = await applySweepFact(tem, id, 'finalized', { error: null, ...fields });
    if (moved && refundedPayment !== null) await refundIfCovered(tem, refundedPayment, new Date());
    return moved;
  });
}

async function refundIfCovered(em: EntityManager, paymentId: string, at: Date): Promise<void> {
  const payment = await em.findOneOrFail(Payment, { id: paymentId }, { refresh: true });
  const refunds = await refundsOfPayment(em, paymentId);
  const received = await receivedTotal(em, payment);
  if (received === 0n || refundedTotals(refunds).final < received) return;
  const native = CHAIN_DEFAULTS[payment.blockchain as ChainSlug].native;
  await applyPaymentFact(em, payment, 'refunded', at, {}, { refunds: refunds.map((r) => refundView(r, native)) });
}

export async function checkOutInvoice(x: Executor, invoiceId: string, now: Date): Promise<boolean> {
  return (await x.run(CHECKOUT_CLAIM_SQL, [now, invoiceId, now, invoiceId])) > 0;
}

export interface LeasedAddress {
  id: string;
  address: string;
}

/**
 * Takes one free address of a pool for a payment, atomically, for good. On PostgreSQL the candidate
 * row is locked with SKIP LOCKED so concurrent leases pick different rows instead of waiting and
 * then missing; on SQLite the caller's transaction already holds the write lock. Null when empty.
 */
export async function leasePoolAddress(x: Executor, pool: { chain: string; isTestnet: boolean }, paymentId: string, now: Date): Promise<LeasedAddress | null> {
  const row = await x.get<LeasedAddress>(LEASE_SQL[x.dialect], [paymentId, now, pool.chain, pool.isTestnet]);
  return row ? { id: row.id, address: row.address } : null;
}

const leaseSql = (lock: string) => `update wallet_address set status = '${POOL_TRANSITIONS.leased.to}', payment_id = ?, leased_at = ?
     where id = (select id from wallet_address where chain = ? and is_testnet = ? and status = '${POOL_TRANSITIONS.leased.from[0]}'
                 order by derivation_index, created_at, id limit 1${lock})
     returning id, address`;
const LEASE_SQL = { sqlite: leaseSql(''), postgresql: leaseSql(' for update skip locked') };

const COMPLETE_KEY_SQL = `update idempotency_record set state = '${KEY_TRANSITIONS.completed.to}', status_code = ?, response_body = ?
  where id = ? and state = '${KEY_TRANSITIONS.completed.from[0]}'`;

/** The Idempotency-Key's answer, stored in the transaction that claimed it (src/app/idempotent-write.ts). */
export async function completeKey(x: Executor, id: string, statusCode: number, body: string): Promise<void> {
  await x.run(COMPLETE_KEY_SQL, [statusCode, body, id]);
}

/** Observed transfers whose block left the canonical chain, with the reason as their note; the caller flushes. */
export function markReorged(transfers: ObservedTransfer[], note: (t: ObservedTransfer) => string): void {
  const t = TRANSFER_TRANSITIONS.reorged;
  for (const transfer of transfers) {
    if (!(t.from as readonly string[]).includes(transfer.status)) continue;
    transfer.status = t.to;
    transfer.note = note(transfer);
  }
}

/**
 * Moves a leased webhook delivery after an attempt (PENDING again with its next time, DELIVERED or
 * FAILED), releasing the lease. False when this owner's lease had been lost meanwhile.
 */
export async function moveDelivery(
  em: EntityManager,
  lease: { deliveryId: string; owner: string },
  fact: DeliveryFact,
  fields: Pick<WebhookDelivery, 'attemptCount' | 'nextAttemptAt' | 'lastStatusCode' | 'lastError' | 'deliveredAt'>,
): Promise<boolean> {
  const t = DELIVERY_TRANSITIONS[fact];
  const changed = await em.nativeUpdate(
    WebhookDelivery,
    { id: lease.deliveryId, leaseOwner: lease.owner, state: { $in: [...t.from] } },
    { ...fields, state: t.to, leaseOwner: null, leaseUntil: null, updatedAt: new Date() },
  );
  return changed === 1;
}
