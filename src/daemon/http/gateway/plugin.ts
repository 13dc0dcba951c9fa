import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../../domain/errors.ts';
import { fiatExponent } from '../../../domain/fiat-currencies.ts';
import { invoiceView, paymentInInvoiceView, paymentStatusView, paymentView } from '../../../domain/views.ts';
import { claimAndInsertPgGrouped } from '../../../db/pg-group-commit.ts';
import { claimKeyIn, claimKeySync, completeKeyIn, completeKeySync, existingKey, isUniqueViolation, StaleMerchantError, type ClaimInput, type InsertAfterClaim } from '../../../db/idempotency.ts';
import type { Database } from '../../../db/orm.ts';
import { inTransaction } from '../../../db/transaction.ts';
import { cancelInvoice, insertInvoiceIn, insertInvoiceSync, invoiceInsertAfterClaim, invoicePayments, latestPayment, loadInvoice, type CreateInvoiceInput } from '../../../db/invoices.ts';
import { merchantKeyCache, type AuthMerchant } from '../../../db/merchants.ts';
import { referenceBlocks } from '../../../db/reference-ids.ts';
import { nativeSqlite, type NativeSqlite } from '../../../db/native-sqlite.ts';
import { groupedSqliteTransaction } from '../../../db/sqlite-group-commit.ts';
import type { Invoice } from '../../../db/entities/invoice.entity.ts';
import { chargeRefusedRequest, markSignatureVerified } from '../rate-limit.ts';
import { listPayments, loadPayment } from '../../../db/payments.ts';
import { sha256Hex } from '../../../sdk/sign-request.ts';
import type { DaemonDeps } from '../../deps.ts';
import { RouteTable } from '../app.ts';
import { sendData } from '../envelope.ts';
import { checkedOutInvoice, planCheckout, warnIfPoolLow, type CheckoutInput } from '../../checkout.ts';
import { openPaymentIn, openPaymentSync, type OpenedPayment } from '../../../db/open-payment.ts';
import { isIdShaped, jsonBody, parseWith, rawBody } from '../validation.ts';
import { authenticate } from './auth.ts';
import { createInvoiceBody, gatewayCheckoutBody, listPaymentsQuery } from './schemas.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface GatewayState {
  merchant?: AuthMerchant;
  write?: { key: string; fingerprint: string };
}
const state = new WeakMap<FastifyRequest, GatewayState>();

interface Answer {
  status: number;
  body: string;
}

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

function sendAnswer(reply: FastifyReply, answer: Answer, replayed = false): FastifyReply {
  reply.code(answer.status).header('content-type', 'application/json; charset=utf-8');
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.send(answer.body);
}

/**
 * A write's work: on any database (async), and optionally as a synchronous SQLite body, or as one
 * insert after the claim on PostgreSQL (every value known before the statement runs).
 */
interface WriteWork {
  run(tx: Database): Promise<{ status: number; data: unknown }>;
  sqlite?(native: NativeSqlite): { status: number; data: unknown };
  postgres?(): { status: number; data: unknown; insert: InsertAfterClaim };
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
      chargeRefusedRequest(req); // throws the 429 instead when the buckets are full
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

  const envelope = (req: FastifyRequest, status: number, data: unknown): Answer => ({
    status,
    body: JSON.stringify({ success: true, data, timestamp: new Date().toISOString(), requestId: req.id }),
  });

  /** One attempt: the claim, the work and the stored answer in one transaction. */
  async function attempt(req: FastifyRequest, input: ClaimInput, work: WriteWork): Promise<Answer> {
    if (db.dialect === 'sqlite' && work.sqlite) {
      // SQLite: the whole write synchronously, in one tick, committed with the writes of the same
      // turn of the event loop (src/db/sqlite-group-commit.ts), when no ORM transaction holds the connection.
      const native = await nativeSqlite(db.em());
      const answer = groupedSqliteTransaction(native, () => {
        const id = claimKeySync(native, input);
        const { status, data } = work.sqlite!(native);
        const a = envelope(req, status, data);
        completeKeySync(native, id, a.status, a.body);
        return a;
      });
      if (answer) return await answer;
    }
    if (db.dialect === 'postgresql' && work.postgres) {
      // PostgreSQL: the claim, completed with its answer, and the write in one statement (one round trip),
      // shared with the writes that wait for the running batch (src/db/pg-group-commit.ts).
      const { status, data, insert } = work.postgres();
      const a = envelope(req, status, data);
      await claimAndInsertPgGrouped(db, input, a.status, a.body, insert);
      return a;
    }
    return inTransaction(db, async (em) => {
      const id = await claimKeyIn(em, db.dialect, input);
      const { status, data } = await work.run({ ...db, em: () => em });
      const a = envelope(req, status, data);
      await completeKeyIn(em, db.dialect, id, a.status, a.body);
      return a;
    });
  }

