import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { availableCurrencies, getNetwork, pollIntervalMs, type ResolvedNetwork } from '../../chains/registry.ts';
import type { ChainSlug } from '../../chains/slugs.ts';
import type { Config } from '../../config/schema.ts';
import type { BuyerInvoice } from '../../domain/views.ts';
import { buyerInvoice, minorToMajor, type PaymentDetails, paymentDetailsOfInvoice, paymentOfInvoice, settledPaymentOfInvoice } from '../../app/buyer-reads.ts';
import { GatewayError } from '../../domain/errors.ts';
import { LIVE_PAYMENT_STATUSES } from '../../domain/lifecycle.ts';
import { availabilityOf, buyerNetwork } from '../../app/availability.ts';
import type { DaemonDeps } from '../../app/deps.ts';
import { RouteTable } from '../app.ts';
import { paymentUri } from '../checkout/payment-uri.ts';
import { isIdShaped } from '../validation.ts';
import { loadAssets } from './assets.ts';
import { format, formatFiat, renderMessage, renderShell, type AssetUrls } from './render.ts';
import { strings } from './strings.en.ts';
import { hasPaymentContract } from '../../families/families.ts';

// The hosted payment page, `{checkoutPageUrl}/i/{invoiceId}` (spec rule 5; docs/hosted-page.md).
// Served by `serve` itself: HTML from render.ts, a script and a stylesheet from assets/, the QR code
// as SVG from this server, and ethers' bundle for wallets. Nothing is loaded from anywhere else.

/** The script, styles, images and fetches of the page all come from this origin; nothing inline. */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** The API the page's script calls, on the page's own origin. */
const API_BASE = '/checkout/api/v1';

/** Path prefix of the page: the path of server.checkoutPageUrl ('' when null or at the root). */
export function pagePathOf(config: Config): string {
  return config.server.checkoutPageUrl ? new URL(config.server.checkoutPageUrl).pathname.replace(/\/+$/, '') : '';
}

