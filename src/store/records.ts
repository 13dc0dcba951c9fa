import type { InvoiceStatus, PaymentStatus, TransferStatus } from '../domain/lifecycle.ts';
import type { PaymentMethod, PaymentType } from '../domain/payment-methods.ts';
import type { InvoiceRecord, PaymentRecord } from '../domain/views.ts';
import type { Reader } from './executor.ts';
import { boolOf, dateOf, jsonOf, nullableDate } from './raw-sql.ts';

// Payment, invoice and observed-transfer rows as plain records (the first two satisfy the domain's
// records, src/domain/views.ts): the one mapper of each table (paymentOf, invoiceOf, transferOf),
// used by every read of it. Read through an executor inside a write,
// they are the transaction's own rows, so the events built from them report exactly what was written.

/** A payment row: the fields the views read, and those the lifecycle and the ledger decide on. */
export interface StoredPayment extends PaymentRecord {
  invoiceId: string;
  merchantId: string;
  decimals: number;
  tokenAddress: string | null;
  /** Block of the newest credited transfer (a decimal string), null while nothing is credited. */
  blockNumber: string | null;
  contractAddress: string | null;
  externalId: string | null;
  externalIdUuid: string | null;
  paymentType: PaymentType;
  method: PaymentMethod;
  transactionHash: string | null;
  completedAt: Date | null;
}

export interface StoredInvoice extends InvoiceRecord {
  merchantId: string;
  description: string;
  customerEmail: string | null;
  customerName: string | null;
  returnUrl: string | null;
  cancelUrl: string | null;
  viewedAt: Date | null;
  paidAt: Date | null;
  cancelledAt: Date | null;
}

export interface PaymentRow {
  id: string;
  reference_id: string;
  invoice_id: string;
  merchant_id: string;
  status: PaymentStatus;
  payment_type: PaymentType;
  method: PaymentMethod;
  blockchain: string;
  network: string;
  is_testnet: unknown;
  crypto_currency: string;
  decimals: number | string;
  token_address: string | null;
  amount: string;
  expected_amount: string;
  received_amount: string;
  address: string;
  confirmations: number | string;
  required_confirmations: number | string;
  transaction_hash: string | null;
  block_number: string | null;
  contract_address: string | null;
  external_id: string | null;
  external_id_uuid: string | null;
  metadata: unknown;
  expires_at: unknown;
  completed_at: unknown;
  created_at: unknown;
}

export interface InvoiceRow {
  id: string;
  reference_id: string;
  merchant_id: string;
  order_id: string;
  description: string;
  amount: string;
  currency: string;
  status: InvoiceStatus;
  customer_email: string | null;
  customer_name: string | null;
  customer_metadata: unknown;
  metadata: unknown;
  return_url: string | null;
  cancel_url: string | null;
  expires_at: unknown;
  viewed_at: unknown;
  paid_at: unknown;
  cancelled_at: unknown;
  created_at: unknown;
}

export function paymentOf(r: PaymentRow): StoredPayment {
  return {
    id: r.id,
    referenceId: r.reference_id,
    invoiceId: r.invoice_id,
    merchantId: r.merchant_id,
    status: r.status,
    paymentType: r.payment_type,
    method: r.method,
    blockchain: r.blockchain,
    network: r.network,
    isTestnet: boolOf(r.is_testnet),
    cryptoCurrency: r.crypto_currency,
    decimals: Number(r.decimals),
    tokenAddress: r.token_address,
    amount: r.amount,
    expectedAmount: r.expected_amount,
    receivedAmount: r.received_amount,
    address: r.address,
    confirmations: Number(r.confirmations),
    requiredConfirmations: Number(r.required_confirmations),
    transactionHash: r.transaction_hash,
    blockNumber: r.block_number,
    contractAddress: r.contract_address,
    externalId: r.external_id,
    externalIdUuid: r.external_id_uuid,
    metadata: jsonOf<Record<string, unknown>>(r.metadata) ?? {},
    expiresAt: dateOf(r.expires_at),
    completedAt: nullableDate(r.completed_at),
    createdAt: dateOf(r.created_at),
  };
}

export function invoiceOf(r: InvoiceRow): StoredInvoice {
  return {
    id: r.id,
    referenceId: r.reference_id,
    merchantId: r.merchant_id,
    orderId: r.order_id,
    description: r.description,
    amount: r.amount,
    currency: r.currency,
    status: r.status,
    customerEmail: r.customer_email,
    customerName: r.customer_name,
    customerMetadata: jsonOf<Record<string, unknown>>(r.customer_metadata) ?? {},
    metadata: jsonOf<Record<string, unknown>>(r.metadata) ?? {},
    returnUrl: r.return_url,
    cancelUrl: r.cancel_url,
    expiresAt: dateOf(r.expires_at),
    viewedAt: nullableDate(r.viewed_at),
    paidAt: nullableDate(r.paid_at),
    cancelledAt: nullableDate(r.cancelled_at),
    createdAt: dateOf(r.created_at),
  };
}

/** The payment of an id, or null when there is none (an id an operator typed). */
export async function findPayment(r: Reader, id: string): Promise<StoredPayment | null> {
  const row = await r.get<PaymentRow>('select * from payment where id = ?', [id]);
  return row ? paymentOf(row) : null;
}

export async function paymentById(r: Reader, id: string): Promise<StoredPayment> {
  const payment = await findPayment(r, id);
  if (!payment) throw new Error(`payment ${id} is not in the database`);
  return payment;
}

export async function invoiceById(r: Reader, id: string): Promise<StoredInvoice> {
  const row = await r.get<InvoiceRow>('select * from invoice where id = ?', [id]);
  if (!row) throw new Error(`invoice ${id} is not in the database`);
  return invoiceOf(row);
}

/** An observed transfer: what an indexer saw (or a buyer claimed) and what the ledger made of it. */
export interface StoredTransfer {
  id: string;
  chain: string;
  network: string;
  txHash: string;
  logIndex: number;
  /** Decimal string. */
  blockNumber: string;
  blockHash: string;
  fromAddress: string | null;
  toAddress: string;
  tokenAddress: string | null;
  /** The coin the indexer saw (null: a token it could not name). */
  symbol: string | null;
  /** Atomic units, decimal string. */
  amount: string;
  status: TransferStatus;
  paymentId: string | null;
  note: string | null;
  createdAt: Date;
}

export interface TransferRow {
  id: string;
  chain: string;
  network: string;
  tx_hash: string;
  log_index: number | string;
  block_number: string;
  block_hash: string;
  from_address: string | null;
  to_address: string;
  token_address: string | null;
  symbol: string | null;
  amount: string;
  status: TransferStatus;
  payment_id: string | null;
  note: string | null;
  created_at: unknown;
}

export function transferOf(t: TransferRow): StoredTransfer {
  return {
    id: t.id,
    chain: t.chain,
    network: t.network,
    txHash: t.tx_hash,
    logIndex: Number(t.log_index),
    blockNumber: t.block_number,
    blockHash: t.block_hash,
    fromAddress: t.from_address,
    toAddress: t.to_address,
    tokenAddress: t.token_address,
    symbol: t.symbol,
    amount: t.amount,
    status: t.status,
    paymentId: t.payment_id,
    note: t.note,
    createdAt: dateOf(t.created_at),
  };
}
