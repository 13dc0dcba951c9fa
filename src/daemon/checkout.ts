import { randomUUID } from 'node:crypto';
import { newId } from '../domain/ids.ts';
import { findToken, getNetwork, availableCurrencies, type ResolvedNetwork, type TokenRef } from '../chains/registry.ts';
import { isChainSlug } from '../chains/slugs.ts';
import { GatewayError } from '../domain/errors.ts';
import { priceInvoice, type PricedAmount } from '../domain/pricing.ts';
import { externalIdFromUuid } from '../domain/external-id.ts';
import { Invoice } from '../db/entities/invoice.entity.ts';
import { MerchantPoint } from '../db/entities/merchant-point.entity.ts';
import { Payment, type PaymentMethod } from '../db/entities/payment.entity.ts';
import { INVOICE_TRANSITIONS, LIVE_PAYMENT_STATUSES } from '../domain/lifecycle.ts';
import { loadInvoice } from '../db/invoices.ts';
import { nextReferenceId } from '../db/reference-ids.ts';
import { inTransaction } from '../db/transaction.ts';
import { countFree, leaseAddress } from '../db/wallet-pool.ts';
import { availabilityOf } from './availability.ts';
import type { DaemonDeps } from './deps.ts';

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
   * already fail with NO_AVAILABLE_WALLET and RATE_UNAVAILABLE). The signed gateway leaves the choice
   * to the merchant's server.
   */
  requireOffered?: boolean;
  /** The price, when the caller fetched it before opening its own transaction (priceCheckout). */
  priced?: PricedAmount;
}

/**
 * Opens a payment on an invoice. The claim is atomic on both surfaces: a conditional update
 * OPEN -> PAYMENT_PENDING is the first write of the transaction, before the pool is touched, and
 * everything after it (lease, payment row) commits with it or rolls it back.
 */
export async function checkoutInvoice(deps: DaemonDeps, input: CheckoutInput, now = new Date()): Promise<{ invoice: Invoice; payment: Payment }> {
  const { db, log, config } = deps.common;
  const invoice = await loadInvoice(db, input.invoiceId, input.merchantId, now);
  await assertClaimable(deps, invoice, now);
  const { network, token } = resolvePair(deps, invoice.merchant, input);
  const contract = input.method === 'direct' ? null : contractFor(network, input);
  if (input.requireOffered) await availabilityOf(deps).assertIndexed(network, now);

  // Prices may come from an HTTP source: fetched before the transaction, then locked on the payment.
  const priced = input.priced ?? await priceInvoice({
    mode: config.pricing.mode,
    invoiceAmountMinor: invoice.amount,
    fiatCurrency: invoice.currency,
    coin: { symbol: token.symbol, decimals: token.decimals },
    rates: deps.rates,
    now,
  });

  const payment = await inTransaction(db, async (em) => {
    const claimed = await em.nativeUpdate(
      Invoice,
      { id: invoice.id, status: { $in: [...INVOICE_TRANSITIONS.checkedOut.from] }, expiresAt: { $gt: now } },
      { status: INVOICE_TRANSITIONS.checkedOut.to, updatedAt: now },
    );
    if (claimed === 0) throw new GatewayError('INVOICE_NOT_AVAILABLE', 'Invoice was claimed by another checkout or is no longer open');

    const id = newId();
    let address: string;
    if (contract) address = contract.treasury;
    else {
      const leased = await leaseAddress(em, db.dialect, { chain: network.chain, isTestnet: network.testnet }, id, now);
      if (!leased) throw new GatewayError('NO_AVAILABLE_WALLET', `No free deposit address for ${network.chain} (${network.network}); try later`);
      address = leased.address;
    }
    const uuid = contract ? randomUUID() : null;
    const created = em.create(Payment, {
      id,
      referenceId: await nextReferenceId(em, 'PAY', now),
      invoice: em.getReference(Invoice, invoice.id),
      merchant: em.getReference(MerchantPoint, invoice.merchant.id),
      status: 'PENDING',
      paymentType: contract ? 'SMART_CONTRACT' : 'DIRECT',
      method: input.method,
      blockchain: network.chain,
      network: network.network,
      isTestnet: network.testnet,
      cryptoCurrency: token.symbol,
      decimals: token.decimals,
      tokenAddress: token.address,
      amount: priced.amount,
      expectedAmount: priced.amount,
      receivedAmount: '0',
      address,
      confirmations: 0,
      requiredConfirmations: network.requiredConfirmations,
      transactionHash: null,
      blockNumber: null,
      contractAddress: contract?.address ?? null,
      externalId: uuid ? externalIdFromUuid(uuid) : null,
      externalIdUuid: uuid,
      metadata: { pricing: priced.pricing },
      expiresAt: new Date(Math.min(now.getTime() + PAYMENT_WINDOW_MS, invoice.expiresAt.getTime())),
      completedAt: null,
      createdAt: now,
    });
    await em.flush();
    return created;
  });

  if (!contract) {
    const free = await countFree(db.em(), { chain: network.chain, isTestnet: network.testnet });
    if (free < config.pools.lowWaterMark) {
      log.warn({ chain: network.chain, network: network.network, free, lowWaterMark: config.pools.lowWaterMark }, 'wallet pool is running low; seed more addresses');
    }
  }
  const fresh = await db.em().findOneOrFail(Invoice, { id: invoice.id }, { refresh: true });
  return { invoice: fresh, payment };
}

