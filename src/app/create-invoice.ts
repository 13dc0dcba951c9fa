import { GatewayError } from '../domain/errors.ts';
import { fiatExponent } from '../domain/fiat-currencies.ts';
import { invoiceView } from '../domain/views.ts';
import { insertInvoice } from '../store/invoices.ts';
import { referenceBlocks } from '../store/reference-ids.ts';
import type { DaemonDeps } from './deps.ts';
import { idempotentWrite, type WriteOutcome, type WriteRequest } from './idempotent-write.ts';

/** The body of POST /api/v1/invoices, validated (src/http/gateway/schemas.ts). */
export interface NewInvoiceRequest {
  orderId: string;
  /** Minor units of `currency`, a decimal string. */
  amount: string;
  currency: string;
  description: string;
  customerEmail?: string | undefined;
  customerName?: string | undefined;
  customerMetadata: Record<string, unknown>;
  metadata: Record<string, unknown>;
  returnUrl?: string | undefined;
  cancelUrl?: string | undefined;
  expiresInMinutes: number;
}

/** The merchant's invoice creation, an idempotent write answered 201 with the invoice. */
export async function createInvoice(deps: DaemonDeps, request: WriteRequest, merchantId: string, body: NewInvoiceRequest, now = new Date()): Promise<WriteOutcome> {
  const { db, config } = deps.common;
  if (config.pricing.mode === 'convert' && fiatExponent(body.currency) === undefined) {
    // Caught now rather than at every checkout: convert mode needs the currency's ISO 4217 exponent.
    throw new GatewayError('VALIDATION_ERROR', 'Invalid request body', {
      details: [{ path: 'body.currency', message: `${body.currency} is not a supported ISO 4217 currency (see docs/pricing.md)` }],
    });
  }
  const input = {
    orderId: body.orderId,
    amount: body.amount,
    currency: body.currency,
    description: body.description,
    customerEmail: body.customerEmail ?? null,
    customerName: body.customerName ?? null,
    customerMetadata: body.customerMetadata,
    metadata: body.metadata,
    returnUrl: body.returnUrl ?? null,
    cancelUrl: body.cancelUrl ?? null,
    expiresInMinutes: body.expiresInMinutes,
  };
  // On PostgreSQL the reference number is taken before the transaction (ReferenceBlocks).
  const referenceId = (await referenceBlocks(db)?.next('INV', now)) ?? null;
  return idempotentWrite(db, request, 201, async (x) => invoiceView(await insertInvoice(x, merchantId, input, now, referenceId)));
}
