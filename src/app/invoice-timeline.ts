import { explorerTxUrl, getNetwork, type ResolvedRegistry } from '../chains/registry.ts';
import { isChainSlug } from '../chains/slugs.ts';
import { can, roleOn, type Role } from '../domain/dashboard-roles.ts';
import { GatewayError } from '../domain/errors.ts';
import { coinToMinor, formatFiat } from '../domain/fiat-value.ts';
import { formatUnits } from '../domain/money.ts';
import { eventsOfInvoice, invoicePoint, refundsOfPayments, transfersOfPayments, type InvoiceAttempt, type InvoiceDelivery, type InvoiceEvent, type PaymentTransfer } from '../store/invoice-history.ts';
import { invoicePayments, loadInvoice } from '../store/invoices.ts';
import { amountDifference } from '../store/lifecycle.ts';
import { getMerchantOrThrow } from '../store/merchants.ts';
import type { StoredPayment } from '../store/records.ts';
import type { RefundRow } from '../store/refunds.ts';
import type { DaemonDeps } from './deps.ts';
import type { DashboardPrincipal } from './dashboard-session.ts';

// The dashboard's invoice detail (docs/dashboard.md#invoice-detail): the invoice, each payment's
// expected / received / difference in coin units and at the rate it was priced at, and one
// timeline of everything recorded about it, in time order. Chain facts (confirmations, completion)
// carry their block's time; what the server saw or did carries the server's clock.

export type PaymentOutcome = 'nothing' | 'underpaid' | 'exact' | 'overpaid';

export interface FiatAmounts {
  currency: string;
  /** Fiat major units per coin, as priced when the payment was opened. */
  rate: string;
  source: string | null;
  expected: string;
  received: string;
  difference: string;
}

export interface PaymentDetail {
  id: string;
  referenceId: string;
  status: string;
  blockchain: string;
  network: string;
  isTestnet: boolean;
  cryptoCurrency: string;
  address: string;
  confirmations: number;
  requiredConfirmations: number;
  transactionHash: string | null;
  transactionUrl: string | null;
  expected: string;
  received: string;
  difference: string;
  outcome: PaymentOutcome;
  /** The coin amounts at the priced rate; null when it was not priced (verbatim) or cannot be. */
  fiat: FiatAmounts | null;
  createdAt: string;
  completedAt: string | null;
  /** The refund form (issue 40's refunds), for a role that moves money and a payment that received something. */
  refundUrl: string | null;
}

export interface TimelineEntry {
  at: string;
  /** What happened: invoice.created, invoice.viewed, payment.checkout, transfer.seen, transfer.reorged, payment.*, invoice.*, webhook.attempt, webhook.pending, refund.* */
  type: string;
  paymentId: string | null;
  summary: string;
  /** Facts shown beside the summary, in order. */
  facts: { label: string; value: string }[];
  /** A transaction on the chain's explorer, when the registry (or config) names one. */
  link: { href: string; label: string } | null;
  tone: 'ok' | 'warn' | 'error' | null;
}

export interface InvoiceDetail {
  invoice: {
    id: string;
    referenceId: string;
    orderId: string;
    status: string;
    amount: string;
    currency: string;
    /** amount in major units ("25.00"). */
    amountText: string;
    description: string;
    customerEmail: string | null;
    customerName: string | null;
    customerMetadata: unknown;
    metadata: unknown;
    returnUrl: string | null;
    cancelUrl: string | null;
    expiresAt: string;
    viewedAt: string | null;
    paidAt: string | null;
    cancelledAt: string | null;
    createdAt: string;
  };
  point: { id: string; name: string; url: string; webhooksUrl: string };
  role: Role;
  payments: PaymentDetail[];
  timeline: TimelineEntry[];
}

const notFound = () => new GatewayError('INVOICE_NOT_FOUND', 'Invoice not found');
const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function txLink(registry: ResolvedRegistry, chain: string, isTestnet: boolean, txHash: string | null): string | null {
  if (!txHash || !isChainSlug(chain)) return null;
  return explorerTxUrl(getNetwork(registry, chain, isTestnet), txHash);
}

function outcomeOf(p: StoredPayment, difference: string): PaymentOutcome {
  if (/^0(\.0+)?$/.test(p.receivedAmount)) return 'nothing';
  if (difference.startsWith('-')) return 'underpaid';
  return /^0(\.0+)?$/.test(difference) ? 'exact' : 'overpaid';
}

