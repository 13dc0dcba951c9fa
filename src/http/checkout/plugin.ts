import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getNetwork, type AvailableCurrencies } from '../../chains/registry.ts';
import { GatewayError } from '../../domain/errors.ts';
import { latestPayment, loadInvoice, markViewed, readPublicInvoice } from '../../store/invoices.ts';
import { readBuyerPayment } from '../../store/payments.ts';
import type { Eventually } from '../../store/raw-sql.ts';
import { availabilityOf } from '../../app/availability.ts';
import { checkoutInvoice } from '../../app/checkout.ts';
import type { DaemonDeps } from '../../app/deps.ts';
import { RouteTable } from '../app.ts';
import { sendData } from '../envelope.ts';
import { registerRouteLimits } from '../rate-limit.ts';
import { isIdShaped, jsonBody, parseWith } from '../validation.ts';
import { checkoutCors } from './cors.ts';
import { createIdTokenVerifier } from './id-token.ts';
import { confirmBody, publicCheckoutBody } from './schemas.ts';
import { checkoutPaymentView, invoiceStatusView, publicInvoiceView, publicPaymentStatusView } from './views.ts';

function idParam(req: FastifyRequest, notFound: 'INVOICE_NOT_FOUND' | 'PAYMENT_NOT_FOUND'): string {
  const id = (req.params as { id: string }).id;
  if (!isIdShaped(id)) throw new GatewayError(notFound, notFound === 'INVOICE_NOT_FOUND' ? 'Invoice not found' : 'Payment not found');
  return id;
}

/**
 * Answers with `answer` now when the read returned its value synchronously (SQLite outside a
 * transaction, a kept offer), or when its promise settles. A route handler returns what this
 * returns: undefined once it has answered (Fastify would take a returned reply as a second send), or
 * the promise, whose rejection reaches the error handler. A throw from `answer` reaches it too.
 */
function answerWhenRead<T>(read: Eventually<T>, answer: (value: T) => unknown): Promise<unknown> | undefined {
  if (read instanceof Promise) return read.then(answer);
  const answered = answer(read);
  return answered instanceof Promise ? answered : undefined;
}

/**
 * The buyer checkout API (/checkout/api/v1): no key and no signature, the invoice id is the
 * capability; only /confirm takes an id token. Per-route rate limits and CORS live in this scope.
 */
export async function checkoutPlugin(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
  const { db, config, log } = deps.common;
  const cors = checkoutCors(app, config);
  // One hook a request for the scope (docs/performance.md). Answers describe one buyer's invoice at
  // one moment: never cached by browsers or proxies, errors and preflights included.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('Cache-Control', 'no-store');
    if (!cors(req, reply)) done();
  });
  const limit = await registerRouteLimits(app, config.rateLimit);
  const verifyIdToken = await createIdTokenVerifier(config.idToken, log);

  const routes = new RouteTable(app);

  routes.add(
    'GET',
    '/invoices/:id',
    (req, reply) =>
      answerWhenRead(readPublicInvoice(db, idParam(req, 'INVOICE_NOT_FOUND')), (invoice) => {
        if (invoice.status === 'EXPIRED') throw new GatewayError('INVOICE_EXPIRED', 'Invoice has expired');
        if (invoice.status === 'CANCELLED') throw new GatewayError('INVOICE_CANCELLED', 'Invoice was cancelled');
        const merchant = invoice.merchant;
        // Only what can work: a free address, a reporting indexer and a price (docs/checkout.md#what-is-offered).
        const offer = () =>
          availabilityOf(deps).offered({ acceptedChains: merchant.acceptedChains ?? null, acceptedCurrencies: merchant.acceptedCurrencies ?? null }, invoice.currency);
        const answer = (offered: AvailableCurrencies) => sendData(req, reply, publicInvoiceView(invoice, offered));
        // The first read marks the invoice viewed (a write, so a promise); later reads wait on nothing.
        return invoice.viewedAt ? answerWhenRead(offer(), answer) : markViewed(db, invoice.id).then(offer).then(answer);
      }),
    limit('invoiceRead'),
  );

  routes.add(
    'GET',
    '/invoices/:id/status',
    async (req, reply) => {
      const invoice = await loadInvoice(db, idParam(req, 'INVOICE_NOT_FOUND'), null);
      return sendData(req, reply, invoiceStatusView(invoice, await latestPayment(db, invoice.id)));
    },
    limit('invoiceStatus'),
  );

  routes.add(
    'POST',
    '/invoices/:id/checkout',
    async (req, reply) => {
      const invoiceId = idParam(req, 'INVOICE_NOT_FOUND');
      const body = parseWith(publicCheckoutBody, jsonBody(req) ?? {});
      const { payment } = await checkoutInvoice(deps, {
        invoiceId,
        merchantId: null,
        blockchain: body.blockchain,
        cryptoCurrency: body.cryptoCurrency,
        // No selector here (spec): the deployment's buyer network, a testnet only with checkout.offerTestnets.
        testnet: config.checkout.offerTestnets,
        method: body.method,
        requireOffered: true,
      });
      const network = getNetwork(deps.registry, payment.blockchain, payment.isTestnet);
      return sendData(req, reply, { payment: checkoutPaymentView(payment, network) }, 201);
    },
    limit('checkout'),
  );

  routes.add(
    'GET',
    '/payments/:id/status',
    (req, reply) =>
      answerWhenRead(readBuyerPayment(db, idParam(req, 'PAYMENT_NOT_FOUND')), (payment) =>
        sendData(req, reply, publicPaymentStatusView(payment, getNetwork(deps.registry, payment.blockchain, payment.isTestnet))),
      ),
    limit('paymentStatus'),
  );

  routes.add(
    'POST',
    '/payments/:id/confirm',
    async (req, reply) => {
      // The token first: without one, nothing about the payment or the body is revealed.
      await verifyIdToken(req.headers.authorization);
      const paymentId = idParam(req, 'PAYMENT_NOT_FOUND');
      const body = parseWith(confirmBody, jsonBody(req) ?? {});
      // Loaded on the first confirmation: it brings an EVM client (daemon memory, docs/performance.md).
      const { confirmContractPayment } = await import('../../app/confirm-payment.ts');
      return sendData(req, reply, await confirmContractPayment(deps, paymentId, body.txHash));
    },
    limit('confirm'),
  );

  routes.finish();
}
