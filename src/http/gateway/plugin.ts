import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import { fiatExponent } from '../../domain/fiat-currencies.ts';
import { invoiceView, paymentInInvoiceView, paymentStatusView, paymentView, refundView } from '../../domain/views.ts';
import { refundsOfPayment } from '../../store/refunds.ts';
import { poolReader } from '../../store/raw-sql.ts';
import { CHAIN_DEFAULTS } from '../../chains/chain-defaults.ts';
import type { ChainSlug } from '../../chains/slugs.ts';
import { idempotentWrite, storedAnswer, type WriteAnswer } from '../../app/idempotent-write.ts';
import type { Executor } from '../../store/executor.ts';
import type { ClaimInput } from '../../store/idempotency.ts';
import { cancelInvoiceIn, insertInvoice, invoicePayments, latestPayment, loadInvoice, type CreateInvoiceInput } from '../../store/invoices.ts';
import { merchantKeyCache, type AuthMerchant } from '../../store/merchant-keys.ts';
import { referenceBlocks } from '../../store/reference-ids.ts';
import type { Invoice } from '../../store/entities/invoice.entity.ts';
import { chargeRefusedRequest, markSignatureVerified } from '../rate-limit.ts';
import { listPayments, loadPayment } from '../../store/payments.ts';
import { sha256Hex } from '../../sdk/sign-request.ts';
import type { DaemonDeps } from '../../app/deps.ts';
import { RouteTable } from '../app.ts';
import { sendData } from '../envelope.ts';
import { checkedOutInvoice, planCheckout, warnIfPoolLow, type CheckoutInput } from '../../app/checkout.ts';
import { openPayment, type OpenedPayment } from '../../store/open-payment.ts';
import { isIdShaped, jsonBody, parseWith, rawBody } from '../validation.ts';
import { authenticate } from './auth.ts';
import { createInvoiceBody, gatewayCheckoutBody, listPaymentsQuery } from './schemas.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface GatewayState {
  merchant?: AuthMerchant;
  write?: { key: string; fingerprint: string };
}
const state = new WeakMap<FastifyRequest, GatewayState>();


function merchantOf(req: FastifyRequest): AuthMerchant {
  const m = state.get(req)?.merchant;
  if (!m) throw new GatewayError('API_KEY_INVALID', 'not authenticated');
  return m;
}

function idParam(req: FastifyRequest, notFound: 'INVOICE_NOT_FOUND' | 'PAYMENT_NOT_FOUND'): string {
  const id = (req.params as { id: string }).id;
  if (!isIdShaped(id)) throw new GatewayError(notFound, notFound === 'INVOICE_NOT_FOUND' ? 'Invoice not found' : 'Payment not found');
  return id;
}

function sendAnswer(reply: FastifyReply, answer: WriteAnswer, replayed = false): FastifyReply {
  reply.code(answer.status).header('content-type', 'application/json; charset=utf-8');
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.send(answer.body);
}

