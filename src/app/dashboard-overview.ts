import type { Common } from '../common.ts';
import { getNetwork, type ResolvedNetwork, type ResolvedRegistry } from '../chains/registry.ts';
import { isChainSlug } from '../chains/slugs.ts';
import { can, roleOn } from '../domain/dashboard-roles.ts';
import { formatFiat, minorAtRate } from '../domain/fiat-value.ts';
import { formatUnits, parseUnits } from '../domain/money.ts';
import { indexerCursors, isFailingNow } from '../store/indexer-cursor.ts';
import { listMerchants } from '../store/merchants.ts';
import { amountDifference } from '../store/lifecycle.ts';
import { completedBetween, completedWithDifference, inFlightPayments, lateFundsSince, latestAttempts, openInvoiceCount, type AttentionPayment, type ReceivedRow } from '../store/overview-rows.ts';
import { countPools } from '../store/wallet-pool.ts';
import type { DashboardPrincipal } from './dashboard-session.ts';

// The dashboard's overview (docs/dashboard.md#overview): for the points a user may read, what was
// received today and this month (UTC) per coin and at the rate each payment was priced at, the open
// invoices, and what needs attention, each with a link to what to do about it.

/** How far back the attention list looks for under- and over-payments and late funds. */
export const ATTENTION_DAYS = 30;
/** At most this many items of each kind. */
const ATTENTION_LIMIT = 50;
/** A webhook endpoint whose last this many attempts all failed is failing. */
export const FAILING_ATTEMPTS = 3;
/** An indexer that has not read the head for this long is not keeping up (the operations alert's threshold). */
const STALE_POLL_SECONDS = 120;

export interface CoinTotal {
  blockchain: string;
  network: string;
  cryptoCurrency: string;
  /** Coin units, decimal string. */
  amount: string;
  payments: number;
}

export interface FiatTotal {
  currency: string;
  /** Major units with all minor digits ("1234.50"). */
  amount: string;
}

export interface PeriodTotals {
  from: string;
  to: string;
  coins: CoinTotal[];
  fiat: FiatTotal[];
  /** Payments without a rate to value them at (verbatim pricing). */
  unpriced: number;
}

export type AttentionKind = 'underpaid' | 'overpaid' | 'late_funds' | 'stuck' | 'webhook_failing' | 'indexer_failing' | 'indexer_behind' | 'pool_low';

export interface AttentionItem {
  kind: AttentionKind;
  summary: string;
  at: string | null;
  pointId: string | null;
  invoiceId: string | null;
  paymentId: string | null;
  facts: { label: string; value: string }[];
  /** What to do about it: a dashboard page. */
  action: { href: string; label: string };
  /** Where the docs explain it (a path and anchor in docs/). */
  help: string;
}

export interface Overview {
  generatedAt: string;
  today: PeriodTotals;
  month: PeriodTotals;
  openInvoices: number;
  attention: AttentionItem[];
}

/** Start of the UTC day and of the UTC month of `now`. */
export function periodStarts(now: Date): { day: Date; month: Date } {
  return {
    day: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate())),
    month: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)),
  };
}

function totals(rows: ReceivedRow[], from: Date, to: Date): PeriodTotals {
  const coins = new Map<string, CoinTotal & { atomic: bigint; decimals: number }>();
  const fiat = new Map<string, bigint>();
  let unpriced = 0;
  for (const r of rows) {
    if (r.completedAt < from || r.completedAt >= to) continue;
    const network = r.network;
    const key = `${r.blockchain}:${r.network}:${r.cryptoCurrency}`;
    let atomic: bigint;
    try {
      atomic = parseUnits(r.receivedAmount, r.decimals);
    } catch {
      unpriced++;
      continue;
    }
    const total = coins.get(key) ?? { blockchain: r.blockchain, network, cryptoCurrency: r.cryptoCurrency, amount: '0', payments: 0, atomic: 0n, decimals: r.decimals };
    total.atomic += atomic;
    total.payments++;
    coins.set(key, total);
    const minor = r.pricing?.rate ? minorAtRate(atomic, r.decimals, r.pricing.rate, r.pricing.fiat) : null;
    if (minor === null || !r.pricing) unpriced++;
    else fiat.set(r.pricing.fiat, (fiat.get(r.pricing.fiat) ?? 0n) + minor);
  }
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    coins: [...coins.values()]
      .map(({ atomic, decimals, ...c }) => ({ ...c, amount: formatUnits(atomic, decimals) }))
      .sort((a, b) => `${a.blockchain}${a.cryptoCurrency}`.localeCompare(`${b.blockchain}${b.cryptoCurrency}`)),
    fiat: [...fiat.entries()].map(([currency, minor]) => ({ currency, amount: formatFiat(minor, currency) })).sort((a, b) => a.currency.localeCompare(b.currency)),
    unpriced,
  };
}

