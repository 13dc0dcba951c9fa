import type { Database } from './orm.ts';
import { dateOf, jsonOf, poolReader } from './raw-sql.ts';
import { refundsBetween, type RefundRow } from './refunds.ts';

// The reads of `chaingate report` (docs/report.md): money in (completed payments, funds that came
// after a payment ended) and money out (final sweeps, confirmed refunds) between two times.

/** The payment a receipt is booked against, and how it was priced. */
interface ReceiptOf {
  paymentId: string;
  referenceId: string;
  merchantId: string;
  orderId: string;
  invoiceId: string;
  invoiceReference: string;
  /** The payment's status (a receipt of a payment) or the transfer's (late funds). */
  status: string;
  chain: string;
  network: string;
  symbol: string;
  decimals: number;
  pricing: { mode?: string; rate?: string | null; source?: string | null; fiat?: string; at?: string } | null;
}

export interface PaymentReceipt extends ReceiptOf {
  /** Coin units, decimal string, as the payment stores it. */
  receivedAmount: string;
  /** What the buyer was told to send, coin units (fiat minor units under verbatim pricing). */
  expectedAmount: string;
  address: string;
  txid: string | null;
  completedAt: Date;
  invoiceAmountMinor: string;
  invoiceCurrency: string;
}

export interface UncreditedReceipt extends ReceiptOf {
  transferId: string;
  /** Atomic units. */
  amount: string;
  address: string;
  txid: string;
  seenAt: Date;
}

export interface SweepMovement {
  planId: string;
  txKey: string;
  chain: string;
  network: string;
  txid: string;
  to: string;
  /** Per symbol, atomic. */
  moves: Record<string, string>;
  /** Per symbol moved, its decimals (from the plan). */
  decimals: Record<string, number>;
  /** Native atomic. */
  fee: string;
  finalAt: Date;
}

type Raw = Record<string, unknown>;

/** Rows of a statement over a time range (its two parameters), then the point's id when it has a third. */
function between(db: Database, sql: string, from: Date, to: Date, merchantId: string | null = null): Promise<Raw[]> {
  return poolReader(db).all<Raw>(sql, merchantId === null ? [from, to] : [from, to, merchantId]);
}

/** `and p.merchant_id = ?` when the report is of one point (a third parameter), else nothing. */
const ofPoint = (merchantId: string | null): string => (merchantId === null ? '' : ' and p.merchant_id = ?');

/** The payment side of a row that selects payment_id, reference_id, merchant_id, order_id, invoice_id, invoice_reference, status, blockchain, network, crypto_currency, decimals and metadata. */
function receiptOf(r: Raw): ReceiptOf {
  return {
    paymentId: String(r.payment_id),
    referenceId: String(r.reference_id),
    merchantId: String(r.merchant_id),
    orderId: String(r.order_id),
    invoiceId: String(r.invoice_id),
    invoiceReference: String(r.invoice_reference),
    status: String(r.status),
    chain: String(r.blockchain),
    network: String(r.network),
    symbol: String(r.crypto_currency),
    decimals: Number(r.decimals),
    pricing: jsonOf<{ pricing?: ReceiptOf['pricing'] }>(r.metadata)?.pricing ?? null,
  };
}

/** Payments completed between the two times (of one merchant point, when given). */
export async function paymentsCompleted(db: Database, from: Date, to: Date, merchantId: string | null = null): Promise<PaymentReceipt[]> {
  const rows = await between(
    db,
    `select p.id as payment_id, p.reference_id, p.merchant_id, p.status, p.blockchain, p.network, p.crypto_currency, p.decimals, p.received_amount, p.expected_amount, p.address,
            p.transaction_hash, p.metadata, p.completed_at, i.id as invoice_id, i.reference_id as invoice_reference, i.order_id, i.amount as invoice_amount, i.currency
       from payment p join invoice i on i.id = p.invoice_id
      where p.completed_at >= ? and p.completed_at < ?${ofPoint(merchantId)}
      order by p.completed_at, p.id`,
    from,
    to,
    merchantId,
  );
  return rows.map((r) => ({
    ...receiptOf(r),
    receivedAmount: String(r.received_amount),
    expectedAmount: String(r.expected_amount),
    address: String(r.address),
    txid: r.transaction_hash === null ? null : String(r.transaction_hash),
    completedAt: dateOf(r.completed_at),
    invoiceAmountMinor: String(r.invoice_amount),
    invoiceCurrency: String(r.currency),
  }));
}

