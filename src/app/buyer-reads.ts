import type { AvailableCurrencies } from '../chains/registry.ts';
import { GatewayError } from '../domain/errors.ts';
import { fiatExponent } from '../domain/fiat-currencies.ts';
import { formatUnits, parseUnits } from '../domain/money.ts';
import { atomicToMinor, type PricingRecord } from '../domain/pricing.ts';
import { type Settlement, settlementOf } from '../domain/settlement.ts';
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
  if (p.invoiceId !== invoiceId) return null;
  return { paymentType: p.paymentType, blockchain: p.blockchain, isTestnet: p.isTestnet, address: p.address, amount: p.amount, decimals: p.decimals, tokenAddress: p.tokenAddress ?? null, expiresAt: p.expiresAt };
}

/** What the hosted page tells the buyer beyond the status poll: the price behind the amount and, once settled, how it compares. */
export interface PaymentDetails {
  status: string;
  cryptoCurrency: string;
  decimals: number;
  /** Contract, mint or jetton master; null for the native coin. */
  tokenAddress: string | null;
  amount: string;
  expectedAmount: string;
  receivedAmount: string;
  /** On COMPLETED (and REFUNDED) only: received against expected. */
  settlement: Settlement | null;
  /** The rate the amount was priced at (payment metadata.pricing); null under verbatim pricing. */
  pricing: { fiat: string; rate: string; source: string | null; at: string | null; exponent: number; amountMinor: string; receivedMinor: string } | null;
}

/** A payment of the invoice with its pricing and settlement (hosted page); null when the payment is another invoice's. */
export async function paymentDetailsOfInvoice(deps: DaemonDeps, invoiceId: string, paymentId: string): Promise<PaymentDetails | null> {
  const p = await loadPayment(deps.common.db, paymentId, null);
  if (p.invoiceId !== invoiceId) return null;
  return detailsOf(p);
}

/** The settled payment of a PAID invoice (its latest), for the page that says so; null when there is none. */
export async function settledPaymentOfInvoice(deps: DaemonDeps, invoiceId: string): Promise<PaymentDetails | null> {
  const p = await latestPayment(deps.common.db, invoiceId);
  return p ? detailsOf(p) : null;
}

type DetailsSource = Pick<BuyerPayment, 'status' | 'cryptoCurrency' | 'decimals' | 'amount'> & { tokenAddress?: string | null; expectedAmount: string; receivedAmount: string; metadata: unknown };

function detailsOf(p: DetailsSource): PaymentDetails {
  const settled = p.status === 'COMPLETED' || p.status === 'REFUNDED';
  const pricing = (p.metadata as { pricing?: Partial<PricingRecord> } | null)?.pricing;
  let priced: PaymentDetails['pricing'] = null;
  const exponent = pricing?.fiat ? fiatExponent(pricing.fiat) : undefined;
  if (pricing?.mode === 'convert' && pricing.rate && pricing.fiat && exponent !== undefined) {
    try {
      const minor = (amount: string) => atomicToMinor(parseUnits(amount, p.decimals), p.decimals, pricing.rate!, exponent).toString();
      priced = { fiat: pricing.fiat, rate: pricing.rate, source: pricing.source ?? null, at: pricing.at ?? null, exponent, amountMinor: minor(p.amount), receivedMinor: minor(p.receivedAmount) };
    } catch {
      priced = null;
    }
  }
  return {
    status: p.status,
    cryptoCurrency: p.cryptoCurrency,
    decimals: p.decimals,
    tokenAddress: p.tokenAddress ?? null,
    amount: p.amount,
    expectedAmount: p.expectedAmount,
    receivedAmount: p.receivedAmount,
    settlement: settled ? settlementOf(p.expectedAmount, p.receivedAmount, p.decimals) : null,
    pricing: priced,
  };
}

/** Fiat minor units in major units as a decimal string (`2450`, 2 -> `24.50`). */
export function minorToMajor(minor: string, exponent: number): string {
  const text = formatUnits(BigInt(minor), exponent);
  const [whole, frac = ''] = text.split('.');
  return exponent === 0 ? whole! : `${whole}.${frac.padEnd(exponent, '0')}`;
}