function pricingOf(p: StoredPayment): { rate: string | null; fiat: string; source: string | null } | null {
  const pricing = (p.metadata as { pricing?: { rate?: unknown; fiat?: unknown; source?: unknown } }).pricing;
  if (!pricing || typeof pricing.fiat !== 'string') return null;
  return { rate: typeof pricing.rate === 'string' ? pricing.rate : null, fiat: pricing.fiat, source: typeof pricing.source === 'string' ? pricing.source : null };
}

function fiatOf(p: StoredPayment, difference: string): FiatAmounts | null {
  const pricing = pricingOf(p);
  if (!pricing || pricing.rate === null) return null;
  const at = (amount: string) => coinToMinor(amount.replace(/^-/, ''), p.decimals, pricing.rate, pricing.fiat);
  const expected = at(p.expectedAmount);
  const received = at(p.receivedAmount);
  const diff = at(difference);
  if (expected === null || received === null || diff === null) return null;
  return {
    currency: pricing.fiat,
    rate: pricing.rate,
    source: pricing.source,
    expected: formatFiat(expected, pricing.fiat),
    received: formatFiat(received, pricing.fiat),
    difference: formatFiat(difference.startsWith('-') ? -diff : diff, pricing.fiat),
  };
}

function paymentDetail(registry: ResolvedRegistry, role: Role, p: StoredPayment): PaymentDetail {
  const difference = amountDifference(p);
  const outcome = outcomeOf(p, difference);
  const refundable = outcome !== 'nothing' && ['COMPLETED', 'FAILED', 'EXPIRED'].includes(p.status);
  return {
    id: p.id,
    referenceId: p.referenceId,
    status: p.status,
    blockchain: p.blockchain,
    network: p.network,
    isTestnet: p.isTestnet,
    cryptoCurrency: p.cryptoCurrency,
    address: p.address,
    confirmations: p.confirmations,
    requiredConfirmations: p.requiredConfirmations,
    transactionHash: p.transactionHash,
    transactionUrl: txLink(registry, p.blockchain, p.isTestnet, p.transactionHash),
    expected: p.expectedAmount,
    received: p.receivedAmount,
    difference,
    outcome,
    fiat: fiatOf(p, difference),
    createdAt: p.createdAt.toISOString(),
    completedAt: iso(p.completedAt),
    refundUrl: refundable && can(role, 'money') ? `/dashboard/payments/${p.id}/refund` : null,
  };
}

/** A transfer's amount in its payment's coin when the indexer named the coin, else in atomic units. */
function transferAmount(t: PaymentTransfer, p: StoredPayment): string {
  return t.symbol ? `${formatUnits(BigInt(t.amount), p.decimals)} ${t.symbol}` : `${t.amount} atomic units of ${t.tokenAddress ?? 'the native coin'}`;
}

const TRANSFER_WORDS: Record<string, { summary: string; tone: TimelineEntry['tone'] }> = {
  CREDITED: { summary: 'Transfer seen and credited', tone: 'ok' },
  LATE: { summary: 'Late funds: transfer seen, not credited', tone: 'warn' },
  EXTRA: { summary: 'Extra funds after completion: transfer seen, not credited', tone: 'warn' },
  NOT_CREDITED: { summary: 'Transfer seen, not credited', tone: 'warn' },
  OWN: { summary: "The deployment's own transfer (a refund's change or a fee top-up)", tone: null },
  REVERTED: { summary: 'Transfer reverted on chain', tone: 'error' },
  UNMATCHED: { summary: 'Transfer seen', tone: null },
  // A REORGED row was seen first (this entry) and un-credited later (its own entry).
  REORGED: { summary: 'Transfer seen', tone: null },
};

/**
 * When the chain carried a transfer: the block time the ledger stamped on the facts it caused (the
 * payment's first confirmation or completion naming it as the payment's transaction, or its
 * late-funds event), when earlier than the moment the indexer recorded it (an indexer catching up
 * records old blocks). The transfer rows keep no block time of their own.
 */
function chainTimeOf(t: PaymentTransfer, events: InvoiceEvent[]): Date {
  let at = t.createdAt;
  for (const e of events) {
    if (e.paymentId !== t.paymentId || e.createdAt >= at) continue;
    const data = e.data as { payment?: { transactionHash?: unknown }; transfer?: { txHash?: unknown; logIndex?: unknown } };
    const names =
      e.type === 'payment.late_funds'
        ? data.transfer?.txHash === t.txHash && data.transfer?.logIndex === t.logIndex
        : (e.type === 'payment.confirming' || e.type === 'payment.completed') && t.status !== 'LATE' && t.status !== 'EXTRA' && data.payment?.transactionHash === t.txHash;
    if (names) at = e.createdAt;
  }
  return at;
}

