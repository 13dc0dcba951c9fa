import { z } from 'zod';
import { PAYMENT_METHODS, PAYMENT_TYPES } from '../domain/payment-methods.ts';
import { INVOICE_STATUSES, PAYMENT_STATUSES } from '../domain/lifecycle.ts';
import type { invoiceView, paymentInInvoiceView, paymentStatusView, paymentView, refundView } from '../domain/views.ts';
import type { ConfirmResult } from '../app/confirm-payment.ts';
import type { checkoutPaymentView, invoiceStatusView, publicInvoiceView, publicPaymentStatusView } from './checkout/views.ts';

// The `data` of every success answer, as zod schemas: the OpenAPI documents' response schemas are
// generated from them (z.toJSONSchema), as the request schemas are from the validating ones.
// Where a route answers with a view function (src/domain/views.ts, checkout/views.ts), the type
// checks at the bottom of this file fail the build if the view and its schema ever differ in a
// field name or a field type; test/integration/openapi.test.ts and sdk-client.test.ts compare
// real answers of every route with the documents.

const iso = z.string().meta({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });
const isoOrNull = iso.nullable();
const invoiceStatus = z.enum(INVOICE_STATUSES);
const paymentStatus = z.enum(PAYMENT_STATUSES);
const jsonObject = z.record(z.string(), z.unknown());
const decimal = z.string().describe('a decimal string in the unit of the coin (never a float)');

export const invoiceData = z.strictObject({
  id: z.string(),
  referenceId: z.string(),
  orderId: z.string(),
  description: z.string().nullable(),
  amount: z.string().describe('minor units of the fiat currency'),
  currency: z.string(),
  status: invoiceStatus,
  customerEmail: z.string().nullable(),
  customerName: z.string().nullable(),
  customerMetadata: jsonObject,
  metadata: jsonObject,
  returnUrl: z.string().nullable(),
  cancelUrl: z.string().nullable(),
  expiresAt: iso,
  viewedAt: isoOrNull,
  paidAt: isoOrNull,
  cancelledAt: isoOrNull,
  createdAt: iso,
});

export const paymentInInvoiceData = z.strictObject({
  id: z.string(),
  referenceId: z.string(),
  status: paymentStatus,
  blockchain: z.string(),
  currency: z.string().describe('the crypto symbol'),
  amount: decimal,
  receivedAmount: decimal,
  address: z.string(),
  createdAt: iso,
});

export const invoiceWithPaymentsData = invoiceData.extend({ payments: z.array(paymentInInvoiceData) });

/** GET /api/v1/invoices/{id}/status (docs/api.md): flat, no nested invoice or payment. */
export const invoiceStatusData = z.strictObject({
  id: z.string(),
  referenceId: z.string(),
  status: invoiceStatus,
  paymentId: z.string().nullable().describe('the most recently created payment of the invoice; null before the first checkout'),
  paidAt: isoOrNull,
  expiresAt: iso,
});

export const paymentData = z.strictObject({
  id: z.string(),
  referenceId: z.string(),
  status: paymentStatus,
  blockchain: z.string(),
  network: z.string(),
  isTestnet: z.boolean(),
  cryptoCurrency: z.string(),
  amount: decimal,
  expectedAmount: decimal,
  receivedAmount: decimal,
  address: z.string(),
  confirmations: z.int(),
  requiredConfirmations: z.int(),
  transactionHash: z.string().nullable(),
  expiresAt: iso,
  createdAt: iso,
  completedAt: isoOrNull,
  paymentType: z.string().describe(PAYMENT_TYPES.join(' or ')),
  method: z.string().describe(PAYMENT_METHODS.join(', ')),
  metadata: jsonObject,
  invoice: z.strictObject({ id: z.string(), referenceId: z.string(), orderId: z.string(), status: invoiceStatus }),
});

