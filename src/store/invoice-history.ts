import type { DeliveryStatus, TransferStatus } from '../domain/lifecycle.ts';
import type { Database } from './orm.ts';
import { dateOf, jsonOf, nullableDate, poolReader } from './raw-sql.ts';
import { refundsOfPayment, type RefundRow } from './refunds.ts';

// What the dashboard's invoice detail reads besides the invoice and its payments (src/store/invoices.ts):
// the transfers the indexers saw for its payments, the events recorded for it with their webhook
// deliveries and attempts, and the refunds of its payments. Plain records, oldest first.

/** The merchant point an invoice belongs to, or null when there is no such invoice. */
export async function invoicePoint(db: Database, invoiceId: string): Promise<string | null> {
  return (await poolReader(db).get<{ merchant_id: string }>('select merchant_id from invoice where id = ?', [invoiceId]))?.merchant_id ?? null;
}

export interface PaymentTransfer {
  id: string;
  paymentId: string;
  chain: string;
  network: string;
  txHash: string;
  logIndex: number;
  blockNumber: string;
  fromAddress: string | null;
  tokenAddress: string | null;
  symbol: string | null;
  /** Atomic units, decimal string. */
  amount: string;
  status: TransferStatus;
  note: string | null;
  /** When the indexer first recorded it. */
  createdAt: Date;
  /** When it was last re-classified (a reorg marks it REORGED then). */
  updatedAt: Date;
}

/** The observed transfers of these payments, in the order they were seen. */
export async function transfersOfPayments(db: Database, paymentIds: readonly string[]): Promise<PaymentTransfer[]> {
  if (paymentIds.length === 0) return [];
  const rows = await poolReader(db).all<{
    id: string;
    payment_id: string;
    chain: string;
    network: string;
    tx_hash: string;
    log_index: number | string;
    block_number: string;
    from_address: string | null;
    token_address: string | null;
    symbol: string | null;
    amount: string;
    status: TransferStatus;
    note: string | null;
    created_at: unknown;
    updated_at: unknown;
  }>(
    `select id, payment_id, chain, network, tx_hash, log_index, block_number, from_address, token_address, symbol, amount, status, note, created_at, updated_at
       from observed_transfer where payment_id in (${paymentIds.map(() => '?').join(', ')}) order by created_at, id`,
    [...paymentIds],
  );
  return rows.map((t) => ({
    id: t.id,
    paymentId: t.payment_id,
    chain: t.chain,
    network: t.network,
    txHash: t.tx_hash,
    logIndex: Number(t.log_index),
    blockNumber: t.block_number,
    fromAddress: t.from_address,
    tokenAddress: t.token_address,
    symbol: t.symbol,
    amount: t.amount,
    status: t.status,
    note: t.note,
    createdAt: dateOf(t.created_at),
    updatedAt: dateOf(t.updated_at),
  }));
}

export interface InvoiceEvent {
  id: string;
  type: string;
  paymentId: string | null;
  /** The event's `data` as delivered. */
  data: Record<string, unknown>;
  createdAt: Date;
}

export interface InvoiceDelivery {
  id: string;
  eventId: string;
  replayOf: string | null;
  state: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  createdAt: Date;
}

export interface InvoiceAttempt {
  deliveryId: string;
  attemptNumber: number | null;
  url: string | null;
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/**
 * Every event recorded for the invoice (invoice.* and its payments' payment.*: all carry the
 * invoice id), whether or not a webhook was sent, with the deliveries and their attempts.
 */
export async function eventsOfInvoice(db: Database, invoiceId: string): Promise<{ events: InvoiceEvent[]; deliveries: InvoiceDelivery[]; attempts: InvoiceAttempt[] }> {
  const r = poolReader(db);
  const events = await r.all<{ id: string; type: string; payment_id: string | null; payload: string; created_at: unknown }>(
    'select id, type, payment_id, payload, created_at from webhook_event where invoice_id = ? order by created_at, id',
    [invoiceId],
  );
  if (events.length === 0) return { events: [], deliveries: [], attempts: [] };
  const deliveries = await r.all<{ id: string; event_id: string; replay_of: string | null; state: DeliveryStatus; attempt_count: number | string; next_attempt_at: unknown; created_at: unknown }>(
    `select id, event_id, replay_of, state, attempt_count, next_attempt_at, created_at from webhook_delivery
      where event_id in (${events.map(() => '?').join(', ')}) order by created_at, id`,
    events.map((e) => e.id),
  );
  const attempts = deliveries.length
    ? await r.all<{ delivery_id: string; attempt_number: number | string | null; url: string | null; attempted_at: unknown; status_code: number | string | null; duration_ms: number | string; error: string | null }>(
        `select delivery_id, attempt_number, url, attempted_at, status_code, duration_ms, error from webhook_attempt
          where delivery_id in (${deliveries.map(() => '?').join(', ')}) order by attempted_at, id`,
        deliveries.map((d) => d.id),
      )
    : [];
  return {
    events: events.map((e) => ({ id: e.id, type: e.type, paymentId: e.payment_id, data: (jsonOf<{ data?: Record<string, unknown> }>(e.payload)?.data ?? {}), createdAt: dateOf(e.created_at) })),
    deliveries: deliveries.map((d) => ({
      id: d.id,
      eventId: d.event_id,
      replayOf: d.replay_of,
      state: d.state,
      attemptCount: Number(d.attempt_count),
      nextAttemptAt: nullableDate(d.next_attempt_at),
      createdAt: dateOf(d.created_at),
    })),
    attempts: attempts.map((a) => ({
      deliveryId: a.delivery_id,
      attemptNumber: a.attempt_number === null ? null : Number(a.attempt_number),
      url: a.url,
      attemptedAt: dateOf(a.attempted_at),
      statusCode: a.status_code === null ? null : Number(a.status_code),
      durationMs: Number(a.duration_ms),
      error: a.error,
    })),
  };
}

/** The refunds of these payments, each with its state (src/store/refunds.ts). */
export async function refundsOfPayments(db: Database, paymentIds: readonly string[]): Promise<RefundRow[]> {
  const r = poolReader(db);
  return (await Promise.all(paymentIds.map((id) => refundsOfPayment(r, id)))).flat();
}
