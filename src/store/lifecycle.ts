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
  type TransferStatus,
} from '../domain/lifecycle.ts';
import { SWEEP_TRANSITIONS, type SweepFact } from '../domain/sweep-lifecycle.ts';
import { newId } from '../domain/ids.ts';
import { formatUnits, parseUnits } from '../domain/money.ts';
import { invoiceView, paymentEventData, refundView } from '../domain/views.ts';
import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import type { ChainSlug } from '../chains/slugs.ts';
import type { Executor, SqlValue } from './executor.ts';
import { recordEvent } from './events.ts';
import { invoiceById, paymentById } from './records.ts';
import { receivedTotal, refundedTotals, refundsOfPayment } from './refunds.ts';

// The one place that writes a status: payments, invoices, pool addresses, observed transfers,
// webhook deliveries, idempotency keys and sweep transactions (test/integration/layers.test.ts
// fails the build when another file does). Each move is a conditional update on its transition
// table's `from` statuses (src/domain/lifecycle.ts, src/domain/sweep-lifecycle.ts), in the caller's
// transaction, with the event it causes. `at` is when the fact happened (the block time for chain
// facts), stamped on the event. A new row is written with its table's first status by its creator.
// Every writer is SQL against the write's executor (Database.write), by row id, for both databases:
// events are built from the rows as the transaction now holds them, never from an ORM entity.

/** The statuses a transition moves from, as the SQL list of a `status in (…)` condition. */
const inList = (statuses: readonly string[]) => statuses.map((s) => `'${s}'`).join(', ');

export function amountDifference(p: { receivedAmount: string; expectedAmount: string; decimals: number }): string {
  try {
    return formatUnits(parseUnits(p.receivedAmount, p.decimals) - parseUnits(p.expectedAmount, p.decimals), p.decimals);
  } catch {
    // verbatim pricing stores fiat minor units as the expected amount; compare as plain decimals then
    return formatUnits(parseUnits(p.receivedAmount, 18) - parseUnits(p.expectedAmount, 18), 18);
  }
}

/** Records a payment.* event with the payment and its invoice as the transaction holds them now. */
export async function emitPaymentEvent(
  x: Executor,
  paymentId: string,
  type: PaymentEventType | 'payment.late_funds',
  at: Date,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const payment = await paymentById(x, paymentId);
  const invoice = await invoiceById(x, payment.invoiceId);
  await recordEvent(x, {
    merchantId: payment.merchantId,
    type,
    paymentId: payment.id,
    invoiceId: invoice.id,
    data: { ...paymentEventData(payment, invoice, amountDifference(payment)), ...extra },
  }, at);
}

export interface PaymentFields {
  completedAt?: Date | null;
  confirmations?: number;
  metadata?: Record<string, unknown>;
}

/** `column = ?` assignments and their values for the fields given, in a fixed order (so a few statement texts in all). */
function paymentSet(fields: PaymentFields): { set: string; params: SqlValue[] } {
  const set: string[] = [];
  const params: SqlValue[] = [];
  if (fields.completedAt !== undefined) {
    set.push('completed_at = ?');
    params.push(fields.completedAt);
  }
  if (fields.confirmations !== undefined) {
    set.push('confirmations = ?');
    params.push(fields.confirmations);
  }
  if (fields.metadata !== undefined) {
    set.push('metadata = ?');
    params.push(JSON.stringify(fields.metadata));
  }
  return { set: set.map((c) => `, ${c}`).join(''), params };
}

/** Moves a payment by one fact if its status allows; records the transition's event. Returns whether it moved. */
export async function applyPaymentFact(
  x: Executor,
  paymentId: string,
  fact: PaymentFact,
  at: Date,
  fields: PaymentFields = {},
  eventExtra: Record<string, unknown> = {},
): Promise<boolean> {
  const t = PAYMENT_TRANSITIONS[fact];
  const { set, params } = paymentSet(fields);
  const changed = await x.run(`update payment set status = '${t.to}'${set}, updated_at = ? where id = ? and status in (${inList(t.from)})`, [...params, new Date(), paymentId]);
  if (changed === 0) return false;
  if (t.event) await emitPaymentEvent(x, paymentId, t.event, at, eventExtra);
  return true;
}

async function recordInvoiceEvent(x: Executor, invoiceId: string, type: NonNullable<(typeof INVOICE_TRANSITIONS)[InvoiceFact]['event']>, at: Date, paymentId: string | null): Promise<void> {
  const invoice = await invoiceById(x, invoiceId);
  await recordEvent(x, { merchantId: invoice.merchantId, type, invoiceId, ...(paymentId ? { paymentId } : {}), data: { invoice: invoiceView(invoice) } }, at);
}

