import type { AvailableCurrencies } from '../chains/registry.ts';
import { GatewayError } from '../domain/errors.ts';
import type { BuyerInvoice, BuyerPayment, InvoiceRecord } from '../domain/views.ts';
import { latestPayment, loadInvoice, markViewed, readPublicInvoice } from '../store/invoices.ts';
import { loadPayment, readBuyerPayment } from '../store/payments.ts';
import { availabilityOf } from './availability.ts';
import type { DaemonDeps } from './deps.ts';

// The buyer's reads (checkout API and hosted page): no key, the invoice id is the capability. Each
// shows what the expiry rules make of the row now.

/** What the hosted page shows of an invoice (any merchant's); INVOICE_NOT_FOUND when there is none. */
export function buyerInvoice(deps: DaemonDeps, invoiceId: string): Promise<BuyerInvoice> {
  return readPublicInvoice(deps.common.db, invoiceId);
}

/**
 * GET /checkout/api/v1/invoices/{id}: the invoice, refused once expired or cancelled, and what its
 * buyer is offered now (docs/checkout.md#what-is-offered). The first read marks it viewed.
 */
export async function readCheckoutInvoice(deps: DaemonDeps, invoiceId: string): Promise<{ invoice: BuyerInvoice; offered: AvailableCurrencies }> {
  const { db } = deps.common;
  const invoice = await readPublicInvoice(db, invoiceId);
  if (invoice.status === 'EXPIRED') throw new GatewayError('INVOICE_EXPIRED', 'Invoice has expired');
  if (invoice.status === 'CANCELLED') throw new GatewayError('INVOICE_CANCELLED', 'Invoice was cancelled');
  if (!invoice.viewedAt) await markViewed(db, invoice.id);
  const { acceptedChains, acceptedCurrencies } = invoice.merchant;
  const offered = await availabilityOf(deps).offered({ acceptedChains, acceptedCurrencies }, invoice.currency);
  return { invoice, offered };
}

/** GET /checkout/api/v1/invoices/{id}/status: the invoice and its latest payment, in every state. */
export async function buyerInvoiceStatus(deps: DaemonDeps, invoiceId: string): Promise<{ invoice: Pick<InvoiceRecord, 'status' | 'paidAt'>; latest: { id: string } | null }> {
  const { db } = deps.common;
  const invoice = await loadInvoice(db, invoiceId, null);
  return { invoice, latest: await latestPayment(db, invoice.id) };
}

/** GET /checkout/api/v1/payments/{id}/status: any merchant's payment (PAYMENT_NOT_FOUND when none). */
export function buyerPayment(deps: DaemonDeps, paymentId: string): Promise<BuyerPayment> {
  return readBuyerPayment(deps.common.db, paymentId);
}

/** What the hosted page's QR code is made of. */
export type QrPayment = Pick<BuyerPayment, 'paymentType' | 'blockchain' | 'isTestnet' | 'address' | 'amount' | 'decimals' | 'tokenAddress' | 'expiresAt'>;

/** A payment of the invoice (the hosted page's QR code); null when the payment is another invoice's. */
export async function paymentOfInvoice(deps: DaemonDeps, invoiceId: string, paymentId: string): Promise<QrPayment | null> {
  const p = await loadPayment(deps.common.db, paymentId, null);
  if (p.invoice.id !== invoiceId) return null;
  return { paymentType: p.paymentType, blockchain: p.blockchain, isTestnet: p.isTestnet, address: p.address, amount: p.amount, decimals: p.decimals, tokenAddress: p.tokenAddress ?? null, expiresAt: p.expiresAt };
}
