import type { FastifyInstance, FastifyRequest } from 'fastify';
import { getNetwork } from '../../chains/registry.ts';
import { GatewayError } from '../../domain/errors.ts';
import { buyerInvoiceStatus, buyerPayment, readCheckoutInvoice } from '../../app/buyer-reads.ts';
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
 * The buyer checkout API (/checkout/api/v1): no key and no signature, the invoice id is the
 * capability; only /confirm takes an id token. Per-route rate limits and CORS live in this scope.
 */
export async function checkoutPlugin(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
  const { config, log } = deps.common;
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
    async (req, reply) => {
      const { invoice, offered } = await readCheckoutInvoice(deps, idParam(req, 'INVOICE_NOT_FOUND'));
      return sendData(req, reply, publicInvoiceView(invoice, offered));
    },
    limit('invoiceRead'),
  );

  routes.add(
    'GET',
    '/invoices/:id/status',
    async (req, reply) => {
      const { invoice, latest } = await buyerInvoiceStatus(deps, idParam(req, 'INVOICE_NOT_FOUND'));
      return sendData(req, reply, invoiceStatusView(invoice, latest));
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
    async (req, reply) => {
      const payment = await buyerPayment(deps, idParam(req, 'PAYMENT_NOT_FOUND'));
      return sendData(req, reply, publicPaymentStatusView(payment, getNetwork(deps.registry, payment.blockchain, payment.isTestnet)));
    },
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