/** Moves an invoice by one fact if its status allows; records the transition's event. */
export async function applyInvoiceFact(x: Executor, invoiceId: string, fact: InvoiceFact, at: Date, fields: { paidAt?: Date; cancelledAt?: Date } = {}): Promise<boolean> {
  const t = INVOICE_TRANSITIONS[fact];
  const set = `${fields.paidAt ? ', paid_at = ?' : ''}${fields.cancelledAt ? ', cancelled_at = ?' : ''}`;
  const params: SqlValue[] = [...(fields.paidAt ? [fields.paidAt] : []), ...(fields.cancelledAt ? [fields.cancelledAt] : [])];
  const changed = await x.run(`update invoice set status = '${t.to}'${set}, updated_at = ? where id = ? and status in (${inList(t.from)})`, [...params, new Date(), invoiceId]);
  if (changed === 0) return false;
  if (t.event) await recordInvoiceEvent(x, invoiceId, t.event, at, null);
  return true;
}

/**
 * COMPLETED at the time the required depth was reached; the invoice PAID (money outranks the clock:
 * also from OPEN or EXPIRED). payment.completed carries the invoice stub as PAID, then invoice.paid.
 */
export async function settlePayment(x: Executor, paymentId: string, at: Date): Promise<void> {
  const t = PAYMENT_TRANSITIONS.settled;
  const changed = await x.run(
    `update payment set status = '${t.to}', confirmations = required_confirmations, completed_at = ?, updated_at = ? where id = ? and status in (${inList(t.from)})`,
    [at, new Date(), paymentId],
  );
  if (changed === 0) return;
  const { invoice_id: invoiceId } = (await x.get<{ invoice_id: string }>('select invoice_id from payment where id = ?', [paymentId]))!;
  const p = INVOICE_TRANSITIONS.paid;
  const paid = await x.run(`update invoice set status = '${p.to}', paid_at = ?, updated_at = ? where id = ? and status in (${inList(p.from)})`, [at, new Date(), invoiceId]);
  await emitPaymentEvent(x, paymentId, t.event, at);
  if (paid) await recordInvoiceEvent(x, invoiceId, p.event, at, paymentId);
}

/**
 * Moves a sweep transaction by a fact if its status allows (`where status in (from)`), with the
 * fields that go with the fact. Returns whether it moved.
 */
export async function applySweepFact(
  x: Executor,
  id: string,
  fact: SweepFact,
  fields: { error?: string | null; fee?: string; attempted?: boolean } = {},
): Promise<boolean> {
  const t = SWEEP_TRANSITIONS[fact];
  const now = new Date();
  const set: string[] = [];
  const params: SqlValue[] = [];
  if (fields.error !== undefined) {
    set.push('error = ?');
    params.push(fields.error === null ? null : fields.error.slice(0, 500));
  }
  if (fields.fee !== undefined) {
    set.push('fee = ?');
    params.push(fields.fee);
  }
  if (fact === 'accepted') {
    set.push('sent_at = ?');
    params.push(now);
  }
  if (fact === 'finalized') {
    set.push('final_at = ?');
    params.push(now);
  }
  // An attempt to send counts only when the fact moved the transaction, as the status does.
  if (fields.attempted) set.push('attempts = attempts + 1');
  const sql = `update sweep_tx set status = '${t.to}', updated_at = ?${set.map((c) => `, ${c}`).join('')} where id = ? and status in (${inList(t.from)})`;
  return (await x.run(sql, [now, ...params, id])) > 0;
}

/**
 * A sweep or refund transaction reached finality. When it was the last of a refund plan, and the
 * refunds now final cover everything the payment received, the payment moves to REFUNDED with its
 * payment.refunded event: all in the caller's write, so the event is sent exactly once.
 */
export async function finalizeSweepTx(x: Executor, id: string, fields: { fee?: string }, refundedPayment: string | null): Promise<boolean> {
  const moved = await applySweepFact(x, id, 'finalized', { error: null, ...fields });
  if (moved && refundedPayment !== null) await refundIfCovered(x, refundedPayment, new Date());
  return moved;
}