/** One refund of a payment: GET /api/v1/payments/{id}/refunds, our addition (docs/refunds.md). */
export const refundData = z.strictObject({
  id: z.string(),
  status: z.enum(['PLANNED', 'PENDING', 'CONFIRMED', 'FAILED', 'CANCELLED', 'EXPIRED']).describe('PLANNED: not broadcast yet (its amount reserved); CANCELLED / EXPIRED: never broadcast, cancelled or past its plan\'s reservation; PENDING: sent, not final; CONFIRMED: final on chain; FAILED: refused or reverted (a later broadcast may still send it)'),
  amount: decimal.describe('what the refund covers of the payment, in its coin (the network fee included when it came out of the refund)'),
  cryptoCurrency: z.string(),
  address: z.string().describe("the buyer's address refunded to"),
  fromAddress: z.string(),
  from: z.enum(['deposit', 'wallet']).describe("`deposit`: the payment's own deposit; `wallet`: a merchant wallet address"),
  transactionHash: z.string().nullable(),
  fee: z.string().describe("network fee paid, in the chain's native coin"),
  feeCurrency: z.string(),
  createdAt: iso,
  confirmedAt: isoOrNull,
});

export const refundListData = z.strictObject({ items: z.array(refundData).describe('refunds of this payment, oldest first') });

export const paymentListData = z.strictObject({
  items: z.array(paymentData),
  pagination: z.strictObject({ total: z.int(), page: z.int(), limit: z.int(), hasMore: z.boolean() }),
});

export const paymentStatusData = z.strictObject({
  id: z.string(),
  referenceId: z.string(),
  status: paymentStatus,
  confirmations: z.int(),
  requiredConfirmations: z.int(),
  expiresAt: iso,
  completedAt: isoOrNull,
});

/** POST /api/v1/invoices/{id}/checkout. */
export const gatewayCheckoutData = z.strictObject({
  invoice: z.strictObject({ id: z.string(), referenceId: z.string(), status: invoiceStatus, amount: z.string(), currency: z.string(), expiresAt: iso }),
  payment: z.strictObject({
    id: z.string(),
    referenceId: z.string(),
    paymentAddress: z.string(),
    amount: decimal,
    blockchain: z.string(),
    cryptoCurrency: z.string(),
    status: paymentStatus,
    expiresAt: iso,
    createdAt: iso,
    network: z.string(),
    isTestnet: z.boolean(),
    decimals: z.int(),
    requiredConfirmations: z.int(),
  }),
});

// The buyer checkout surface.

export const publicInvoiceData = z.strictObject({
  id: z.string(),
  referenceId: z.string(),
  amount: z.string(),
  currency: z.string(),
  description: z.string(),
  merchant: z.strictObject({ name: z.string() }),
  availableBlockchains: z.array(z.string()),
  availableCurrencies: z.record(z.string(), z.array(z.string())),
  customerEmail: z.string().nullable().describe('masked'),
  customerName: z.string().nullable().describe('masked'),
  status: invoiceStatus,
  expiresAt: iso,
  returnUrl: z.string().nullable(),
  cancelUrl: z.string().nullable(),
});

export const publicInvoiceStatusData = z.strictObject({ status: invoiceStatus, paymentId: z.string().nullable(), paidAt: isoOrNull });

/** Present on contract payments (method web3 or service_wallet) only. */
const contractFields = {
  contractAddress: z.string().nullable().optional(),
  externalId: z.string().nullable().optional(),
  externalIdUuid: z.string().nullable().optional(),
};
const treasuryWallet = z.string().describe('the wallet a contract payment pays out to');

export const checkoutPaymentData = z.strictObject({
  id: z.string(),
  referenceId: z.string(),
  method: z.enum(PAYMENT_METHODS),
  status: paymentStatus,
  paymentAddress: z.string().nullable().describe('null for contract payments'),
  paymentUri: z.string().nullable(),
  amount: decimal,
  cryptoCurrency: z.string(),
  blockchain: z.string(),
  network: z.string(),
  networkLabel: z.string(),
  decimals: z.int(),
  tokenAddress: z.string().nullable(),
  chainId: z.int().nullable(),
  requiredConfirmations: z.int(),
  expiresAt: iso,
  createdAt: iso,
  ...contractFields,
  treasuryWallet: treasuryWallet.optional(),
  requiresConfirmation: z.literal(true).optional().describe('service_wallet only'),
});

export const publicCheckoutData = z.strictObject({ payment: checkoutPaymentData });