/** The merchant gateway (/api/v1): HMAC-signed, idempotent writes, everything scoped to the key's point. */
export async function gatewayPlugin(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
  const { db, box, config } = deps.common;
  const ttlMs = config.idempotency.ttlHours * 3_600_000;
  const merchants = merchantKeyCache(db, box);

  /** Authenticates (from the merchant cache); a refusal counts against the service-wide limits. */
  async function authenticated(req: FastifyRequest, fresh = false): Promise<AuthMerchant> {
    try {
      return await authenticate(req, merchants, { fresh, confirm: !WRITE_METHODS.has(req.method) });
    } catch (err) {
      await chargeRefusedRequest(req); // throws the 429 instead when the buckets are full
      throw err;
    }
  }

  app.addHook('preValidation', async (req) => {
    const merchant = await authenticated(req);
    markSignatureVerified(req);
    const st: GatewayState = { merchant };
    state.set(req, st);
    if (!WRITE_METHODS.has(req.method)) return;
    const key = String(req.headers['idempotency-key']);
    if (key.length > 255) throw new GatewayError('VALIDATION_ERROR', 'Idempotency-Key must be at most 255 characters');
    const path = req.url.split('?')[0]!;
    st.write = { key, fingerprint: createHash('sha256').update(`${req.method}\n${path}\n${sha256Hex(rawBody(req))}`).digest('hex') };
  });

  const envelope = (req: FastifyRequest, status: number, data: unknown): WriteAnswer => ({
    status,
    body: JSON.stringify({ success: true, data, timestamp: new Date().toISOString(), requestId: req.id }),
  });

  function claimOf(req: FastifyRequest): ClaimInput {
    const merchant = merchantOf(req);
    const write = state.get(req)!.write!;
    return { merchantId: merchant.id, merchantVersion: merchant.version, key: write.key, fingerprint: write.fingerprint, ttlMs };
  }

  /** The idempotent write (src/app/idempotent-write.ts) of a route whose work answers `status` with `data`. */
  async function idempotent(req: FastifyRequest, reply: FastifyReply, status: number, work: (x: Executor) => Promise<unknown>): Promise<FastifyReply> {
    const { answer, replayed } = await idempotentWrite(db, {
      claim: () => claimOf(req),
      work: async (x) => envelope(req, status, await work(x)),
      reauthenticate: async () => {
        merchants.invalidate(merchantOf(req).apiKey);
        state.get(req)!.merchant = await authenticated(req, true);
      },
    });
    return sendAnswer(reply, answer, replayed);
  }

  const routes = new RouteTable(app);

  routes.add('POST', '/invoices', async (req, reply) => {
    const body = parseWith(createInvoiceBody, jsonBody(req) ?? {});
    if (config.pricing.mode === 'convert' && fiatExponent(body.currency) === undefined) {
      // Caught now rather than at every checkout: convert mode needs the currency's ISO 4217 exponent.
      throw new GatewayError('VALIDATION_ERROR', 'Invalid request body', {
        details: [{ path: 'body.currency', message: `${body.currency} is not a supported ISO 4217 currency (see docs/pricing.md)` }],
      });
    }
    const input: CreateInvoiceInput = {
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
    const now = new Date();
    const referenceId = (await referenceBlocks(db)?.next('INV', now)) ?? null;
    return idempotent(req, reply, 201, async (x) => invoiceView((await insertInvoice(x, merchantOf(req).id, input, now, referenceId)) as Invoice));
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
    const invoiceId = idParam(req, 'INVOICE_NOT_FOUND');
    return idempotent(req, reply, 200, async (x) => invoiceView(await cancelInvoiceIn(x, invoiceId, merchantOf(req).id)));
  });

  routes.add('POST', '/invoices/:id/checkout', async (req, reply) => {
    const invoiceId = idParam(req, 'INVOICE_NOT_FOUND');
    const body = parseWith(gatewayCheckoutBody, jsonBody(req) ?? {});
    const checkout: CheckoutInput = {
      invoiceId,
      merchantId: merchantOf(req).id,
      blockchain: body.blockchain,
      cryptoCurrency: body.cryptoCurrency,
      testnet: body.testnet ?? config.checkout.offerTestnets,
      method: 'direct',
      requireMonitored: true,
    };
    // Read, checked and priced before the write transaction opens (a rate may come over HTTP; no
    // write lock is held meanwhile); then the claim, lease and payment row in hand-written SQL in
    // the idempotency transaction. A retried key is replayed even when the checks fail now.
    let planned: Awaited<ReturnType<typeof planCheckout>>;
    try {
      planned = await planCheckout(deps, checkout);
    } catch (err) {
      const stored = await storedAnswer(db, claimOf(req));
      if (stored) return sendAnswer(reply, stored, true);
      throw err;
    }
    const { plan } = planned;
    const invoice = checkedOutInvoice(planned.invoice);
    const data = (payment: OpenedPayment) => ({
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
    });
    const answered = await idempotent(req, reply, 201, async (x) => data(await openPayment(x, plan)));
    if (reply.statusCode === 201 && !reply.getHeader('Idempotent-Replayed')) await warnIfPoolLow(deps, plan);
    return answered;
  });

  routes.add('GET', '/payments', async (req, reply) => {
    const q = parseWith(listPaymentsQuery, req.query, 'query');
    const { items, pagination } = await listPayments(db, { merchantId: merchantOf(req).id, ...q });
    return sendData(req, reply, { items: items.map((p) => paymentView(p, p.invoice)), pagination });
  });

  routes.add('GET', '/payments/:id', async (req, reply) => {
    const payment = await loadPayment(db, idParam(req, 'PAYMENT_NOT_FOUND'), merchantOf(req).id);
    const native = CHAIN_DEFAULTS[payment.blockchain as ChainSlug].native;
    const refunds = (await refundsOfPayment(poolReader(db), payment.id)).map((r) => refundView(r, native));
    return sendData(req, reply, { ...paymentView(payment, payment.invoice), refunds });
  });

  routes.add('GET', '/payments/:id/status', async (req, reply) => {
    const payment = await loadPayment(db, idParam(req, 'PAYMENT_NOT_FOUND'), merchantOf(req).id);
    return sendData(req, reply, paymentStatusView(payment));
  });

  routes.finish();
}