/** Causal order of entries at the same instant (block times are whole seconds; fast chains put several blocks in one). */
const RANK: Record<string, number> = {
  'invoice.created': 0,
  'invoice.viewed': 1,
  'payment.checkout': 2,
  'transfer.seen': 3,
  'payment.confirming': 4,
  'transfer.reorged': 4,
  'payment.completed': 5,
  'payment.failed': 5,
  'payment.expired': 5,
  'invoice.paid': 6,
  'transfer.late': 7,
  'payment.late_funds': 7,
  'refund.planned': 8,
  'refund.confirmed': 8,
  'payment.refunded': 9,
  'webhook.pending': 10,
  'webhook.attempt': 10,
  'invoice.expired': 11,
  'invoice.cancelled': 11,
};

function transferEntries(registry: ResolvedRegistry, t: PaymentTransfer, p: StoredPayment, events: InvoiceEvent[]): TimelineEntry[] {
  const link = txLink(registry, t.chain, p.isTestnet, t.txHash);
  const facts = [
    { label: 'amount', value: transferAmount(t, p) },
    { label: 'transaction', value: t.txHash },
    { label: 'block', value: t.blockNumber },
    ...(t.fromAddress ? [{ label: 'from', value: t.fromAddress }] : []),
  ];
  const words = TRANSFER_WORDS[t.status] ?? { summary: `Transfer seen (${t.status})`, tone: null };
  const onChain = chainTimeOf(t, events);
  const seen: TimelineEntry = {
    at: onChain.toISOString(),
    type: 'transfer.seen',
    paymentId: p.id,
    summary: words.summary,
    facts: [
      ...facts,
      ...(t.note && t.status !== 'REORGED' ? [{ label: 'note', value: t.note }] : []),
      ...(onChain < t.createdAt ? [{ label: 'recorded by the indexer', value: t.createdAt.toISOString() }] : []),
    ],
    link: link ? { href: link, label: 'View the transaction' } : null,
    tone: words.tone,
  };
  if (t.status !== 'REORGED') return [seen];
  return [
    seen,
    {
      at: t.updatedAt.toISOString(),
      type: 'transfer.reorged',
      paymentId: p.id,
      summary: 'Reorg: the transfer left the canonical chain and was un-credited',
      facts: [...facts, ...(t.note ? [{ label: 'why', value: t.note }] : [])],
      link: link ? { href: link, label: 'View the transaction' } : null,
      tone: 'error',
    },
  ];
}

function eventEntry(e: InvoiceEvent, byId: Map<string, StoredPayment>): TimelineEntry | null {
  const p = e.paymentId ? byId.get(e.paymentId) : undefined;
  const data = e.data as { payment?: { confirmations?: unknown; received_amount?: unknown; amount_difference?: unknown; metadata?: { failure_reason?: unknown } }; transfer?: { txHash?: unknown; amount?: unknown; reason?: unknown }; refunds?: unknown[] };
  const base = { at: e.createdAt.toISOString(), type: e.type, paymentId: e.paymentId, link: null };
  const coin = p?.cryptoCurrency ?? '';
  switch (e.type) {
    case 'payment.confirming':
      return { ...base, summary: 'CONFIRMING: first confirmation', facts: [{ label: 'confirmations', value: `${String(data.payment?.confirmations ?? 1)} of ${p?.requiredConfirmations ?? '?'}` }], tone: null };
    case 'payment.completed':
      return {
        ...base,
        summary: 'COMPLETED',
        facts: [
          { label: 'confirmations', value: `${String(data.payment?.confirmations ?? p?.requiredConfirmations ?? '')} of ${p?.requiredConfirmations ?? '?'}` },
          { label: 'received', value: `${String(data.payment?.received_amount ?? '')} ${coin}` },
          { label: 'difference', value: `${String(data.payment?.amount_difference ?? '')} ${coin}` },
        ],
        tone: 'ok',
      };
    case 'payment.failed':
      return { ...base, summary: 'FAILED', facts: [{ label: 'why', value: String(data.payment?.metadata?.failure_reason ?? '') }], tone: 'error' };
    case 'payment.expired':
      return { ...base, summary: 'Payment EXPIRED: nothing arrived within its window', facts: [], tone: null };
    case 'payment.late_funds':
      return {
        ...base,
        type: 'payment.late_funds',
        summary: 'Late funds announced (payment.late_funds)',
        facts: [
          { label: 'amount', value: `${String(data.transfer?.amount ?? '')} ${coin}` },
          { label: 'reason', value: String(data.transfer?.reason ?? '') },
          { label: 'transaction', value: String(data.transfer?.txHash ?? '') },
        ],
        tone: 'warn',
      };
    case 'payment.refunded':
      return { ...base, summary: 'REFUNDED: refunds cover everything received', facts: [], tone: null };
    case 'invoice.paid':
      return { ...base, summary: 'Invoice PAID', facts: [], tone: 'ok' };
    case 'invoice.expired':
      return { ...base, summary: 'Invoice EXPIRED', facts: [], tone: null };
    case 'invoice.cancelled':
      return { ...base, summary: 'Invoice CANCELLED', facts: [], tone: null };
    default:
      return null;
  }
}

