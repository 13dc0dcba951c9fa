import type { InvoiceStatus, PaymentStatus } from './lifecycle.ts';
import { formatUnits } from './money.ts';
import type { PaymentMethod, PaymentType } from './payment-methods.ts';
import type * as Wire from '../sdk/wire.ts';

// The fields the views read, as plain shapes: the stored entities satisfy them, and the domain
// depends on nothing in src/store.
type Nullable<T> = T | null | undefined;

export interface InvoiceRecord {
  id: string;
  referenceId: string;
  orderId: string;
  description: string | null;
  amount: string;
  currency: string;
  status: InvoiceStatus;
  customerEmail?: Nullable<string>;
  customerName?: Nullable<string>;
  /** JSON objects, never null (the columns are NOT NULL). */
  customerMetadata: Record<string, unknown>;
  metadata: Record<string, unknown>;
  returnUrl?: Nullable<string>;
  cancelUrl?: Nullable<string>;
  expiresAt: Date;
  viewedAt?: Nullable<Date>;
  paidAt?: Nullable<Date>;
  cancelledAt?: Nullable<Date>;
  createdAt: Date;
}

export interface PaymentRecord {
  id: string;
  referenceId: string;
  status: PaymentStatus;
  blockchain: string;
  network: string;
  isTestnet: boolean;
  cryptoCurrency: string;
  amount: string;
  expectedAmount: string;
  receivedAmount: string;
  address: string;
  confirmations: number;
  requiredConfirmations: number;
  transactionHash?: Nullable<string>;
  expiresAt: Date;
  createdAt: Date;
  completedAt?: Nullable<Date>;
  paymentType: string;
  method: string;
  metadata: Record<string, unknown>;
}

/**
 * An invoice as the buyer's surface (checkout API, hosted page) and the checkout see it, with its
 * merchant's name and choices (src/store/invoices.ts InvoiceSnapshot extends it).
 */
export interface BuyerInvoice {
  id: string;
  referenceId: string;
  amount: string;
  currency: string;
  description: string;
  status: InvoiceStatus;
  customerEmail: string | null;
  customerName: string | null;
  returnUrl: string | null;
  cancelUrl: string | null;
  expiresAt: Date;
  viewedAt: Date | null;
  paidAt: Date | null;
  merchant: { id: string; name: string; acceptedChains: string[] | null; acceptedCurrencies: Record<string, string[]> | null };
}

/** What a payment asks for and where: fixed when it is opened. */
export interface PaymentTerms {
  paymentType: PaymentType;
  method: PaymentMethod;
  blockchain: string;
  network: string;
  isTestnet: boolean;
  cryptoCurrency: string;
  decimals: number;
  tokenAddress: string | null;
  amount: string;
  requiredConfirmations: number;
}

/** A payment as the buyer's surface shows it (status poll, checkout answer), as a plain object. */
export interface BuyerPayment extends PaymentTerms {
  id: string;
  referenceId: string;
  status: PaymentStatus;
  address: string;
  confirmations: number;
  transactionHash: string | null;
  contractAddress: string | null;
  externalId: string | null;
  externalIdUuid: string | null;
  expiresAt: Date;
  createdAt: Date;
  completedAt: Date | null;
}

type Invoice = InvoiceRecord;
type Payment = PaymentRecord;

// Wire shapes of the spec's resources, typed with the one definition the SDK returns too
// (src/sdk/wire.ts). Timestamps are ISO 8601 UTC with milliseconds.

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

export function invoiceView(inv: Invoice): Wire.Invoice {
  return {
    id: inv.id,
    referenceId: inv.referenceId,
    orderId: inv.orderId,
    description: inv.description,
    amount: inv.amount,
    currency: inv.currency,
    status: inv.status,
    customerEmail: inv.customerEmail ?? null,
    customerName: inv.customerName ?? null,
    customerMetadata: inv.customerMetadata,
    metadata: inv.metadata,
    returnUrl: inv.returnUrl ?? null,
    cancelUrl: inv.cancelUrl ?? null,
    expiresAt: iso(inv.expiresAt)!,
    viewedAt: iso(inv.viewedAt),
    paidAt: iso(inv.paidAt),
    cancelledAt: iso(inv.cancelledAt),
    createdAt: iso(inv.createdAt)!,
  };
}

/** Element of invoice.payments: the crypto symbol is named `currency` here (spec). */
export function paymentInInvoiceView(p: Payment): Wire.PaymentInInvoice {
  return {
    id: p.id,
    referenceId: p.referenceId,
    status: p.status,
    blockchain: p.blockchain,
    currency: p.cryptoCurrency,
    amount: p.amount,
    receivedAmount: p.receivedAmount,
    address: p.address,
    createdAt: iso(p.createdAt)!,
  };
}