  /**
   * A write: the key's claim, the work and the stored answer commit in one transaction (so a crash
   * leaves the key absent and nothing done, or the key completed and replayable), then the answer
   * is sent. A handler error rolls it all back and frees the key (spec rule 4). The claim also
   * checks that the merchant point is unchanged since it was cached; when it changed, nothing was
   * written and the request is authenticated again from the database.
   */
  async function idempotent(req: FastifyRequest, reply: FastifyReply, work: WriteWork): Promise<FastifyReply> {
    const st = state.get(req)!;
    const write = st.write!;
    for (let round = 0; round < 4; round++) {
      const merchant = merchantOf(req);
      const input: ClaimInput = { merchantId: merchant.id, merchantVersion: merchant.version, key: write.key, fingerprint: write.fingerprint, ttlMs };
      try {
        return sendAnswer(reply, await attempt(req, input, work));
      } catch (err) {
        if (err instanceof StaleMerchantError) {
          merchants.invalidate(merchant.apiKey);
          st.merchant = await authenticated(req, true);
          continue;
        }
        if (!isUniqueViolation(err)) throw err;
      }
      // A reply is a thenable: the stored answer is returned as data and sent here, never awaited as a reply.
      const stored = await storedAnswer(input);
      if (stored) return sendAnswer(reply, stored, true);
    }
    throw new GatewayError('IDEMPOTENCY_KEY_CONFLICT', 'A request with this Idempotency-Key is still being processed; back off and retry');
  }

  /** The stored answer for a key that exists already, or null when it is free (again). */
  async function storedAnswer(input: ClaimInput): Promise<Answer | null> {
    const existing = await existingKey(db, input);
    if (!existing) return null; // released (a failed handler) or expired between our insert and read: try again
    switch (existing.kind) {
      case 'conflict':
        throw new GatewayError('IDEMPOTENCY_KEY_CONFLICT', 'Idempotency-Key was already used for a different request');
      case 'in_flight':
        throw new GatewayError('IDEMPOTENCY_KEY_CONFLICT', 'A request with this Idempotency-Key is still being processed; back off and retry');
      case 'replay':
        return { status: existing.statusCode, body: existing.body };
      case 'claimed':
        return null;
    }
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
    const merchantId = () => merchantOf(req).id;
    // The hot path in hand-written SQL (docs/performance.md): no unit of work, bound parameters. On
    // PostgreSQL the reference number is taken before the transaction (ReferenceBlocks).
    const now = new Date();
    const referenceId = (await referenceBlocks(db)?.next('INV', now)) ?? null;
    return idempotent(req, reply, {
      run: async (tx) => ({ status: 201, data: invoiceView((await insertInvoiceIn(tx.em(), tx.dialect, merchantId(), input, now, referenceId)) as Invoice) }),
      sqlite: (native) => ({ status: 201, data: invoiceView(insertInvoiceSync(native, merchantId(), input, now) as Invoice) }),
      ...(referenceId && {
        postgres: () => {
          const { invoice, insert } = invoiceInsertAfterClaim(merchantId(), input, now, referenceId);
          return { status: 201, data: invoiceView(invoice as Invoice), insert };
        },
      }),
    });
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
    return idempotent(req, reply, { run: async (tx) => ({ status: 200, data: invoiceView(await cancelInvoice(tx, invoiceId, merchantOf(req).id)) }) });
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
      const write = state.get(req)!.write!;
      const stored = await storedAnswer({ merchantId: checkout.merchantId!, merchantVersion: 0, key: write.key, fingerprint: write.fingerprint, ttlMs });
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
    const answered = await idempotent(req, reply, {
      run: async (tx) => ({ status: 201, data: data(await openPaymentIn(tx.em(), tx.dialect, plan)) }),
      sqlite: (native) => ({ status: 201, data: data(openPaymentSync(native, plan)) }),
    });
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
    return sendData(req, reply, paymentView(payment, payment.invoice));
  });

  routes.add('GET', '/payments/:id/status', async (req, reply) => {
    const payment = await loadPayment(db, idParam(req, 'PAYMENT_NOT_FOUND'), merchantOf(req).id);
    return sendData(req, reply, paymentStatusView(payment));
  });

  routes.finish();
}
