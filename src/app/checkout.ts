import { randomUUID } from 'node:crypto';
import { newId } from '../domain/ids.ts';
import { findToken, getNetwork, availableCurrencies, type ResolvedNetwork, type TokenRef } from '../chains/registry.ts';
import { isChainSlug } from '../chains/slugs.ts';
import { GatewayError } from '../domain/errors.ts';
import { priceInvoice } from '../domain/pricing.ts';
import { externalIdFromUuid } from '../domain/external-id.ts';
import type { PaymentMethod } from '../domain/payment-methods.ts';
import { INVOICE_TRANSITIONS } from '../domain/lifecycle.ts';
import { readInvoice, type InvoiceSnapshot } from '../store/invoices.ts';
import { openPayment, type OpenedPayment, type PaymentPlan } from '../store/open-payment.ts';
import { countFreeUpTo } from '../store/wallet-pool.ts';
import { referenceBlocks } from '../store/reference-ids.ts';
import { gatewayCheckoutView } from '../domain/views.ts';
import { availabilityOf } from './availability.ts';
import type { DaemonDeps } from './deps.ts';
import { idempotentWrite, storedAnswer, type WriteOutcome, type WriteRequest } from './idempotent-write.ts';
import { contractFamilies, familyLabels, hasPaymentContract } from '../families/families.ts';

/** A payment window never outlasts its invoice (spec: min(now + 30 min, invoice.expiresAt)). */
export const PAYMENT_WINDOW_MS = 30 * 60_000;

export interface CheckoutInput {
  invoiceId: string;
  /** Scope for the signed gateway; null on the public checkout surface. */
  merchantId: string | null;
  blockchain: string;
  cryptoCurrency: string;
  testnet: boolean;
  method: PaymentMethod;
  /**
   * The buyer surface checks out only what it offers (docs/checkout.md#what-is-offered): a chain whose
   * indexer is not reporting is refused with SERVICE_UNAVAILABLE (an empty pool and a missing price
   * already fail with NO_AVAILABLE_WALLET and RATE_UNAVAILABLE).
   */
  requireOffered?: boolean;
  /**
   * The signed gateway leases nothing on a chain nobody watches: CHAIN_NOT_MONITORED, by the same rule
   * (both off with checkout.indexerStaleAfterSeconds: null), its own code telling the merchant's server
   * why. Unset for in-process callers (tests) that check out without an indexer.
   */
  requireMonitored?: boolean;
}

/** The invoice part of a checkout's answer (the claim made it PAYMENT_PENDING). */
export type CheckedOutInvoice = Pick<InvoiceSnapshot, 'id' | 'referenceId' | 'status' | 'amount' | 'currency' | 'expiresAt'>;

/**
 * Everything a checkout decides before its transaction: the invoice read (expiry applied when due),
 * the checks with their precise errors, the chain and coin, availability and the price. Prices may
 * come from an HTTP source, so no write lock is held meanwhile; the plan is then written by
 * openPayment* in one transaction, whose conditional claim re-checks what could have changed.
 */
export async function planCheckout(deps: DaemonDeps, input: CheckoutInput, now = new Date()): Promise<{ invoice: InvoiceSnapshot; plan: PaymentPlan }> {
  const { db, config } = deps.common;
  const invoice = await readInvoice(db, input.invoiceId, input.merchantId, now);
  assertClaimable(invoice, now);
  const { network, token } = resolvePair(deps, invoice.merchant, input);
  const contract = input.method === 'direct' ? null : contractFor(network, input);
  // Before anything is written (the reference number included), and before a rate is asked for.
  if (input.requireOffered) await availabilityOf(deps).assertIndexed(network, now);
  else if (input.requireMonitored) await availabilityOf(deps).assertMonitored(network, now);

  const priced = await priceInvoice({
    mode: config.pricing.mode,
    invoiceAmountMinor: invoice.amount,
    fiatCurrency: invoice.currency,
    coin: { symbol: token.symbol, decimals: token.decimals },
    rates: deps.rates,
    now,
  });
  const uuid = contract ? randomUUID() : null;
  const plan: PaymentPlan = {
    id: newId(),
    invoiceId: invoice.id,
    merchantId: invoice.merchant.id,
    paymentType: contract ? 'SMART_CONTRACT' : 'DIRECT',
    method: input.method,
    blockchain: network.chain,
    network: network.network,
    isTestnet: network.testnet,
    cryptoCurrency: token.symbol,
    decimals: token.decimals,
    tokenAddress: token.address ?? null,
    amount: priced.amount,
    requiredConfirmations: network.requiredConfirmations,
    treasury: contract?.treasury ?? null,
    contractAddress: contract?.address ?? null,
    externalId: uuid ? externalIdFromUuid(uuid) : null,
    externalIdUuid: uuid,
    metadata: { pricing: priced.pricing },
    expiresAt: new Date(Math.min(now.getTime() + PAYMENT_WINDOW_MS, invoice.expiresAt.getTime())),
    now,
    // Last, once every check passed: a number taken here is used unless the transaction fails.
    referenceId: (await referenceBlocks(db)?.next('PAY', now)) ?? null,
  };
  return { invoice, plan };
}

/** The answer's invoice once the plan is written. */
export function checkedOutInvoice(invoice: InvoiceSnapshot): CheckedOutInvoice {
  return { id: invoice.id, referenceId: invoice.referenceId, status: INVOICE_TRANSITIONS.checkedOut.to, amount: invoice.amount, currency: invoice.currency, expiresAt: invoice.expiresAt };
}

