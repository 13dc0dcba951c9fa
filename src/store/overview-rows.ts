import type { PaymentStatus } from '../domain/lifecycle.ts';
import type { SqlValue } from './executor.ts';
import type { Database } from './orm.ts';
import { boolOf, dateOf, jsonOf, nullableDate, poolReader } from './raw-sql.ts';

// The reads of the dashboard's overview (src/app/dashboard-overview.ts), scoped to the points a user
// may read. Amounts come back as the decimal strings stored; they are added up as bigint by the use
// case, never by SQL (whose sum of a text column would be a float or an error).

const inList = (ids: readonly string[]) => ids.map(() => '?').join(', ');

/**
 * A payment completes after it is created: within its window (30 minutes at most) plus its
 * confirmations, or later when a reorg or a slow chain delays it. This bound lets a read of
 * completions use the payment(merchant, created_at) index instead of every payment of a point.
 */
const COMPLETION_LEAD_MS = 7 * 24 * 3_600_000;

export interface ReceivedRow {
  paymentId: string;
  blockchain: string;
  network: string;
  isTestnet: boolean;
  cryptoCurrency: string;
  decimals: number;
  receivedAmount: string;
  /** metadata.pricing: the rate the payment was priced at (null rate: verbatim pricing). */
  pricing: { rate: string | null; fiat: string } | null;
  completedAt: Date;
}

/** Payments of the points that completed in [from, to), whatever happened to them since (a refund). */
export async function completedBetween(db: Database, pointIds: readonly string[], from: Date, to: Date): Promise<ReceivedRow[]> {
  if (pointIds.length === 0) return [];
  const rows = await poolReader(db).all<{
    id: string;
    blockchain: string;
    network: string;
    is_testnet: unknown;
    crypto_currency: string;
    decimals: number | string;
    received_amount: string;
    metadata: unknown;
    completed_at: unknown;
  }>(
    `select id, blockchain, network, is_testnet, crypto_currency, decimals, received_amount, metadata, completed_at from payment
      where merchant_id in (${inList(pointIds)}) and created_at >= ? and completed_at >= ? and completed_at < ?`,
    [...pointIds, new Date(from.getTime() - COMPLETION_LEAD_MS), from, to],
  );
  return rows.map((r) => ({
    paymentId: r.id,
    blockchain: r.blockchain,
    network: r.network,
    isTestnet: boolOf(r.is_testnet),
    cryptoCurrency: r.crypto_currency,
    decimals: Number(r.decimals),
    receivedAmount: r.received_amount,
    pricing: pricingOf(r.metadata),
    completedAt: dateOf(r.completed_at),
  }));
}

function pricingOf(metadata: unknown): ReceivedRow['pricing'] {
  const pricing = jsonOf<{ pricing?: { rate?: unknown; fiat?: unknown } }>(metadata)?.pricing;
  if (!pricing || typeof pricing.fiat !== 'string') return null;
  return { rate: typeof pricing.rate === 'string' ? pricing.rate : null, fiat: pricing.fiat };
}

/** Invoices a buyer can still pay or is paying: OPEN within their time, or PAYMENT_PENDING. */
export async function openInvoiceCount(db: Database, pointIds: readonly string[], now: Date): Promise<number> {
  if (pointIds.length === 0) return 0;
  const row = await poolReader(db).get<{ n: number | string }>(
    `select count(*) as n from invoice where merchant_id in (${inList(pointIds)}) and (status = 'PAYMENT_PENDING' or (status = 'OPEN' and expires_at > ?))`,
    [...pointIds, now],
  );
  return Number(row?.n ?? 0);
}

export interface AttentionPayment {
  id: string;
  referenceId: string;
  invoiceId: string;
  invoiceReferenceId: string;
  orderId: string;
  merchantId: string;
  status: PaymentStatus;
  blockchain: string;
  network: string;
  isTestnet: boolean;
  cryptoCurrency: string;
  decimals: number;
  expectedAmount: string;
  receivedAmount: string;
  confirmations: number;
  requiredConfirmations: number;
  pricing: ReceivedRow['pricing'];
  completedAt: Date | null;
  createdAt: Date;
  /** In flight: when the indexer first recorded a credited transfer of it. */
  creditedSince: Date | null;
}

interface AttentionRaw {
  id: string;
  reference_id: string;
  invoice_id: string;
  invoice_reference_id: string;
  order_id: string;
  merchant_id: string;
  status: PaymentStatus;
  blockchain: string;
  network: string;
  is_testnet: unknown;
  crypto_currency: string;
  decimals: number | string;
  expected_amount: string;
  received_amount: string;
  confirmations: number | string;
  required_confirmations: number | string;
  metadata: unknown;
  completed_at: unknown;
  created_at: unknown;
  credited_since?: unknown;
}

const ATTENTION_COLUMNS = `p.id, p.reference_id, p.invoice_id, i.reference_id as invoice_reference_id, i.order_id, p.merchant_id, p.status, p.blockchain, p.network,
  p.is_testnet, p.crypto_currency, p.decimals, p.expected_amount, p.received_amount, p.confirmations, p.required_confirmations, p.metadata, p.completed_at, p.created_at`;