export async function pagePlugin(app: FastifyInstance, deps: DaemonDeps, pagePath: string): Promise<void> {
  const assets = loadAssets();
  const assetUrl = (name: string): string => `${pagePath}/assets/${name}?v=${assets.get(name)!.version}`;
  const urls: AssetUrls = { css: assetUrl('page.css'), js: assetUrl('page.js'), icon: assetUrl('icon.svg') };

  app.addHook('onSend', async (_req, reply, payload) => {
    if (!reply.hasHeader('Content-Security-Policy')) reply.header('Content-Security-Policy', PAGE_CSP);
    reply.header('X-Content-Type-Options', 'nosniff');
    // The invoice id in the URL is a bearer credential: never send it to the merchant or anyone else.
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('X-Frame-Options', 'DENY');
    reply.header('Cross-Origin-Opener-Policy', 'same-origin');
    reply.header('Cross-Origin-Resource-Policy', 'same-origin');
    reply.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), payment=(), usb=()');
    if (!reply.hasHeader('Cache-Control')) reply.header('Cache-Control', 'no-store');
    return payload;
  });

  // A buyer gets a page, not a JSON envelope, whatever goes wrong (rate limits included).
  app.setErrorHandler((err: FastifyError | GatewayError, req, reply) => {
    const status = err instanceof GatewayError ? err.status : (err.statusCode ?? 500);
    if (err instanceof GatewayError && err.headers) reply.headers(err.headers);
    if (status >= 500) req.log.error({ err }, 'hosted page error');
    const retry = err instanceof GatewayError && err.code === 'RATE_LIMITED' ? (err.headers?.['Retry-After'] ?? '1') : null;
    return sendHtml(reply, status, renderMessage({
      strings,
      assets: urls,
      kind: 'error',
      title: strings.errorTitle,
      text: retry ? format(strings.errorRateLimited, { seconds: retry }) : strings.errorGeneric,
      link: null,
    }));
  });

  const routes = new RouteTable(app);

  routes.add('GET', '/assets/:name', async (req, reply) => {
    const { name } = req.params as { name: string };
    const asset = assets.get(name);
    if (!asset) return sendHtml(reply, 404, notFoundPage(urls));
    const etag = `"${asset.version}"`;
    const { v } = req.query as { v?: string };
    reply
      .header('Content-Type', asset.type)
      .header('ETag', etag)
      // Versioned URLs never change; an unversioned one is revalidated.
      .header('Cache-Control', v === asset.version ? 'public, max-age=31536000, immutable' : 'no-cache');
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.send(asset.body);
  });

  routes.add('GET', '/i/:id', async (req, reply) => {
    const invoice = await findInvoice(deps, (req.params as { id: string }).id);
    if (!invoice) return sendHtml(reply, 404, notFoundPage(urls));
    const merchant = invoice.merchant.name;
    const back = (href: string | null | undefined) => (href ? { href, label: format(strings.backToMerchant, { merchant }) } : null);
    switch (invoice.status) {
      case 'EXPIRED':
        return sendHtml(reply, 200, renderMessage({ strings, assets: urls, kind: 'expired', title: strings.expiredTitle, text: strings.expiredText, link: back(invoice.cancelUrl) }));
      case 'CANCELLED':
        return sendHtml(reply, 200, renderMessage({ strings, assets: urls, kind: 'cancelled', title: strings.cancelledTitle, text: strings.cancelledText, link: back(invoice.cancelUrl) }));
      case 'PAID': {
        // Completed is settled (spec rule 10), but the buyer is told when the amount fell short or went over.
        const said = settlementWords(await settledPaymentOfInvoice(deps, invoice.id), merchant);
        return sendHtml(reply, 200, renderMessage({ strings, assets: urls, kind: said?.short ? 'short' : 'paid', title: said?.title ?? strings.paidTitle, text: said?.text ?? strings.paidText, link: back(invoice.returnUrl) }));
      }
    }
    return sendHtml(reply, 200, renderShell({
      strings,
      assets: urls,
      merchantName: merchant,
      description: invoice.description,
      amount: invoice.amount,
      currency: invoice.currency,
      referenceId: invoice.referenceId,
      cancelUrl: invoice.cancelUrl ?? null,
      banners: banners(deps.common.config),
      boot: {
        invoiceId: invoice.id,
        apiBase: API_BASE,
        qrBase: `${pagePath}/i/${invoice.id}/payments/`,
        ethersUrl: assetUrl('ethers.min.js'),
        // The statuses the page keeps polling: the lifecycle's one list, never a copy in page.js.
        liveStatuses: LIVE_PAYMENT_STATUSES,
        ...(await chainTable(deps, invoice)),
        strings,
      },
    }));
  });

  routes.add('GET', '/i/:id/payments/:paymentId/qr.svg', async (req, reply) => {
    const { id, paymentId } = req.params as { id: string; paymentId: string };
    const payment = isIdShaped(id) && isIdShaped(paymentId) ? await paymentOfInvoice(deps, id, paymentId).catch(notFoundAsNull) : null;
    if (payment?.paymentType !== 'DIRECT') return sendHtml(reply, 404, notFoundPage(urls));
    // The QR code carries the leased address, which is never shown after payment.expiresAt.
    if (new Date() >= payment.expiresAt) return sendHtml(reply, 410, notFoundPage(urls));
    const network = getNetwork(deps.registry, payment.blockchain, payment.isTestnet);
    const uri = paymentUri({ family: network.family, chainId: network.chainId, address: payment.address, amount: payment.amount, decimals: payment.decimals, tokenAddress: payment.tokenAddress ?? null });
    // Loaded on the first QR code, not at start (daemon memory, docs/performance.md).
    const { default: QRCode } = await import('qrcode');
    const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2, color: { dark: '#111827', light: '#ffffff' } });
    return reply.header('Content-Type', 'image/svg+xml').header('Content-Security-Policy', "default-src 'none'").send(svg);
  });

  // What the page shows beside the status poll: the price behind the amount, and how the settled
  // amount compares with the asked one. Served here, not on the checkout API, whose answers the
  // specification fixes; the invoice id in the path is the same credential as the page's.
  routes.add('GET', '/i/:id/payments/:paymentId/details', async (req, reply) => {
    const { id, paymentId } = req.params as { id: string; paymentId: string };
    const details = isIdShaped(id) && isIdShaped(paymentId) ? await paymentDetailsOfInvoice(deps, id, paymentId).catch(notFoundAsNull) : null;
    if (!details) return reply.code(404).header('Content-Type', 'application/json; charset=utf-8').send({ found: false });
    return reply.header('Content-Type', 'application/json; charset=utf-8').send(detailsView(details));
  });

  routes.finish();
}

/** The details in the words the page shows (amounts in the coin's units, fiat formatted, the rate's source named). */
function detailsView(d: PaymentDetails) {
  const p = d.pricing;
  return {
    status: d.status,
    cryptoCurrency: d.cryptoCurrency,
    tokenAddress: d.tokenAddress,
    amount: d.amount,
    expectedAmount: d.expectedAmount,
    receivedAmount: d.receivedAmount,
    settlement: d.settlement,
    price: p
      ? {
          fiatValue: `${formatFiat(p.amountMinor, p.fiat)} ${p.fiat}`,
          receivedFiatValue: `${formatFiat(p.receivedMinor, p.fiat)} ${p.fiat}`,
          rate: format(strings.rateIs, { coin: d.cryptoCurrency, rate: p.rate, currency: p.fiat }),
          source: sourceWords(p.source),
          at: p.at,
          major: minorToMajor(p.amountMinor, p.exponent),
        }
      : null,
  };
}