/** After a lease: a warning when the pool is below its low-water mark (counted up to the mark only). */
export async function warnIfPoolLow(deps: DaemonDeps, plan: PaymentPlan): Promise<void> {
  const { db, log, config } = deps.common;
  if (plan.treasury !== null) return;
  const free = await countFreeUpTo(db, { chain: plan.blockchain, isTestnet: plan.isTestnet }, config.pools.lowWaterMark);
  if (free < config.pools.lowWaterMark) {
    log.warn({ chain: plan.blockchain, network: plan.network, free, lowWaterMark: config.pools.lowWaterMark }, 'wallet pool is running low; seed more addresses');
  }
}

/**
 * Opens a payment on an invoice. The claim is atomic on both surfaces: a conditional update
 * OPEN -> PAYMENT_PENDING (no live payment, within expiresAt) is the first write of the
 * transaction, before the pool is touched, and everything after it (lease, payment row) commits
 * with it or rolls it back.
 */
export async function checkoutInvoice(deps: DaemonDeps, input: CheckoutInput, now = new Date()): Promise<{ invoice: CheckedOutInvoice; payment: OpenedPayment }> {
  const { db } = deps.common;
  const { invoice, plan } = await planCheckout(deps, input, now);
  const payment = await db.write((x) => openPayment(x, plan));
  await warnIfPoolLow(deps, plan);
  return { invoice: checkedOutInvoice(invoice), payment };
}

/**
 * The signed gateway's checkout, an idempotent write: read, checked and priced before the write
 * transaction opens (a rate may come over HTTP; no write lock is held meanwhile), then the claim,
 * lease and payment row in the idempotency transaction. A retried key is replayed even when the
 * checks fail now.
 */
export async function openGatewayCheckout(deps: DaemonDeps, request: WriteRequest, input: CheckoutInput, now = new Date()): Promise<WriteOutcome> {
  const { db, log } = deps.common;
  let planned: Awaited<ReturnType<typeof planCheckout>>;
  try {
    planned = await planCheckout(deps, input, now);
  } catch (err) {
    const stored = await storedAnswer(db, request.claim());
    if (stored) return { answer: stored, replayed: true };
    throw err;
  }
  const { plan } = planned;
  const invoice = checkedOutInvoice(planned.invoice);
  const outcome = await idempotentWrite(db, request, 201, async (x) => gatewayCheckoutView(invoice, await openPayment(x, plan)));
  // Not awaited: the low-pool warning never delays the merchant's answer.
  if (outcome.answer.status === 201 && !outcome.replayed) warnIfPoolLow(deps, plan).catch((err: unknown) => log.warn({ err }, 'could not count the free pool addresses after a checkout'));
  return outcome;
}

function assertClaimable(invoice: InvoiceSnapshot, now: Date): void {
  if (invoice.status === 'PAID' || invoice.status === 'CANCELLED') {
    throw new GatewayError('INVOICE_NOT_AVAILABLE', `Invoice is ${invoice.status}`);
  }
  if (invoice.status === 'EXPIRED' || (invoice.status === 'OPEN' && invoice.expiresAt <= now)) {
    throw new GatewayError('INVOICE_EXPIRED', 'Invoice has expired');
  }
  if (invoice.hasLivePayment) throw new GatewayError('PAYMENT_ALREADY_IN_PROGRESS', 'A payment is already in progress for this invoice');
  if (invoice.status !== 'OPEN') throw new GatewayError('INVOICE_NOT_AVAILABLE', `Invoice is ${invoice.status}`);
}

function resolvePair(deps: DaemonDeps, merchant: InvoiceSnapshot['merchant'], input: CheckoutInput): { network: ResolvedNetwork; token: TokenRef } {
  const slug = input.blockchain;
  if (!isChainSlug(slug)) throw new GatewayError('INVALID_CURRENCY', `Unknown blockchain ${JSON.stringify(slug)}`);
  const network = getNetwork(deps.registry, slug, input.testnet);
  const token = findToken(network, input.cryptoCurrency);
  const offered = availableCurrencies(deps.registry, { acceptedChains: merchant.acceptedChains ?? null, acceptedCurrencies: merchant.acceptedCurrencies ?? null }, input.testnet);
  const symbols = offered.availableCurrencies[slug] ?? [];
  if (!token || input.cryptoCurrency !== token.symbol || !symbols.includes(token.symbol)) {
    throw new GatewayError(
      'INVALID_CURRENCY',
      symbols.length
        ? `${input.cryptoCurrency} is not accepted on ${slug}${input.testnet ? ' testnet' : ''}; choose one of ${symbols.join(', ')}`
        : `${slug}${input.testnet ? ' testnet' : ''} is not accepted by this merchant`,
    );
  }
  return { network, token };
}

function contractFor(network: ResolvedNetwork, input: CheckoutInput): { address: string; treasury: string } {
  if (!hasPaymentContract(network.family)) {
    throw new GatewayError('BLOCKCHAIN_NOT_SUPPORTED', `Method ${input.method} works on ${familyLabels(contractFamilies())} chains only, not ${network.chain}; use method "direct"`);
  }
  if (!network.paymentContract || !network.treasury) {
    throw new GatewayError('CONTRACT_NOT_CONFIGURED', `No payment contract is configured for ${network.chain}; use method "direct"`);
  }
  return { address: network.paymentContract, treasury: network.treasury };
}