function attentionOf(r: AttentionRaw): AttentionPayment {
  return {
    id: r.id,
    referenceId: r.reference_id,
    invoiceId: r.invoice_id,
    invoiceReferenceId: r.invoice_reference_id,
    orderId: r.order_id,
    merchantId: r.merchant_id,
    status: r.status,
    blockchain: r.blockchain,
    network: r.network,
    isTestnet: boolOf(r.is_testnet),
    cryptoCurrency: r.crypto_currency,
    decimals: Number(r.decimals),
    expectedAmount: r.expected_amount,
    receivedAmount: r.received_amount,
    confirmations: Number(r.confirmations),
    requiredConfirmations: Number(r.required_confirmations),
    pricing: pricingOf(r.metadata),
    completedAt: nullableDate(r.completed_at),
    createdAt: dateOf(r.created_at),
    creditedSince: nullableDate(r.credited_since),
  };
}

/**
 * COMPLETED payments of the points, completed since `since`, whose received amount is not written
 * as the expected one (the caller compares them as amounts): newest first, at most `limit`.
 */
export async function completedWithDifference(db: Database, pointIds: readonly string[], since: Date, limit: number): Promise<AttentionPayment[]> {
  if (pointIds.length === 0) return [];
  const rows = await poolReader(db).all<AttentionRaw>(
    `select ${ATTENTION_COLUMNS} from payment p join invoice i on i.id = p.invoice_id
      where p.merchant_id in (${inList(pointIds)}) and p.created_at >= ? and p.status = 'COMPLETED' and p.completed_at >= ? and p.received_amount <> p.expected_amount
      order by p.completed_at desc, p.id desc limit ?`,
    [...pointIds, new Date(since.getTime() - COMPLETION_LEAD_MS), since, limit],
  );
  return rows.map(attentionOf);
}

/** Payments of the points with money in flight (PROCESSING, CONFIRMING), with when their first credit was seen. */
export async function inFlightPayments(db: Database, pointIds: readonly string[]): Promise<AttentionPayment[]> {
  if (pointIds.length === 0) return [];
  const rows = await poolReader(db).all<AttentionRaw>(
    `select ${ATTENTION_COLUMNS}, (select min(t.created_at) from observed_transfer t where t.payment_id = p.id and t.status = 'CREDITED') as credited_since
       from payment p join invoice i on i.id = p.invoice_id
      where p.status in ('PROCESSING', 'CONFIRMING') and p.merchant_id in (${inList(pointIds)})
      order by p.created_at, p.id`,
    [...pointIds],
  );
  return rows.map(attentionOf);
}

export interface LateFundsRow {
  eventId: string;
  paymentId: string;
  invoiceId: string;
  merchantId: string;
  /** The event's data: the payment and the transfer (txHash, amount in coin units, reason). */
  data: Record<string, unknown>;
  createdAt: Date;
}

/** payment.late_funds events of the points since a time, newest first. */
export async function lateFundsSince(db: Database, pointIds: readonly string[], since: Date, limit: number): Promise<LateFundsRow[]> {
  if (pointIds.length === 0) return [];
  const rows = await poolReader(db).all<{ id: string; payment_id: string | null; invoice_id: string | null; merchant_id: string; payload: string; created_at: unknown }>(
    `select id, payment_id, invoice_id, merchant_id, payload, created_at from webhook_event
      where merchant_id in (${inList(pointIds)}) and type = 'payment.late_funds' and created_at >= ?
      order by created_at desc, id desc limit ?`,
    [...pointIds, since, limit],
  );
  return rows
    .filter((r) => r.payment_id !== null && r.invoice_id !== null)
    .map((r) => ({ eventId: r.id, paymentId: r.payment_id!, invoiceId: r.invoice_id!, merchantId: r.merchant_id, data: jsonOf<{ data?: Record<string, unknown> }>(r.payload)?.data ?? {}, createdAt: dateOf(r.created_at) }));
}

export interface EndpointAttempt {
  attemptedAt: Date;
  url: string | null;
  statusCode: number | null;
  error: string | null;
}

/** The newest events of a point whose attempts are looked at: a bound on the read, however long the point's history. */
const RECENT_EVENTS = 100;

/** A point's newest webhook attempts (of its newest events), newest first. */
export async function latestAttempts(db: Database, pointId: string, limit: number): Promise<EndpointAttempt[]> {
  const params: SqlValue[] = [pointId, RECENT_EVENTS, limit];
  const rows = await poolReader(db).all<{ attempted_at: unknown; url: string | null; status_code: number | string | null; error: string | null }>(
    `select a.attempted_at, a.url, a.status_code, a.error from webhook_attempt a join webhook_delivery d on d.id = a.delivery_id
      where d.event_id in (select e.id from webhook_event e where e.merchant_id = ? order by e.created_at desc limit ?)
      order by a.attempted_at desc, a.id desc limit ?`,
    params,
  );
  return rows.map((a) => ({ attemptedAt: dateOf(a.attempted_at), url: a.url, statusCode: a.status_code === null ? null : Number(a.status_code), error: a.error }));
}
