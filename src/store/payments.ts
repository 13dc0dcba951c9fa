import { GatewayError } from '../domain/errors.ts';
import type { PaymentStatus } from '../domain/lifecycle.ts';
import type { BuyerPayment } from '../domain/views.ts';
import type { SqlValue } from './executor.ts';
import { applyExpiryTo, invoicesDue, readApplyingExpiry } from './expiry.ts';
import type { Database } from './orm.ts';
import { poolReader } from './raw-sql.ts';
import { invoiceOf, paymentOf, type InvoiceRow, type PaymentRow, type StoredInvoice, type StoredPayment } from './records.ts';

export interface ListPaymentsInput {
  merchantId: string;
  status?: PaymentStatus | undefined;
  blockchain?: string | undefined;
  skip: number;
  take: number;
}

/** A payment with the invoice it belongs to, as the merchant's views read them. */
export interface PaymentWithInvoice extends StoredPayment {
  invoice: StoredInvoice;
}

async function invoicesByIds(db: Database, ids: readonly string[]): Promise<Map<string, StoredInvoice>> {
  if (ids.length === 0) return new Map();
  const rows = await poolReader(db).all<InvoiceRow>(`select * from invoice where id in (${ids.map(() => '?').join(', ')})`, [...ids]);
  return new Map(rows.map((r) => [r.id, invoiceOf(r)]));
}

/**
 * Newest first; pagination per the spec: page = floor(skip/take)+1, hasMore = skip+take < total.
 * Lazy expiry for the list too: overdue PENDING payments of this point are expired first, all in
 * one write (not one per invoice), then the page and its invoices are read as plain records.
 */
export async function listPayments(db: Database, input: ListPaymentsInput, now = new Date()) {
  await applyExpiryTo(db, await invoicesDue(poolReader(db), { merchantId: input.merchantId }, now, 1000), now);
  let where = 'merchant_id = ?';
  const params: SqlValue[] = [input.merchantId];
  if (input.status) {
    where += ' and status = ?';
    params.push(input.status);
  }
  if (input.blockchain) {
    where += ' and blockchain = ?';
    params.push(input.blockchain);
  }
  const r = poolReader(db);
  const total = Number((await r.get<{ n: number | string }>(`select count(*) as n from payment where ${where}`, params))?.n ?? 0);
  const rows = await r.all<PaymentRow>(`select * from payment where ${where} order by created_at desc, id desc limit ? offset ?`, [...params, input.take, input.skip]);
  const payments = rows.map(paymentOf);
  const invoices = await invoicesByIds(db, [...new Set(payments.map((p) => p.invoiceId))]);
  return {
    items: payments.map((p): PaymentWithInvoice => ({ ...p, invoice: invoices.get(p.invoiceId)! })),
    pagination: {
      total,
      page: Math.floor(input.skip / input.take) + 1,
      limit: input.take,
      hasMore: input.skip + input.take < total,
    },
  };
}

// `due`: the expiry rules may change what this read shows, by the wall clock. The read shows this
// payment only, and the rules change a payment only when it is PENDING past its window (an OPEN
// invoice has no live payment; an invoice has one live payment at most), so one column of the row
// decides it: no join, no probe of the invoice's other payments (docs/performance.md).
const PAYMENT_SQL = `select p.*, case when p.status = 'PENDING' and p.expires_at <= ? then 1 else 0 end as due from payment p where p.id = ?`;
const PAYMENT_SCOPED_SQL = `${PAYMENT_SQL} and p.merchant_id = ?`;

function readPaymentRow(db: Database, paymentId: string, merchantId: string | null, now: Date): Promise<PaymentRow & { due: number | boolean }> {
  return readApplyingExpiry(
    db,
    (r) => r.get<PaymentRow & { due: number | boolean }>(merchantId ? PAYMENT_SCOPED_SQL : PAYMENT_SQL, merchantId ? [now, paymentId, merchantId] : [now, paymentId]),
    (row) => row.invoice_id,
    () => {
      throw new GatewayError('PAYMENT_NOT_FOUND', 'Payment not found');
    },
    now,
  );
}

/** One payment as a plain record after the expiry rules ran; scoped to a merchant point, or public when null. */
export async function loadPayment(db: Database, paymentId: string, merchantId: string | null, now = new Date()): Promise<StoredPayment> {
  return paymentOf(await readPaymentRow(db, paymentId, merchantId, now));
}

/** loadPayment with its invoice (the merchant's payment views). */
export async function loadPaymentWithInvoice(db: Database, paymentId: string, merchantId: string, now = new Date()): Promise<PaymentWithInvoice> {
  const payment = await loadPayment(db, paymentId, merchantId, now);
  const invoice = (await invoicesByIds(db, [payment.invoiceId])).get(payment.invoiceId)!;
  return { ...payment, invoice };
}

/** The buyer's poll of a payment: one bound statement, a plain object, what the expiry rules make of it now. */
export async function readBuyerPayment(db: Database, paymentId: string, now = new Date()): Promise<BuyerPayment> {
  const p = await loadPayment(db, paymentId, null, now);
  return {
    id: p.id,
    referenceId: p.referenceId,
    status: p.status,
    paymentType: p.paymentType,
    method: p.method,
    blockchain: p.blockchain,
    network: p.network,
    isTestnet: p.isTestnet,
    cryptoCurrency: p.cryptoCurrency,
    decimals: p.decimals,
    tokenAddress: p.tokenAddress,
    amount: p.amount,
    address: p.address,
    confirmations: p.confirmations,
    requiredConfirmations: p.requiredConfirmations,
    transactionHash: p.transactionHash,
    contractAddress: p.contractAddress,
    externalId: p.externalId,
    externalIdUuid: p.externalIdUuid,
    expiresAt: p.expiresAt,
    createdAt: p.createdAt,
    completedAt: p.completedAt,
  };
}