export const publicPaymentStatusData = z.strictObject({
  id: z.string(),
  status: paymentStatus,
  confirmations: z.int(),
  requiredConfirmations: z.int(),
  transactionHash: z.string().nullable(),
  blockchain: z.string(),
  amount: decimal,
  cryptoCurrency: z.string(),
  paymentAddress: z.string().nullable().describe('null from expiresAt on'),
  expiresAt: iso,
  method: z.enum(PAYMENT_METHODS),
  network: z.string(),
  networkLabel: z.string(),
  decimals: z.int(),
  tokenAddress: z.string().nullable(),
  chainId: z.int().nullable(),
  paymentUri: z.string().nullable(),
  createdAt: iso,
  completedAt: isoOrNull,
  ...contractFields,
  treasuryWallet: treasuryWallet.nullable().optional().describe('contract payments only; null from expiresAt on'),
});

export const confirmData = z.strictObject({
  status: z.string(),
  transactionHash: z.string().nullable(),
  confirmations: z.int(),
  requiredConfirmations: z.int(),
  message: z.string(),
});

/** Named schemas, put under components.schemas of the documents. */
export const RESPONSE_SCHEMAS = {
  gateway: {
    Invoice: invoiceData,
    InvoiceWithPayments: invoiceWithPaymentsData,
    PaymentInInvoice: paymentInInvoiceData,
    InvoiceStatus: invoiceStatusData,
    GatewayCheckout: gatewayCheckoutData,
    Payment: paymentData,
    Refund: refundData,
    RefundList: refundListData,
    PaymentList: paymentListData,
    PaymentStatus: paymentStatusData,
  },
  checkout: {
    PublicInvoice: publicInvoiceData,
    PublicInvoiceStatus: publicInvoiceStatusData,
    CheckoutPayment: checkoutPaymentData,
    PublicCheckout: publicCheckoutData,
    PublicPaymentStatus: publicPaymentStatusData,
    ConfirmResult: confirmData,
  },
} as const;

// Compile-time ties between the views and their schemas: the same field names, and each field's
// type assignable both ways (fields a view types as `unknown`, the JSON objects, are skipped).
type KeysOf<T> = T extends unknown ? keyof T : never;
type Field<T, K extends PropertyKey> = Exclude<T extends unknown ? (K extends keyof T ? T[K] : never) : never, undefined>;
type Assignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type SameKeys<A, B> = Assignable<KeysOf<A>, KeysOf<B>>;
type FieldOk<V, S, K extends PropertyKey> = unknown extends Field<V, K> ? true : Assignable<Field<V, K>, Field<S, K>>;
type FieldsOk<V, S> = { [K in KeysOf<V>]: FieldOk<V, S, K> }[KeysOf<V>];
type Matches<View, Schema extends z.ZodType> = SameKeys<View, z.output<Schema>> extends true ? ([FieldsOk<View, z.output<Schema>>] extends [true] ? true : false) : false;

export const VIEW_SCHEMA_TIES: {
  invoice: Matches<ReturnType<typeof invoiceView>, typeof invoiceData>;
  paymentInInvoice: Matches<ReturnType<typeof paymentInInvoiceView>, typeof paymentInInvoiceData>;
  payment: Matches<ReturnType<typeof paymentView>, typeof paymentData>;
  refund: Matches<ReturnType<typeof refundView>, typeof refundData>;
  paymentStatus: Matches<ReturnType<typeof paymentStatusView>, typeof paymentStatusData>;
  publicInvoice: Matches<ReturnType<typeof publicInvoiceView>, typeof publicInvoiceData>;
  publicInvoiceStatus: Matches<ReturnType<typeof invoiceStatusView>, typeof publicInvoiceStatusData>;
  checkoutPayment: Matches<ReturnType<typeof checkoutPaymentView>, typeof checkoutPaymentData>;
  publicPaymentStatus: Matches<ReturnType<typeof publicPaymentStatusView>, typeof publicPaymentStatusData>;
  confirm: Matches<ConfirmResult, typeof confirmData>;
} = {
  invoice: true,
  paymentInInvoice: true,
  payment: true,
  refund: true,
  paymentStatus: true,
  publicInvoice: true,
  publicInvoiceStatus: true,
  checkoutPayment: true,
  publicPaymentStatus: true,
  confirm: true,
};
