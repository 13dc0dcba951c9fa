import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError } from '../../../domain/errors.ts';
import { fiatExponent } from '../../../domain/fiat-currencies.ts';
import { invoiceView, paymentInInvoiceView, paymentStatusView, paymentView } from '../../../domain/views.ts';
import { claimKey, completeKey, releaseKey } from '../../../db/idempotency.ts';
import { cancelInvoice, createInvoice, invoicePayments, latestPayment, loadInvoice } from '../../../db/invoices.ts';
import { listPayments, loadPayment } from '../../../db/payments.ts';
import type { MerchantPoint } from '../../../db/entities/merchant-point.entity.ts';
import { sha256Hex } from '../../../sdk/sign-request.ts';
import type { DaemonDeps } from '../../deps.ts';
import { RouteTable } from '../app.ts';
import { sendData } from '../envelope.ts';
import { checkoutInvoice } from '../../checkout.ts';
import { isIdShaped, jsonBody, parseWith, rawBody } from '../validation.ts';
import { authenticate } from './auth.ts';
import { createInvoiceBody, gatewayCheckoutBody, listPaymentsQuery } from './schemas.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface GatewayState {
  merchant?: MerchantPoint;
  idempotencyId?: string;
}
const state = new WeakMap<FastifyRequest, GatewayState>();

function merchantOf(req: FastifyRequest): MerchantPoint {
  const m = state.get(req)?.merchant;
  if (!m) throw new GatewayError('API_KEY_INVALID', 'not authenticated');
  return m;
}

function idParam(req: FastifyRequest, notFound: 'INVOICE_NOT_FOUND' | 'PAYMENT_NOT_FOUND'): string {
  const id = (req.params as { id: string }).id;
  if (!isIdShaped(id)) throw new GatewayError(notFound, notFound === 'INVOICE_NOT_FOUND' ? 'Invoice not found' : 'Payment not found');
  return id;
}

/** The merchant gateway (/api/v1): HMAC-signed, idempotent writes, everything scoped to the key's point. */
export async function gatewayPlugin(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
  const { db, box, config } = deps.common;
  const ttlMs = config.idempotency.ttlHours * 3_600_000;

  app.addHook('preValidation', async (req, reply) => {
    const merchant = await authenticate(req, db, box);
    const st: GatewayState = { merchant };
    state.set(req, st);
    if (!WRITE_METHODS.has(req.method)) return;
    const key = String(req.headers['idempotency-key']);
    if (key.length > 255) throw new GatewayError('VALIDATION_ERROR', 'Idempotency-Key must be at most 255 characters');
    const path = req.url.split('?')[0]!;
    const fingerprint = createHash('sha256').update(`${req.method}\n${path}\n${sha256Hex(rawBody(req))}`).digest('hex');
    const claim = await claimKey(db, { merchantId: merchant.id, key, fingerprint, ttlMs });
    switch (claim.kind) {
      case 'claimed':
        st.idempotencyId = claim.id;
        return;
      case 'conflict':
        throw new GatewayError('IDEMPOTENCY_KEY_CONFLICT', 'Idempotency-Key was already used for a different request');
      case 'in_flight':
        throw new GatewayError('IDEMPOTENCY_KEY_CONFLICT', 'A request with this Idempotency-Key is still being processed; back off and retry');
      case 'replay':
        return reply
          .code(claim.statusCode)
          .header('content-type', 'application/json; charset=utf-8')
          .header('Idempotent-Replayed', 'true')
          .send(claim.body);
    }
  });

  // Store a success for replay; a failure frees the key (spec rule 4).
  app.addHook('onSend', async (req, reply, payload) => {
    const id = state.get(req)?.idempotencyId;
    if (!id) return payload;
    state.get(req)!.idempotencyId = undefined;
    if (reply.statusCode < 400 && typeof payload === 'string') await completeKey(db, id, reply.statusCode, payload);
    else await releaseKey(db, id);
    return payload;
  });
  app.addHook('onRequestAbort', async (req) => {
    const id = state.get(req)?.idempotencyId;
    if (id) await releaseKey(db, id);
  });

  const routes = new RouteTable(app);

  routes.add('POST', '/invoices', async (req, reply) => {
    const body = parseWith(createInvoiceBody, jsonBody(req) ?? {});
    if (config.pricing.mode === 'convert' && fiatExponent(body.currency) === undefined) {
      // Caught now rather than at every checkout: convert mode needs the currency's ISO 4217 exponent.
      throw new GatewayError('VALIDATION_ERROR', 'Invalid request body', {
        details: [{ path: 'body.currency', message: `${body.currency} is not a supported ISO 4217 currency (see docs/pricing.md)` }],
      });
    }
    const invoice = await createInvoice(db, merchantOf(req).id, {
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
    });
    return sendData(req, reply, invoiceView(invoice), 201);
  });

  routes.add('GET', '/invoices/:id', async (req, reply) => {
    const invoice = await loadInvoice(db, idParam(req, 'INVOICE_NOT_FOUND'), merchantOf(req).id);
    const payments = await invoicePayments(db, invoice.id);
    return sendData(req, reply, { ...invoiceView(invoice), payments: payments.map(paymentInInvoiceView) });
  });

  routes.add('GET', '/invoices/:id/status', async (req, reply) => {
    const invoice = await loadInvoice(db, idParam(req, 'INVOICE_NOT_FOUND'), merchantOf(req).id);
    const latest = await latestPayment(db, invoice.id);
    return sendData(req, reply, {
      id: invoice.id,
      referenceId: invoice.referenceId,
      status: invoice.status,
      paymentId: latest?.id ?? null,
      paidAt: invoice.paidAt?.toISOString() ?? null,
      expiresAt: invoice.expiresAt.toISOString(),
    });
  });

  routes.add('DELETE', '/invoices/:id', async (req, reply) => {
    const invoice = await cancelInvoice(db, idParam(req, 'INVOICE_NOT_FOUND'), merchantOf(req).id);
    return sendData(req, reply, invoiceView(invoice));
  });

  routes.add('POST', '/invoices/:id/checkout', async (req, reply) => {
    const invoiceId = idParam(req, 'INVOICE_NOT_FOUND');
    const body = parseWith(gatewayCheckoutBody, jsonBody(req) ?? {});
    const { invoice, payment } = await checkoutInvoice(deps, {
      invoiceId,
      merchantId: merchantOf(req).id,
      blockchain: body.blockchain,
      cryptoCurrency: body.cryptoCurrency,
      testnet: body.testnet,
      method: 'direct',
    });
    return sendData(
      req,
      reply,
      {
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
      },
      201,
    );
  });

  routes.add('GET', '/payments', async (req, reply) => {
    const q = parseWith(listPaymentsQuery, req.query, 'query');
    const { items, pagination } = await listPayments(db, { merchantId: merchantOf(req).id, ...q });
    return sendData(req, reply, { items: items.map((p) => paymentView(p, p.invoice)), pagination });
  });

  routes.add('GET', '/payments/:id', async (req, reply) => {
    const payment = await loadPayment(db, idParam(req, 'PAYMENT_NOT_FOUND'), merchantOf(req).id);
    return sendData(req, reply, paymentView(payment, payment.invoice));
  });

  routes.add('GET', '/payments/:id/status', async (req, reply) => {
    const payment = await loadPayment(db, idParam(req, 'PAYMENT_NOT_FOUND'), merchantOf(req).id);
    return sendData(req, reply, paymentStatusView(payment));
  });

  routes.finish();
}