/**
 * The price checkoutInvoice would fetch, for a caller that runs checkoutInvoice inside a write
 * transaction of its own (the gateway's idempotency transaction): fetched first, outside it, so a
 * slow rate source never holds a write lock. Invoice amounts and currencies never change.
 */
export async function priceCheckout(deps: DaemonDeps, input: CheckoutInput, now = new Date()): Promise<PricedAmount> {
  const invoice = await loadInvoice(deps.common.db, input.invoiceId, input.merchantId, now);
  const { token } = resolvePair(deps, invoice.merchant, input);
  return priceInvoice({
    mode: deps.common.config.pricing.mode,
    invoiceAmountMinor: invoice.amount,
    fiatCurrency: invoice.currency,
    coin: { symbol: token.symbol, decimals: token.decimals },
    rates: deps.rates,
    now,
  });
}

async function assertClaimable(deps: DaemonDeps, invoice: Invoice, now: Date): Promise<void> {
  if (invoice.status === 'PAID' || invoice.status === 'CANCELLED') {
    throw new GatewayError('INVOICE_NOT_AVAILABLE', `Invoice is ${invoice.status}`);
  }
  if (invoice.status === 'EXPIRED' || (invoice.status === 'OPEN' && invoice.expiresAt <= now)) {
    throw new GatewayError('INVOICE_EXPIRED', 'Invoice has expired');
  }
  const live = await deps.common.db.em().count(Payment, { invoice: invoice.id, status: { $in: [...LIVE_PAYMENT_STATUSES] } });
  if (live > 0) throw new GatewayError('PAYMENT_ALREADY_IN_PROGRESS', 'A payment is already in progress for this invoice');
  if (invoice.status !== 'OPEN') throw new GatewayError('INVOICE_NOT_AVAILABLE', `Invoice is ${invoice.status}`);
}

function resolvePair(deps: DaemonDeps, merchant: MerchantPoint, input: CheckoutInput): { network: ResolvedNetwork; token: TokenRef } {
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
  if (network.family !== 'evm') {
    throw new GatewayError('BLOCKCHAIN_NOT_SUPPORTED', `Method ${input.method} works on EVM chains only, not ${network.chain}; use method "direct"`);
  }
  if (!network.paymentContract || !network.treasury) {
    throw new GatewayError('CONTRACT_NOT_CONFIGURED', `No payment contract is configured for ${network.chain}; use method "direct"`);
  }
  return { address: network.paymentContract, treasury: network.treasury };
}