/** Funds recorded against a payment after it ended (LATE, EXTRA): received, never credited (of one point, when given). */
export async function uncreditedReceipts(db: Database, from: Date, to: Date, merchantId: string | null = null): Promise<UncreditedReceipt[]> {
  const rows = await between(
    db,
    `select t.id, t.tx_hash, t.amount, t.to_address, t.created_at, t.status, p.id as payment_id, p.reference_id, p.merchant_id, p.blockchain, p.network,
            p.crypto_currency, p.decimals, p.metadata, i.order_id, i.id as invoice_id, i.reference_id as invoice_reference
       from observed_transfer t join payment p on p.id = t.payment_id join invoice i on i.id = p.invoice_id
      where t.status in ('LATE', 'EXTRA') and t.created_at >= ? and t.created_at < ?${ofPoint(merchantId)}
      order by t.created_at, t.id`,
    from,
    to,
    merchantId,
  );
  return rows.map((r) => ({
    ...receiptOf(r),
    transferId: String(r.id),
    amount: String(r.amount),
    address: String(r.to_address),
    txid: String(r.tx_hash),
    seenAt: dateOf(r.created_at),
  }));
}

/** Sweep (not refund) transactions that became final between the two times. */
export async function sweepsFinal(db: Database, from: Date, to: Date): Promise<SweepMovement[]> {
  const rows = await between(
    db,
    `select t.plan_id, t.tx_key, t.chain, t.network, t.txid, t.moves, t.fee, t.final_at, p.to_address, p.body
       from sweep_tx t join sweep_plan p on p.id = t.plan_id
      where p.kind = 'sweep' and t.status = 'FINAL' and t.final_at >= ? and t.final_at < ?
      order by t.final_at, t.plan_id, t.tx_key`,
    from,
    to,
  );
  return rows.map((r) => ({
    planId: String(r.plan_id),
    txKey: String(r.tx_key),
    chain: String(r.chain),
    network: String(r.network),
    txid: String(r.txid),
    to: String(r.to_address),
    moves: JSON.parse(String(r.moves)) as Record<string, string>,
    decimals: decimalsOf(String(r.body)),
    fee: String(r.fee),
    finalAt: dateOf(r.final_at),
  }));
}

function decimalsOf(body: string): Record<string, number> {
  const plan = JSON.parse(body) as { deposits?: { moves: { symbol: string; decimals: number }[] }[] };
  return Object.fromEntries((plan.deposits ?? []).flatMap((d) => d.moves.map((m) => [m.symbol, m.decimals])));
}

/** Refunds confirmed between the two times. */
export async function refundsConfirmed(db: Database, from: Date, to: Date): Promise<RefundRow[]> {
  return (await refundsBetween(db, new Date(0), to)).filter((r) => r.state === 'CONFIRMED' && r.finalAt !== null && r.finalAt >= from && r.finalAt < to);
}

/** What a refund row is booked against: its payment's references, invoice and the rate it was priced at. */
export interface RefundedPayment {
  paymentId: string;
  referenceId: string;
  merchantId: string;
  orderId: string;
  invoiceId: string;
  invoiceReference: string;
  invoiceAmountMinor: string;
  invoiceCurrency: string;
  pricing: ReceiptOf['pricing'];
}

/** The payments of these ids with their invoices (refund rows of the report). */
export async function paymentsOf(db: Database, ids: readonly string[]): Promise<Map<string, RefundedPayment>> {
  const out = new Map<string, RefundedPayment>();
  const unique = [...new Set(ids)];
  // In slices: both databases take a few hundred bound parameters in one statement without trouble.
  for (let i = 0; i < unique.length; i += 200) {
    const slice = unique.slice(i, i + 200);
    const rows = await poolReader(db).all<Raw>(
      `select p.id, p.reference_id, p.merchant_id, p.metadata, i.id as invoice_id, i.reference_id as invoice_reference, i.order_id, i.amount as invoice_amount, i.currency
         from payment p join invoice i on i.id = p.invoice_id
        where p.id in (${slice.map(() => '?').join(', ')})`,
      slice,
    );
    for (const r of rows) {
      out.set(String(r.id), {
        paymentId: String(r.id),
        referenceId: String(r.reference_id),
        merchantId: String(r.merchant_id),
        orderId: String(r.order_id),
        invoiceId: String(r.invoice_id),
        invoiceReference: String(r.invoice_reference),
        invoiceAmountMinor: String(r.invoice_amount),
        invoiceCurrency: String(r.currency),
        pricing: jsonOf<{ pricing?: ReceiptOf['pricing'] }>(r.metadata)?.pricing ?? null,
      });
    }
  }
  return out;
}