async function refundIfCovered(x: Executor, paymentId: string, at: Date): Promise<void> {
  const payment = await paymentById(x, paymentId);
  const refunds = await refundsOfPayment(x, paymentId);
  const received = await receivedTotal(x, payment);
  if (received === 0n || refundedTotals(refunds).final < received) return;
  const native = CHAIN_DEFAULTS[payment.blockchain as ChainSlug].native;
  await applyPaymentFact(x, paymentId, 'refunded', at, {}, { refunds: refunds.map((r) => refundView(r, native)) });
}

/**
 * OPEN -> PAYMENT_PENDING, only while the invoice is within its expiresAt and has no live payment:
 * the claim and the one-live-payment rule in one conditional statement, the first write.
 */
const CHECKOUT_CLAIM_SQL = `update invoice set status = '${INVOICE_TRANSITIONS.checkedOut.to}', updated_at = ?
  where id = ? and status in (${INVOICE_TRANSITIONS.checkedOut.from.map((s) => `'${s}'`).join(', ')}) and expires_at > ?
    and not exists (select 1 from payment where invoice_id = ? and status in (${LIVE_PAYMENT_STATUSES.map((s) => `'${s}'`).join(', ')}))`;

/** The checkout's claim of its invoice (OPEN -> PAYMENT_PENDING, the one-live-payment rule in the same statement); false when it was not claimable. */
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

export interface TransferRecord {
  chain: string;
  network: string;
  txHash: string;
  logIndex: number;
  blockNumber: string;
  blockHash: string;
  fromAddress: string | null;
  toAddress: string;
  tokenAddress: string | null;
  symbol: string | null;
  amount: string;
  paymentId: string | null;
  status: TransferStatus;
  note: string | null;
}

/**
 * An observed transfer with its classification: a new row, or, given the id of its REORGED row, that
 * row re-recorded as the new chain holds it (the one way out of REORGED, src/domain/lifecycle.ts).
 */
export async function recordTransfer(x: Executor, t: TransferRecord, reorgedId: string | null = null): Promise<void> {
  const now = new Date();
  if (reorgedId !== null) {
    await x.run(
      `update observed_transfer set block_number = ?, block_hash = ?, from_address = ?, to_address = ?, token_address = ?, symbol = ?, amount = ?, payment_id = ?, status = ?, note = ?, updated_at = ?
        where id = ? and status = '${TRANSFER_TRANSITIONS.reorged.to}'`,
      [t.blockNumber, t.blockHash, t.fromAddress, t.toAddress, t.tokenAddress, t.symbol, t.amount, t.paymentId, t.status, t.note, now, reorgedId],
    );
    return;
  }
  await x.run(
    `insert into observed_transfer (id, chain, network, tx_hash, log_index, block_number, block_hash, from_address, to_address, token_address, symbol, amount, payment_id, status, note, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [newId(), t.chain, t.network, t.txHash, t.logIndex, t.blockNumber, t.blockHash, t.fromAddress, t.toAddress, t.tokenAddress, t.symbol, t.amount, t.paymentId, t.status, t.note, now, now],
  );
}

/** Observed transfers whose block left the canonical chain: REORGED, with the reason as their note. */
export async function markReorged(x: Executor, transfers: { id: string; note: string }[]): Promise<void> {
  const t = TRANSFER_TRANSITIONS.reorged;
  const now = new Date();
  for (const transfer of transfers) {
    await x.run(`update observed_transfer set status = '${t.to}', note = ?, updated_at = ? where id = ? and status in (${inList(t.from)})`, [transfer.note, now, transfer.id]);
  }
}

export interface DeliveryOutcome {
  attemptCount: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: Date | null;
}

/**
 * Moves a leased webhook delivery after an attempt (PENDING again with its next time, DELIVERED or
 * FAILED), releasing the lease. False when this owner's lease had been lost meanwhile.
 */
export async function moveDelivery(x: Executor, lease: { deliveryId: string; owner: string }, fact: DeliveryFact, fields: DeliveryOutcome): Promise<boolean> {
  const t = DELIVERY_TRANSITIONS[fact];
  const changed = await x.run(
    `update webhook_delivery set state = '${t.to}', attempt_count = ?, next_attempt_at = ?, last_status_code = ?, last_error = ?, delivered_at = ?, lease_owner = null, lease_until = null, updated_at = ?
      where id = ? and lease_owner = ? and state in (${inList(t.from)})`,
    [fields.attemptCount, fields.nextAttemptAt, fields.lastStatusCode, fields.lastError, fields.deliveredAt, new Date(), lease.deliveryId, lease.owner],
  );
  return changed === 1;
}