function fiatOfDifference(p: AttentionPayment, difference: string): string | null {
  if (!p.pricing?.rate) return null;
  try {
    const minor = minorAtRate(parseUnits(difference.replace(/^-/, ''), p.decimals), p.decimals, p.pricing.rate, p.pricing.fiat);
    return minor === null ? null : `${formatFiat(difference.startsWith('-') ? -minor : minor, p.pricing.fiat)} ${p.pricing.fiat}`;
  } catch {
    return null;
  }
}

const invoiceUrl = (id: string) => `/dashboard/invoices/${id}`;

function paymentFacts(p: AttentionPayment): { label: string; value: string }[] {
  return [
    { label: 'invoice', value: p.invoiceReferenceId },
    { label: 'order', value: p.orderId },
    { label: 'payment', value: p.referenceId },
    { label: 'chain', value: `${p.cryptoCurrency} on ${p.blockchain}${p.isTestnet ? ` (${p.network})` : ''}` },
  ];
}

function differenceItem(p: AttentionPayment, moneyRole: boolean): AttentionItem | null {
  const difference = amountDifference(p);
  if (/^-?0(\.0+)?$/.test(difference)) return null;
  const under = difference.startsWith('-');
  const fiat = fiatOfDifference(p, difference);
  return {
    kind: under ? 'underpaid' : 'overpaid',
    summary: under ? `Underpaid by ${difference.slice(1)} ${p.cryptoCurrency}` : `Overpaid by ${difference} ${p.cryptoCurrency}`,
    at: p.completedAt?.toISOString() ?? null,
    pointId: p.merchantId,
    invoiceId: p.invoiceId,
    paymentId: p.id,
    facts: [
      ...paymentFacts(p),
      { label: 'expected', value: `${p.expectedAmount} ${p.cryptoCurrency}` },
      { label: 'received', value: `${p.receivedAmount} ${p.cryptoCurrency}` },
      { label: 'difference', value: `${difference} ${p.cryptoCurrency}${fiat ? ` (${fiat} at the priced rate)` : ''}` },
    ],
    // Underpaid: settle it with the buyer from the invoice; overpaid: refund the difference.
    action: under || !moneyRole ? { href: invoiceUrl(p.invoiceId), label: 'Open the invoice' } : { href: `/dashboard/payments/${p.id}/refund`, label: 'Refund the over-payment' },
    help: under ? 'docs/dashboard.md#underpaid' : 'docs/refunds.md#refund-plan',
  };
}

/** The normal time of a payment in flight: its confirmations at the chain's block time. */
export function normalConfirmingMs(network: Pick<ResolvedNetwork, 'blockTimeMs'>, requiredConfirmations: number): number {
  return requiredConfirmations * network.blockTimeMs;
}

/** Stuck: in flight for more than twice its normal time plus 10 minutes (a slow block or a busy node is no alarm). */
export function stuckAfterMs(network: Pick<ResolvedNetwork, 'blockTimeMs'>, requiredConfirmations: number): number {
  return 2 * normalConfirmingMs(network, requiredConfirmations) + 10 * 60_000;
}

