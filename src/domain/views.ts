import type { InvoiceStatus, PaymentStatus } from './lifecycle.ts';
import { formatUnits } from './money.ts';

// The fields the views read, as plain shapes: the stored entities satisfy them, and the domain
// depends on nothing in src/store.
type Nullable<T> = T | null | undefined;

export interface InvoiceRecord {
  id: string;
  referenceId: string;
  orderId: string;
  description: Nullable<string>;
  amount: string;
  currency: string;
  status: InvoiceStatus;
  customerEmail?: Nullable<string>;
  customerName?: Nullable<string>;
  customerMetadata: unknown;
  metadata: unknown;
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

type Invoice = InvoiceRecord;
type Payment = PaymentRecord;

// Wire shapes of the spec's resources. Timestamps are ISO 8601 UTC with milliseconds.

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

export function invoiceView(inv: Invoice) {
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
export function paymentInInvoiceView(p: Payment) {
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
export function paymentView(p: Payment, invoice: Pick<Invoice, 'id' | 'referenceId' | 'orderId' | 'status'>) {
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

export function paymentStatusView(p: Payment) {
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

export type PaymentWire = ReturnType<typeof paymentView>;

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
  state: 'PLANNED' | 'PENDING' | 'CONFIRMED' | 'FAILED';
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
export function refundView(r: RefundFacts, native: { symbol: string; decimals: number }) {
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