/** Payment list/get output. `invoice` must be loaded (or at least its stub fields). */
export function paymentView(p: Payment, invoice: Pick<Invoice, 'id' | 'referenceId' | 'orderId' | 'status'>): Wire.Payment {
  return {
    id: p.id,
    referenceId: p.referenceId,
    status: p.status,
    blockchain: p.blockchain,
    network: p.network,
    isTestnet: p.isTestnet,
    cryptoCurrency: p.cryptoCurrency,
    amount: p.amount,
    expectedAmount: p.expectedAmount,
    receivedAmount: p.receivedAmount,
    address: p.address,
    confirmations: p.confirmations,
    requiredConfirmations: p.requiredConfirmations,
    transactionHash: p.transactionHash ?? null,
    expiresAt: iso(p.expiresAt)!,
    createdAt: iso(p.createdAt)!,
    completedAt: iso(p.completedAt),
    paymentType: p.paymentType,
    method: p.method,
    metadata: p.metadata,
    invoice: { id: invoice.id, referenceId: invoice.referenceId, orderId: invoice.orderId, status: invoice.status },
  };
}

export function paymentStatusView(p: Payment): Wire.PaymentStatus {
  return {
    id: p.id,
    referenceId: p.referenceId,
    status: p.status,
    confirmations: p.confirmations,
    requiredConfirmations: p.requiredConfirmations,
    expiresAt: iso(p.expiresAt)!,
    completedAt: iso(p.completedAt),
  };
}

export type PaymentWire = Wire.Payment;

/** `data` of the signed POST /api/v1/invoices/{id}/checkout: the claimed invoice and the opened payment. */
export function gatewayCheckoutView(invoice: Pick<Invoice, 'id' | 'referenceId' | 'status' | 'amount' | 'currency' | 'expiresAt'>, payment: BuyerPayment): Wire.CheckoutResult {
  return {
    invoice: {
      id: invoice.id,
      referenceId: invoice.referenceId,
      status: invoice.status,
      amount: invoice.amount,
      currency: invoice.currency,
      expiresAt: invoice.expiresAt.toISOString(),
    },
    payment: {
      id: payment.id,
      referenceId: payment.referenceId,
      paymentAddress: payment.address,
      amount: payment.amount,
      blockchain: payment.blockchain,
      cryptoCurrency: payment.cryptoCurrency,
      status: payment.status,
      expiresAt: payment.expiresAt.toISOString(),
      createdAt: payment.createdAt.toISOString(),
      network: payment.network,
      isTestnet: payment.isTestnet,
      decimals: payment.decimals,
      requiredConfirmations: payment.requiredConfirmations,
    },
  };
}

/** `data` of payment.* webhook events: the gateway Payment plus the spec's snake_case amounts. */
export function paymentEventData(p: Payment, invoice: Pick<Invoice, 'id' | 'referenceId' | 'orderId' | 'status'>, amountDifference: string) {
  return {
    payment: {
      ...paymentView(p, invoice),
      amount: p.amount,
      received_amount: p.receivedAmount,
      expected_amount: p.expectedAmount,
      amount_difference: amountDifference,
      amountDifference,
    },
  };
}

/** The fields of a refund its view reads (src/store/refunds.ts RefundRow satisfies it). */
export interface RefundFacts {
  id: string;
  state: 'PLANNED' | 'PENDING' | 'CONFIRMED' | 'FAILED' | 'CANCELLED' | 'EXPIRED';
  symbol: string;
  decimals: number;
  /** Atomic units. */
  amount: string;
  toAddress: string;
  fromAddress: string;
  fromKind: 'deposit' | 'wallet';
  txid: string | null;
  /** Native atomic units. */
  fee: string;
  createdAt: Date;
  finalAt: Date | null;
}

/**
 * One entry of a payment's `refunds` (our addition to GET /api/v1/payments/{id}, docs/refunds.md):
 * amounts in coin units as the payment's own, the fee in the chain's native coin.
 */
export function refundView(r: RefundFacts, native: { symbol: string; decimals: number }): Wire.Refund {
  return {
    id: r.id,
    status: r.state,
    amount: formatUnits(BigInt(r.amount), r.decimals),
    cryptoCurrency: r.symbol,
    address: r.toAddress,
    fromAddress: r.fromAddress,
    from: r.fromKind,
    transactionHash: r.txid,
    fee: formatUnits(BigInt(r.fee), native.decimals),
    feeCurrency: native.symbol,
    createdAt: iso(r.createdAt)!,
    confirmedAt: iso(r.finalAt),
  };
}