function stuckItem(registry: ResolvedRegistry, p: AttentionPayment, now: Date): AttentionItem | null {
  if (!isChainSlug(p.blockchain)) return null;
  const network = getNetwork(registry, p.blockchain, p.isTestnet);
  const since = p.creditedSince ?? p.createdAt;
  const limit = stuckAfterMs(network, p.requiredConfirmations);
  if (now.getTime() - since.getTime() <= limit) return null;
  const minutes = (ms: number) => (ms < 120_000 ? `${Math.round(ms / 1000)} s` : ms < 180 * 60_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 3_600_000)} h`);
  return {
    kind: 'stuck',
    summary: `${p.status} for ${minutes(now.getTime() - since.getTime())} (normally about ${minutes(normalConfirmingMs(network, p.requiredConfirmations))})`,
    at: since.toISOString(),
    pointId: p.merchantId,
    invoiceId: p.invoiceId,
    paymentId: p.id,
    facts: [...paymentFacts(p), { label: 'confirmations', value: `${p.confirmations} of ${p.requiredConfirmations}` }],
    action: { href: invoiceUrl(p.invoiceId), label: 'Open the invoice' },
    help: 'docs/dashboard.md#stuck-payments',
  };
}

function lateItem(row: Awaited<ReturnType<typeof lateFundsSince>>[number], moneyRole: boolean): AttentionItem {
  const data = row.data as { payment?: { referenceId?: unknown; cryptoCurrency?: unknown; invoice?: { referenceId?: unknown; orderId?: unknown } }; transfer?: { amount?: unknown; txHash?: unknown; reason?: unknown } };
  const coin = String(data.payment?.cryptoCurrency ?? '');
  return {
    kind: 'late_funds',
    summary: `Late funds: ${String(data.transfer?.amount ?? '?')} ${coin} not credited (${String(data.transfer?.reason ?? 'late')})`,
    at: row.createdAt.toISOString(),
    pointId: row.merchantId,
    invoiceId: row.invoiceId,
    paymentId: row.paymentId,
    facts: [
      { label: 'invoice', value: String(data.payment?.invoice?.referenceId ?? row.invoiceId) },
      { label: 'order', value: String(data.payment?.invoice?.orderId ?? '') },
      { label: 'payment', value: String(data.payment?.referenceId ?? row.paymentId) },
      { label: 'transaction', value: String(data.transfer?.txHash ?? '') },
    ],
    action: moneyRole ? { href: `/dashboard/payments/${row.paymentId}/refund`, label: 'Refund the late funds' } : { href: invoiceUrl(row.invoiceId), label: 'Open the invoice' },
    help: 'docs/refunds.md#refund-plan',
  };
}

/** The overview of every point the user may read. */
export async function dashboardOverview(common: Common, registry: ResolvedRegistry, principal: DashboardPrincipal, now = new Date()): Promise<Overview> {
  const { db } = common;
  const points = (await listMerchants(db)).flatMap((m) => {
    const role = roleOn(principal.grants, m.id);
    return role && can(role, 'read') ? [{ ...m, role }] : [];
  });
  const ids = points.map((p) => p.id);
  const moneyOn = (pointId: string) => points.some((p) => p.id === pointId && can(p.role, 'money'));
  const { day, month } = periodStarts(now);
  const since = new Date(now.getTime() - ATTENTION_DAYS * 86_400_000);
  const [received, openInvoices, differences, inFlight, late, cursors, pools] = await Promise.all([
    completedBetween(db, ids, month, now),
    openInvoiceCount(db, ids, now),
    completedWithDifference(db, ids, since, ATTENTION_LIMIT),
    inFlightPayments(db, ids),
    lateFundsSince(db, ids, since, ATTENTION_LIMIT),
    indexerCursors(db),
    countPools(db),
  ]);

  const attention: AttentionItem[] = [];
  for (const p of differences) {
    const item = differenceItem(p, moneyOn(p.merchantId));
    if (item) attention.push(item);
  }
  for (const row of late) attention.push(lateItem(row, moneyOn(row.merchantId)));
  for (const p of inFlight) {
    const item = stuckItem(registry, p, now);
    if (item) attention.push(item);
  }
  for (const point of points.filter((p) => p.webhookUrl)) {
    const attempts = await latestAttempts(db, point.id, FAILING_ATTEMPTS);
    const failed = (a: (typeof attempts)[number]) => a.statusCode === null || a.statusCode < 200 || a.statusCode >= 300;
    if (attempts.length < FAILING_ATTEMPTS || !attempts.every(failed)) continue;
    const last = attempts[0]!;
    attention.push({
      kind: 'webhook_failing',
      summary: `Webhook endpoint failing: its last ${FAILING_ATTEMPTS} attempts got no 2xx answer`,
      at: last.attemptedAt.toISOString(),
      pointId: point.id,
      invoiceId: null,
      paymentId: null,
      facts: [
        { label: 'point', value: point.name },
        { label: 'url', value: last.url ?? point.webhookUrl ?? '' },
        { label: 'last answer', value: last.statusCode === null ? (last.error ?? 'no answer').slice(0, 200) : `HTTP ${last.statusCode}` },
        { label: 'failing since at least', value: attempts.at(-1)!.attemptedAt.toISOString() },
      ],
      action: { href: `/dashboard/points/${point.id}/webhooks`, label: 'Open the delivery log' },
      help: 'docs/webhooks.md#delivery-and-retries',
    });
  }

  // Indexers and pools serve every point: shown to everyone, since they explain missing payments.
  const networks = Object.values(registry.chains).filter((c) => c.enabled).flatMap((c) => [c.mainnet, c.testnet]);
  const networkOf = (chain: string, name: string) => networks.find((n) => n.chain === chain && n.network === name);
  for (const c of cursors) {
    const network = networkOf(c.chain, c.network);
    if (!network) continue;
    const label = `${c.chain} ${c.network}`;
    const facts = [
      { label: 'processed', value: c.placed ? c.blockNumber : '—' },
      { label: 'head', value: c.headNumber ?? '—' },
      ...(c.lastError ? [{ label: 'last error', value: c.lastError.slice(0, 300) }] : []),
    ];
    const base = { at: null, pointId: null, invoiceId: null, paymentId: null, action: { href: '/dashboard/overview#indexers', label: 'See how to check it' } };
    if (isFailingNow(c, now)) {
      attention.push({ ...base, kind: 'indexer_failing', summary: `Indexer ${label} is failing`, at: c.lastErrorAt?.toISOString() ?? null, facts, help: 'docs/indexers.md#an-indexer-that-cannot-work-says-so' });
      continue;
    }
    const running = Boolean(c.leaseOwner && c.leaseUntil && c.leaseUntil > now);
    const pollAge = c.headSeenAt ? (now.getTime() - c.headSeenAt.getTime()) / 1000 : null;
    const lag = c.headNumber && c.placed ? BigInt(c.headNumber) - BigInt(c.blockNumber) : 0n;
    const why = !running ? 'not running' : pollAge === null || pollAge > STALE_POLL_SECONDS ? 'has not read the chain for over 2 minutes' : lag > BigInt(network.requiredConfirmations) ? `${lag} blocks behind the head` : null;
    if (why) attention.push({ ...base, kind: 'indexer_behind', summary: `Indexer ${label} ${why}`, at: c.headSeenAt?.toISOString() ?? null, facts, help: 'docs/dashboard.md#indexers-and-pools' });
  }
  for (const pool of pools) {
    const chain = isChainSlug(pool.chain) ? registry.chains[pool.chain] : null;
    if (!chain?.enabled || pool.free >= common.config.pools.lowWaterMark) continue;
    const network = pool.isTestnet ? chain.testnet.network : chain.mainnet.network;
    attention.push({
      kind: 'pool_low',
      summary: `Wallet pool ${pool.chain} ${network} is running low: ${pool.free} free addresses`,
      at: null,
      pointId: null,
      invoiceId: null,
      paymentId: null,
      facts: [
        { label: 'free', value: String(pool.free) },
        { label: 'leased', value: String(pool.leased) },
        { label: 'low-water mark', value: String(common.config.pools.lowWaterMark) },
      ],
      action: { href: '/dashboard/overview#indexers', label: 'See how to seed more' },
      help: 'docs/wallets.md#seeding-and-listing-pools',
    });
  }

  return { generatedAt: now.toISOString(), today: totals(received, day, now), month: totals(received, month, now), openInvoices, attention };
}