function webhookEntries(events: InvoiceEvent[], deliveries: InvoiceDelivery[], attempts: InvoiceAttempt[]): TimelineEntry[] {
  const eventOf = new Map(events.map((e) => [e.id, e]));
  const out: TimelineEntry[] = [];
  for (const d of deliveries) {
    const e = eventOf.get(d.eventId)!;
    const mine = attempts.filter((a) => a.deliveryId === d.id);
    const replay = d.replayOf ? [{ label: 'replay of', value: d.replayOf }] : [];
    for (const [i, a] of mine.entries()) {
      const ok = a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300;
      const last = i === mine.length - 1;
      out.push({
        at: a.attemptedAt.toISOString(),
        type: 'webhook.attempt',
        paymentId: e.paymentId,
        summary: `Webhook ${e.type}: ${a.statusCode === null ? 'no answer' : `HTTP ${a.statusCode}`} in ${a.durationMs} ms`,
        facts: [
          { label: 'attempt', value: String(a.attemptNumber ?? i + 1) },
          { label: 'url', value: a.url ?? '(none)' },
          ...(a.error ? [{ label: 'error', value: a.error.slice(0, 300) }] : []),
          ...replay,
          ...(last && d.state === 'PENDING' && d.nextAttemptAt ? [{ label: 'next attempt', value: d.nextAttemptAt.toISOString() }] : []),
          ...(last && d.state === 'FAILED' ? [{ label: 'delivery', value: 'gave up (out of attempts)' }] : []),
        ],
        link: null,
        tone: ok ? 'ok' : 'error',
      });
    }
    if (mine.length === 0 && d.state === 'PENDING') {
      out.push({
        at: d.createdAt.toISOString(),
        type: 'webhook.pending',
        paymentId: e.paymentId,
        summary: `Webhook ${e.type} queued`,
        facts: [...(d.nextAttemptAt ? [{ label: 'first attempt due', value: d.nextAttemptAt.toISOString() }] : []), ...replay],
        link: null,
        tone: null,
      });
    }
  }
  return out;
}

function refundEntries(registry: ResolvedRegistry, refunds: RefundRow[]): TimelineEntry[] {
  return refunds.flatMap((r) => {
    const amount = `${formatUnits(BigInt(r.amount), r.decimals)} ${r.symbol}`;
    const link = txLink(registry, r.chain, r.isTestnet, r.txid);
    const facts = [
      { label: 'amount', value: amount },
      { label: 'to', value: r.toAddress },
      { label: 'state', value: r.state },
      ...(r.txid ? [{ label: 'transaction', value: r.txid }] : []),
    ];
    const planned: TimelineEntry = { at: r.createdAt.toISOString(), type: 'refund.planned', paymentId: r.paymentId, summary: `Refund planned: ${amount}`, facts, link: link ? { href: link, label: 'View the transaction' } : null, tone: null };
    if (!r.finalAt) return [planned];
    return [planned, { at: r.finalAt.toISOString(), type: 'refund.confirmed', paymentId: r.paymentId, summary: `Refund CONFIRMED: ${amount}`, facts, link: planned.link, tone: 'ok' }];
  });
}

