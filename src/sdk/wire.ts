// The wire views of the merchant gateway (/api/v1): the shape of each answer's `data`, one
// definition for both sides. The server's views are typed with them (src/domain/views.ts,
// src/app/merchant-reads.ts), so a field the server adds or renames fails its compile until it is
// here too; the SDK's client returns them. Types only, importing nothing: the SDK stays a folder of
// files a merchant copies, and the server gains no dependency on the client. They are the same as
// the OpenAPI document's response schemas (GET /api/v1/openapi.json); test/integration/sdk-client.test.ts
// holds the two to each other.

export type InvoiceStatusName = 'DRAFT' | 'OPEN' | 'PAYMENT_PENDING' | 'PAID' | 'EXPIRED' | 'CANCELLED';
export type PaymentStatusName = 'PENDING' | 'PROCESSING' | 'CONFIRMING' | 'COMPLETED' | 'FAILED' | 'EXPIRED' | 'REFUNDED';

export interface Invoice {
  id: string;
  referenceId: string;
  orderId: string;
  description: string | null;
  /** Minor units of the fiat currency. */
  amount: string;
  currency: string;
  status: InvoiceStatusName;
  customerEmail: string | null;
  customerName: string | null;
  customerMetadata: Record<string, unknown>;
  metadata: Record<string, unknown>;
  returnUrl: string | null;
  cancelUrl: string | null;
  expiresAt: string;
  viewedAt: string | null;
  paidAt: string | null;
  cancelledAt: string | null;
  createdAt: string;
}

/** An element of `payments` of GET /invoices/{id}: the crypto symbol is named `currency` here. */
export interface PaymentInInvoice {
  id: string;
  referenceId: string;
  status: PaymentStatusName;
  blockchain: string;
  currency: string;
  amount: string;
  receivedAmount: string;
  address: string;
  createdAt: string;
}

export interface InvoiceWithPayments extends Invoice {
  payments: PaymentInInvoice[];
}

/** GET /invoices/{id}/status: flat; `paymentId` is the latest payment's id (null before a checkout). */
export interface InvoiceStatus {
  id: string;
  referenceId: string;
  status: InvoiceStatusName;
  paymentId: string | null;
  paidAt: string | null;
  expiresAt: string;
}

/** POST /invoices/{id}/checkout. */
export interface CheckoutResult {
  invoice: { id: string; referenceId: string; status: InvoiceStatusName; amount: string; currency: string; expiresAt: string };
  payment: {
    id: string;
    referenceId: string;
    paymentAddress: string;
    amount: string;
    blockchain: string;
    cryptoCurrency: string;
    status: PaymentStatusName;
    expiresAt: string;
    createdAt: string;
    network: string;
    isTestnet: boolean;
    decimals: number;
    requiredConfirmations: number;
  };
}

export interface Payment {
  id: string;
  referenceId: string;
  status: PaymentStatusName;
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
  transactionHash: string | null;
  expiresAt: string;
  createdAt: string;
  completedAt: string | null;
  paymentType: string;
  method: string;
  metadata: Record<string, unknown>;
  invoice: { id: string; referenceId: string; orderId: string; status: InvoiceStatusName };
}

/** One refund of a payment (docs/refunds.md#on-the-api). */
export interface Refund {
  id: string;
  status: 'PLANNED' | 'PENDING' | 'CONFIRMED' | 'FAILED' | 'CANCELLED' | 'EXPIRED';
  amount: string;
  cryptoCurrency: string;
  address: string;
  fromAddress: string;
  from: 'deposit' | 'wallet';
  transactionHash: string | null;
  fee: string;
  feeCurrency: string;
  createdAt: string;
  confirmedAt: string | null;
}

/** `paymentRefunds`: GET /api/v1/payments/{id}/refunds, oldest first. */
export interface RefundList {
  items: Refund[];
}

export interface PaymentList {
  items: Payment[];
  pagination: { total: number; page: number; limit: number; hasMore: boolean };
}

export interface PaymentStatus {
  id: string;
  referenceId: string;
  status: PaymentStatusName;
  confirmations: number;
  requiredConfirmations: number;
  expiresAt: string;
  completedAt: string | null;
}