function sourceWords(source: string | null): string {
  if (source === 'static') return strings.rateSourceStatic;
  if (source === 'peg') return strings.rateSourcePeg;
  return source ? format(strings.rateSourceNamed, { source }) : strings.rateSourceUnknown;
}

/** The PAID page's words when the amount was not the asked one; null when exact (or unknown). */
function settlementWords(d: PaymentDetails | null, merchant: string): { title: string; text: string; short: boolean } | null {
  if (!d?.settlement || d.settlement.kind === 'exact') return null;
  const values = { received: d.receivedAmount, expected: d.expectedAmount, difference: d.settlement.difference, coin: d.cryptoCurrency, merchant };
  return d.settlement.kind === 'underpaid'
    ? { title: strings.underpaidTitle, text: format(strings.underpaidText, values), short: true }
    : { title: strings.overpaidTitle, text: format(strings.overpaidText, values), short: false };
}

function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.code(status).header('Content-Type', 'text/html; charset=utf-8').send(html);
}

function notFoundPage(assets: AssetUrls): string {
  return renderMessage({ strings, assets, kind: 'not-found', title: strings.notFoundTitle, text: strings.notFoundText, link: null });
}

function notFoundAsNull(err: unknown): null {
  if (err instanceof GatewayError && (err.code === 'INVOICE_NOT_FOUND' || err.code === 'PAYMENT_NOT_FOUND')) return null;
  throw err;
}

async function findInvoice(deps: DaemonDeps, id: string): Promise<BuyerInvoice | null> {
  if (!isIdShaped(id)) return null;
  return buyerInvoice(deps, id).catch(notFoundAsNull);
}

/** What the page says above everything on a deployment that must never take real money. */
function banners(config: Config): string[] {
  const out: string[] = [];
  if (config.checkout.demoBanner) out.push(strings.demoBanner);
  if (config.checkout.offerTestnets) out.push(strings.testnetBanner);
  return out;
}

type NetworkInfo = { name: string; label: string; testnet: boolean; family: string; chainId: number | null; pollMs: number; confirmPollMs: number; web3: boolean };

function networkInfo(name: string, network: ResolvedNetwork): NetworkInfo {
  return {
    name,
    label: network.label,
    testnet: network.testnet,
    family: network.family,
    chainId: network.chainId,
    // As often as the chain can change (its block time, at least every 5 s), but at least every 15 s.
    pollMs: Math.min(pollIntervalMs(network), 15_000),
    // While money is in flight on a chain faster than that floor, every 2 s (block time at most 15 s):
    // the tracker's CONFIRMING state may last only a few seconds, and the buyer should see it.
    confirmPollMs: Math.min(Math.max(network.blockTimeMs, 2_000), pollIntervalMs(network), 15_000),
    web3: hasPaymentContract(network.family) && network.paymentContract !== null && network.treasury !== null,
  };
}

/**
 * What page.js needs to know. `chains`: the chains the buyer is offered now, each on the deployment's
 * buyer network (mainnet, or the testnet with checkout.offerTestnets; the same list as the public
 * read's availableBlockchains). `networks`: every network a
 * payment of this invoice can be on, keyed `${slug}:${payment.network}`, so a testnet payment (opened
 * through the gateway) is labelled, polled and paid on its own network, never on mainnet's.
 */
async function chainTable(deps: DaemonDeps, invoice: BuyerInvoice) {
  const merchant = invoice.merchant;
  const choices = { acceptedChains: merchant.acceptedChains ?? null, acceptedCurrencies: merchant.acceptedCurrencies ?? null };
  const offered = await availabilityOf(deps).offered(choices, invoice.currency);
  const chains: Record<string, NetworkInfo> = {};
  for (const slug of offered.availableBlockchains) {
    const chain = deps.registry.chains[slug as ChainSlug];
    chains[slug] = networkInfo(chain.name, buyerNetwork(chain, deps.common.config));
  }
  const networks: Record<string, NetworkInfo> = {};
  for (const slug of availableCurrencies(deps.registry, choices, false).availableBlockchains) {
    const chain = deps.registry.chains[slug as ChainSlug];
    for (const network of [chain.mainnet, chain.testnet]) networks[`${slug}:${network.network}`] = networkInfo(chain.name, network);
  }
  return { chains, networks };
}