function checkoutEntry(p: StoredPayment): TimelineEntry {
  const pricing = pricingOf(p);
  return {
    at: p.createdAt.toISOString(),
    type: 'payment.checkout',
    paymentId: p.id,
    summary: `Checkout: ${p.cryptoCurrency} on ${p.blockchain}${p.isTestnet ? ` (${p.network})` : ''}`,
    facts: [
      { label: 'payment', value: p.referenceId },
      { label: 'address', value: p.address },
      { label: 'expected', value: `${p.expectedAmount} ${p.cryptoCurrency}` },
      { label: 'rate used', value: pricing?.rate ? `1 ${p.cryptoCurrency} = ${pricing.rate} ${pricing.fiat}${pricing.source ? ` (${pricing.source})` : ''}` : 'none (verbatim pricing)' },
      { label: 'window ends', value: p.expiresAt.toISOString() },
    ],
    link: null,
    tone: null,
  };
}

/**
 * The invoice detail for a user who may read the invoice's point; any other invoice, or an id that
 * cannot be one, does not exist for them (404 INVOICE_NOT_FOUND, as the gateway scopes by point).
 */
export async function invoiceDetail(deps: DaemonDeps, principal: DashboardPrincipal, invoiceId: string): Promise<InvoiceDetail> {
  const { db } = deps.common;
  if (!/^[a-z0-9]{1,32}$/.test(invoiceId)) throw notFound();
  const pointId = await invoicePoint(db, invoiceId);
  const role = pointId ? roleOn(principal.grants, pointId) : null;
  if (!pointId || !role || !can(role, 'read')) throw notFound();
  // The read shows what the expiry rules make of the invoice now (docs/architecture.md#the-store).
  const invoice = await loadInvoice(db, invoiceId, pointId);
  const [merchant, payments, history] = await Promise.all([getMerchantOrThrow(db, pointId), invoicePayments(db, invoiceId), eventsOfInvoice(db, invoiceId)]);
  const ids = payments.map((p) => p.id);
  const [transfers, refunds] = await Promise.all([transfersOfPayments(db, ids), refundsOfPayments(db, ids)]);
  const byId = new Map(payments.map((p) => [p.id, p]));

  const timeline: TimelineEntry[] = [
    { at: invoice.createdAt.toISOString(), type: 'invoice.created', paymentId: null, summary: `Invoice created: ${formatFiat(BigInt(invoice.amount), invoice.currency)} ${invoice.currency}`, facts: [{ label: 'order', value: invoice.orderId }, { label: 'expires', value: invoice.expiresAt.toISOString() }], link: null, tone: null },
  ];
  if (invoice.viewedAt) timeline.push({ at: invoice.viewedAt.toISOString(), type: 'invoice.viewed', paymentId: null, summary: 'First viewed by the buyer', facts: [], link: null, tone: null });
  for (const p of payments) timeline.push(checkoutEntry(p));
  for (const t of transfers) timeline.push(...transferEntries(deps.registry, t, byId.get(t.paymentId)!, history.events));
  for (const e of history.events) {
    const entry = eventEntry(e, byId);
    if (entry) timeline.push(entry);
  }
  timeline.push(...webhookEntries(history.events, history.deliveries, history.attempts));
  timeline.push(...refundEntries(deps.registry, refunds));
  // In time order; at the same instant cause before effect, then as pushed above.
  const rank = (e: TimelineEntry) => (e.type === 'transfer.seen' && e.tone === 'warn' ? RANK['transfer.late']! : (RANK[e.type] ?? 10));
  timeline.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : rank(a) - rank(b)));

  return {
    invoice: {
      id: invoice.id,
      referenceId: invoice.referenceId,
      orderId: invoice.orderId,
      status: invoice.status,
      amount: invoice.amount,
      currency: invoice.currency,
      amountText: formatFiat(BigInt(invoice.amount), invoice.currency),
      description: invoice.description,
      customerEmail: invoice.customerEmail,
      customerName: invoice.customerName,
      customerMetadata: invoice.customerMetadata,
      metadata: invoice.metadata,
      returnUrl: invoice.returnUrl,
      cancelUrl: invoice.cancelUrl,
      expiresAt: invoice.expiresAt.toISOString(),
      viewedAt: iso(invoice.viewedAt),
      paidAt: iso(invoice.paidAt),
      cancelledAt: iso(invoice.cancelledAt),
      createdAt: invoice.createdAt.toISOString(),
    },
    point: { id: pointId, name: merchant.name, url: `/dashboard/points/${pointId}`, webhooksUrl: `/dashboard/points/${pointId}/webhooks` },
    role,
    payments: payments.map((p) => paymentDetail(deps.registry, role, p)),
    timeline,
  };
}
