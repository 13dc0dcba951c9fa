import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import type { ChainSlug } from '../chains/slugs.ts';
import type { PaymentStatus } from '../domain/lifecycle.ts';
import { invoiceView, paymentInInvoiceView, paymentStatusView, paymentView, refundView } from '../domain/views.ts';
import { invoicePayments, latestPayment, loadInvoice } from '../store/invoices.ts';
import { listPayments, loadPayment, loadPaymentWithInvoice } from '../store/payments.ts';
import { poolReader } from '../store/raw-sql.ts';
import { refundsOfPayment } from '../store/refunds.ts';
import type { InvoiceStatus, InvoiceWithPayments, PaymentList, RefundList } from '../sdk/wire.ts';
import type { DaemonDeps } from './deps.ts';

// The signed gateway's reads, each scoped to the merchant point of the request's key and shown
// after the expiry rules ran.

/** GET /api/v1/invoices/{id}: the invoice and its payments, oldest first. */
export async function merchantInvoice(deps: DaemonDeps, merchantId: string, invoiceId: string): Promise<InvoiceWithPayments> {
  const { db } = deps.common;
  const invoice = await loadInvoice(db, invoiceId, merchantId);
  const payments = await invoicePayments(db, invoice.id);
  return { ...invoiceView(invoice), payments: payments.map(paymentInInvoiceView) };
}

/** GET /api/v1/invoices/{id}/status. */
export async function merchantInvoiceStatus(deps: DaemonDeps, merchantId: string, invoiceId: string): Promise<InvoiceStatus> {
  const { db } = deps.common;
  const invoice = await loadInvoice(db, invoiceId, merchantId);
  const latest = await latestPayment(db, invoice.id);
  return {
    id: invoice.id,
    referenceId: invoice.referenceId,
    status: invoice.status,
    paymentId: latest?.id ?? null,
    paidAt: invoice.paidAt?.toISOString() ?? null,
    expiresAt: invoice.expiresAt.toISOString(),
  };
}

/** The query of GET /api/v1/payments, validated (src/http/gateway/schemas.ts). */
export interface PaymentListQuery {
  status?: PaymentStatus | undefined;
  blockchain?: string | undefined;
  skip: number;
  take: number;
}

/** GET /api/v1/payments: newest first, with the spec's pagination. */
export async function merchantPayments(deps: DaemonDeps, merchantId: string, query: PaymentListQuery): Promise<PaymentList> {
  const { items, pagination } = await listPayments(deps.common.db, { merchantId, ...query });
  return { items: items.map((p) => paymentView(p, p.invoice)), pagination };
}

/** GET /api/v1/payments/{id}: the same shape as a list item (the specification's rule). */
export async function merchantPayment(deps: DaemonDeps, merchantId: string, paymentId: string) {
  const payment = await loadPaymentWithInvoice(deps.common.db, paymentId, merchantId);
  return paymentView(payment, payment.invoice);
}

/** GET /api/v1/payments/{id}/refunds: the payment's refunds, oldest first (docs/refunds.md#on-the-api). */
export async function merchantPaymentRefunds(deps: DaemonDeps, merchantId: string, paymentId: string): Promise<RefundList> {
  const { db } = deps.common;
  const payment = await loadPayment(db, paymentId, merchantId);
  const native = CHAIN_DEFAULTS[payment.blockchain as ChainSlug].native;
  return { items: (await refundsOfPayment(poolReader(db), payment.id)).map((r) => refundView(r, native)) };
}

/** GET /api/v1/payments/{id}/status. */
export async function merchantPaymentStatus(deps: DaemonDeps, merchantId: string, paymentId: string) {
  return paymentStatusView(await loadPayment(deps.common.db, paymentId, merchantId));
}
