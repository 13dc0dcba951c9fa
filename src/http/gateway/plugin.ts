import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import type { ApiKeyPrincipal } from '../../domain/principal.ts';
import { authenticate } from '../../app/authenticate.ts';
import { cancelInvoice } from '../../app/cancel-invoice.ts';
import { openGatewayCheckout } from '../../app/checkout.ts';
import { createInvoice } from '../../app/create-invoice.ts';
import type { DaemonDeps } from '../../app/deps.ts';
import { type WriteOutcome, type WriteRequest, writeFingerprint } from '../../app/idempotent-write.ts';
import { merchantInvoice, merchantInvoiceStatus, merchantPayment, merchantPaymentRefunds, merchantPayments, merchantPaymentStatus } from '../../app/merchant-reads.ts';
import { chargeRefusedRequest, markSignatureVerified } from '../rate-limit.ts';
import { RouteTable } from '../app.ts';
import { sendData } from '../envelope.ts';
import { isIdShaped, jsonBody, parseWith, rawBody } from '../validation.ts';
import { authRequestOf } from '../auth-request.ts';
import { createInvoiceBody, gatewayCheckoutBody, listPaymentsQuery } from './schemas.ts';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface GatewayState {
  principal?: ApiKeyPrincipal;
  write?: { key: string; fingerprint: string };
}
const state = new WeakMap<FastifyRequest, GatewayState>();


function principalOf(req: FastifyRequest): ApiKeyPrincipal {
  const p = state.get(req)?.principal;
  if (!p) throw new GatewayError('API_KEY_INVALID', 'not authenticated');
  return p;
}

/** The one merchant point a signed request is for. */
function pointOf(req: FastifyRequest): string {
  return principalOf(req).merchantPointIds[0];
}

function idParam(req: FastifyRequest, notFound: 'INVOICE_NOT_FOUND' | 'PAYMENT_NOT_FOUND'): string {
  const id = (req.params as { id: string }).id;
  if (!isIdShaped(id)) throw new GatewayError(notFound, notFound === 'INVOICE_NOT_FOUND' ? 'Invoice not found' : 'Payment not found');
  return id;
}

function sendAnswer(reply: FastifyReply, { answer, replayed }: WriteOutcome): FastifyReply {
  reply.code(answer.status).header('content-type', 'application/json; charset=utf-8');
  if (replayed) reply.header('Idempotent-Replayed', 'true');
  return reply.send(answer.body);
}

/** The merchant gateway (/api/v1): HMAC-signed, idempotent writes, everything scoped to the key's point. */
export async function gatewayPlugin(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
  const { config } = deps.common;
  const ttlMs = config.idempotency.ttlHours * 3_600_000;

  /** Authenticates the signed request; a refusal counts against the service-wide limits. */
  async function authenticated(req: FastifyRequest, fresh = false): Promise<ApiKeyPrincipal> {
    try {
      return await authenticate(deps, authRequestOf(req), ['api-key'], { fresh, confirm: !WRITE_METHODS.has(req.method) });
    } catch (err) {
      await chargeRefusedRequest(req); // throws the 429 instead when the buckets are full
      throw err;
    }
  }

  app.addHook('preValidation', async (req) => {
    const principal = await authenticated(req);
    markSignatureVerified(req);
    const st: GatewayState = { principal };
    state.set(req, st);
    if (!WRITE_METHODS.has(req.method)) return;
    const key = String(req.headers['idempotency-key']);
    if (key.length > 255) throw new GatewayError('VALIDATION_ERROR', 'Idempotency-Key must be at most 255 characters');
    const path = req.url.split('?')[0]!;
    st.write = { key, fingerprint: writeFingerprint(req.method, path, rawBody(req)) };
  });

  /** The request's side of an idempotent write (src/app/idempotent-write.ts): its key, its envelope, its re-authentication. */
  function writeOf(req: FastifyRequest): WriteRequest {
    return {
      claim: () => {
        const principal = principalOf(req);
        const write = state.get(req)!.write!;
        return { merchantId: principal.merchantPointIds[0], merchantVersion: principal.version, key: write.key, fingerprint: write.fingerprint, ttlMs };
      },
      answer: (status, data) => ({ status, body: JSON.stringify({ success: true, data, timestamp: new Date().toISOString(), requestId: req.id }) }),
      reauthenticate: async () => {
        state.get(req)!.principal = await authenticated(req, true);
      },
    };
  }

  const routes = new RouteTable(app);

  routes.add('POST', '/invoices', async (req, reply) => {
    const body = parseWith(createInvoiceBody, jsonBody(req) ?? {});
    return sendAnswer(reply, await createInvoice(deps, writeOf(req), pointOf(req), body));
  });

  routes.add('GET', '/invoices/:id', async (req, reply) =>
    sendData(req, reply, await merchantInvoice(deps, pointOf(req), idParam(req, 'INVOICE_NOT_FOUND'))),
  );

  routes.add('GET', '/invoices/:id/status', async (req, reply) =>
    sendData(req, reply, await merchantInvoiceStatus(deps, pointOf(req), idParam(req, 'INVOICE_NOT_FOUND'))),
  );

  routes.add('DELETE', '/invoices/:id', async (req, reply) => {
    const invoiceId = idParam(req, 'INVOICE_NOT_FOUND');
    return sendAnswer(reply, await cancelInvoice(deps, writeOf(req), pointOf(req), invoiceId));
  });

  routes.add('POST', '/invoices/:id/checkout', async (req, reply) => {
    const invoiceId = idParam(req, 'INVOICE_NOT_FOUND');
    const body = parseWith(gatewayCheckoutBody, jsonBody(req) ?? {});
    const outcome = await openGatewayCheckout(deps, writeOf(req), {
      invoiceId,
      merchantId: pointOf(req),
      blockchain: body.blockchain,
      cryptoCurrency: body.cryptoCurrency,
      testnet: body.testnet ?? config.checkout.offerTestnets,
      method: 'direct',
      requireMonitored: true,
    });
    return sendAnswer(reply, outcome);
  });

  routes.add('GET', '/payments', async (req, reply) => {
    const query = parseWith(listPaymentsQuery, req.query, 'query');
    return sendData(req, reply, await merchantPayments(deps, pointOf(req), query));
  });

  routes.add('GET', '/payments/:id', async (req, reply) =>
    sendData(req, reply, await merchantPayment(deps, pointOf(req), idParam(req, 'PAYMENT_NOT_FOUND'))),
  );

  routes.add('GET', '/payments/:id/refunds', async (req, reply) =>
    sendData(req, reply, await merchantPaymentRefunds(deps, pointOf(req), idParam(req, 'PAYMENT_NOT_FOUND'))),
  );

  routes.add('GET', '/payments/:id/status', async (req, reply) =>
    sendData(req, reply, await merchantPaymentStatus(deps, pointOf(req), idParam(req, 'PAYMENT_NOT_FOUND'))),
  );

  routes.finish();
}
