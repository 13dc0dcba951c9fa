import type { FilterQuery } from '@mikro-orm/core';
import { GatewayError } from '../domain/errors.ts';
import type { PaymentStatus } from '../domain/lifecycle.ts';
import { boolOf, dateOf, nullableDate, poolReader, readApplyingExpiry, readRow } from './raw-sql.ts';
import { Payment } from './entities/payment.entity.ts';
import type { PaymentMethod, PaymentType } from '../domain/payment-methods.ts';
import type { BuyerPayment } from '../domain/views.ts';
import { applyExpiry, expiryDue, invoicesDue } from './expiry.ts';
import type { Database } from './orm.ts';

export interface ListPaymentsInput {
  merchantId: string;
  status?: PaymentStatus | undefined;
  blockchain?: string | undefined;
  skip: number;
  take: number;
}

/** Newest first; pagination per the spec: page = floor(skip/take)+1, hasMore = skip+take < total. */
export async function listPayments(db: Database, input: ListPaymentsInput, now = new Date()) {
  // Lazy expiry for the list too: overdue PENDING payments of this point are expired first.
  for (const invoiceId of await invoicesDue(poolReader(db), { merchantId: input.merchantId }, now, 1000)) await db.write((x) => applyExpiry(x, invoiceId, now));
  const where: FilterQuery<Payment> = { merchant: input.merchantId };
  if (input.status) where.status = input.status;
  if (input.blockchain) where.blockchain = input.blockchain;
  const [items, total] = await db.em().findAndCount(Payment, where, {
    orderBy: { createdAt: 'desc', id: 'desc' },
    offset: input.skip,
    limit: input.take,
    populate: ['invoice'],
  });
  return {
    items,
    pagination: {
      total,
      page: Math.floor(input.skip / input.take) + 1,
      limit: input.take,
      hasMore: input.skip + input.take < total,
    },
  };
}

/** One payment after the expiry rules ran; scoped to a merchant point, or public when null. */
export async function loadPayment(db: Database, paymentId: string, merchantId: string | null, now = new Date()): Promise<Payment> {
  const em = db.em();
  const current = await em.findOne(Payment, merchantId ? { id: paymentId, merchant: merchantId } : { id: paymentId }, { populate: ['invoice'] });
  if (!current) throw new GatewayError('PAYMENT_NOT_FOUND', 'Payment not found');
  if (!(await expiryDue(poolReader(db), current.invoice, now))) return current;
  await db.write((x) => applyExpiry(x, current.invoice.id, now));
  return db.em().findOneOrFail(Payment, { id: current.id }, { populate: ['invoice'] });
}

interface BuyerPaymentRow {
  id: string;
  reference_id: string;
  status: PaymentStatus;
  payment_type: PaymentType;
  method: PaymentMethod;
  blockchain: string;
  network: string;
  is_testnet: unknown;
  crypto_currency: string;
  decimals: number;
  token_address: string | null;
  amount: string;
  address: string;
  confirmations: number;
  required_confirmations: number;
  transaction_hash: string | null;
  contract_address: string | null;
  external_id: string | null;
  external_id_uuid: string | null;
  expires_at: unknown;
  created_at: unknown;
  completed_at: unknown;
  due: number | boolean;
}

// `due`: the expiry rules may change what this poll shows, by the wall clock. The poll shows this
// payment only, and the rules change a payment only when it is PENDING past its window (an OPEN
// invoice has no live payment; an invoice has one live payment at most), so one column of the row
// decides it: no join, no probe of the invoice's other payments (docs/performance.md).
const BUYER_PAYMENT_SQL = `select p.id, p.reference_id, p.status, p.payment_type, p.method, p.blockchain, p.network, p.is_testnet, p.crypto_currency,
    p.decimals, p.token_address, p.amount, p.address, p.confirmations, p.required_confirmations, p.transaction_hash, p.contract_address,
    p.external_id, p.external_id_uuid, p.expires_at, p.created_at, p.completed_at,
    case when p.status = 'PENDING' and p.expires_at <= ? then 1 else 0 end as due
  from payment p where p.id = ?`;

function buyerPaymentOf(r: BuyerPaymentRow): BuyerPayment {
  return {
    id: r.id,
    referenceId: r.reference_id,
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
    address: r.address,
    confirmations: Number(r.confirmations),
    requiredConfirmations: Number(r.required_confirmations),
    transactionHash: r.transaction_hash,
    contractAddress: r.contract_address,
    externalId: r.external_id,
    externalIdUuid: r.external_id_uuid,
    expiresAt: dateOf(r.expires_at),
    createdAt: dateOf(r.created_at),
    completedAt: nullableDate(r.completed_at),
  };
}

/**
 * The public loadPayment for the buyer's poll, in hand-written SQL: one bound statement and a plain
 * object. When the payment's window has passed by the wall clock, loadPayment applies the expiry
 * rules exactly as before (at the chain's processed time) and the row is read again: the poll never
 * shows a payment live that the list or the gateway would show EXPIRED.
 */
export async function readBuyerPayment(db: Database, paymentId: string, now = new Date()): Promise<BuyerPayment> {
  const row = await readApplyingExpiry(
    () => readRow<BuyerPaymentRow>(db, BUYER_PAYMENT_SQL, [now, paymentId]),
    () => loadPayment(db, paymentId, null, now),
    () => {
      throw new GatewayError('PAYMENT_NOT_FOUND', 'Payment not found');
    },
  );
  return buyerPaymentOf(row);
}
