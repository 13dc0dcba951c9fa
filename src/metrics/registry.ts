import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ResolvedRegistry } from '../chains/registry.ts';
import type { Database } from '../store/orm.ts';
import { indexerCursors, isFailingNow } from '../store/indexer-cursor.ts';
import { countByStatus } from '../store/status-counts.ts';
import { oldestPendingDue } from '../store/webhook-deliveries.ts';
import { countPools } from '../store/wallet-pool.ts';
import { registerRequestTable } from './request-table.ts';

// What `serve` exposes on /metrics (Prometheus text format). Request figures are counted as they
// happen; the state of payments, pools, webhooks and indexers is read from the database at each
// scrape, so every serve process of a deployment reports the same numbers for them (and each its
// own traffic). Indexers write their progress to their cursor row every poll; their RPC call
// counters are served by each `index` process itself (src/families/rpc-metrics.ts).

export interface DaemonMetrics {
  registry: Registry;
  observeRequest(route: string, method: string, status: number, seconds: number): void;
  observeWebhookDelivered(latencySeconds: number): void;
  /** Requests the shared rate-limit store let through undecided, and why (error, timeout, unavailable). */
  observeRateLimitFailOpen(reason: string, requests: number): void;
}

/** payment.network of a chain's mainnet or testnet; the slug's own word for a chain the registry does not know. */
function networkName(chains: ResolvedRegistry, chain: string, testnet: boolean): string {
  const known = (chains.chains as Record<string, ResolvedRegistry['chains'][keyof ResolvedRegistry['chains']] | undefined>)[chain];
  return known ? (testnet ? known.testnet : known.mainnet).network : testnet ? 'TESTNET' : 'MAINNET';
}

export function createDaemonMetrics(db: Database, chains: ResolvedRegistry): DaemonMetrics {
  const registry = new Registry();
  const requests = registerRequestTable(registry, [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]);
  const limited = new Counter({ name: 'chaingate_rate_limited_total', help: 'Requests refused with 429 by route', labelNames: ['route'], registers: [registry] });
  const failOpen = new Counter({
    name: 'chaingate_rate_limit_fail_open_total',
    help: 'Requests let through without a rate-limit decision: the shared store failed (error), did not answer in time (timeout), or had just failed (unavailable)',
    labelNames: ['reason'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'chaingate_webhook_delivery_latency_seconds',
    help: 'Time from an event to its successful delivery (this process)',
    buckets: [0.05, 0.1, 0.5, 1, 5, 15, 60, 300, 1800, 7200],
    registers: [registry],
  });

  const invoices = new Gauge({ name: 'chaingate_invoices', help: 'Invoices by status', labelNames: ['status'], registers: [registry] });
  const payments = new Gauge({ name: 'chaingate_payments', help: 'Payments by status', labelNames: ['status'], registers: [registry] });
  const deliveries = new Gauge({ name: 'chaingate_webhook_deliveries', help: 'Webhook deliveries by state (PENDING, DELIVERED, FAILED)', labelNames: ['state'], registers: [registry] });
  const oldestDue = new Gauge({ name: 'chaingate_webhook_oldest_pending_age_seconds', help: 'Age of the oldest pending delivery (0 when none)', registers: [registry] });
  const poolFree = new Gauge({ name: 'chaingate_wallet_pool_free', help: 'Free deposit addresses per chain and network', labelNames: ['chain', 'network'], registers: [registry] });
  const labels = ['chain', 'network'] as const;
  const head = new Gauge({ name: 'chaingate_indexer_head', help: "The node's head as the indexer last read it", labelNames: labels, registers: [registry] });
  const height = new Gauge({ name: 'chaingate_indexer_height', help: 'The height the indexer has processed', labelNames: labels, registers: [registry] });
  const finalized = new Gauge({ name: 'chaingate_indexer_finalized', help: "The node's finalized height (absent where the chain has none)", labelNames: labels, registers: [registry] });
  const lagBlocks = new Gauge({ name: 'chaingate_indexer_lag_blocks', help: 'Head minus processed height', labelNames: labels, registers: [registry] });
  const lagSeconds = new Gauge({ name: 'chaingate_indexer_lag_seconds', help: 'Now minus the block time of the processed height', labelNames: labels, registers: [registry] });
  const seen = new Gauge({ name: 'chaingate_indexer_last_poll_age_seconds', help: 'Seconds since the indexer last read the head', labelNames: labels, registers: [registry] });
  const up = new Gauge({ name: 'chaingate_indexer_up', help: '1 while an indexer holds the lease of this chain and network', labelNames: labels, registers: [registry] });
  const failing = new Gauge({
    name: 'chaingate_indexer_failing',
    help: '1 while the indexer is failing: its last poll, or an RPC call it keeps retrying, failed (also before its first block); 0 once a poll succeeds, and once the indexer is stopped (no lease, no failure recorded for 2 minutes)',
    labelNames: labels,
    registers: [registry],
  });
  const lastError = new Gauge({
    name: 'chaingate_indexer_last_error_timestamp_seconds',
    help: "When the indexer's current failure began: its first failed poll or RPC call since the last good poll (0: the last poll was good)",
    labelNames: labels,
    registers: [registry],
  });

  const setAll = (gauge: Gauge<string>, values: Record<string, number>, label: string) => {
    gauge.reset();
    for (const [k, v] of Object.entries(values)) gauge.set({ [label]: k }, v);
  };

  // One database read per scrape, shared by every gauge (prom-client calls collect() per metric).
  let refreshed: Promise<void> | null = null;
  async function refresh(): Promise<void> {
    const now = Date.now();
    const [inv, pay, del, pools, cursors, oldest] = await Promise.all([
      countByStatus(db, 'invoice'),
      countByStatus(db, 'payment'),
      countByStatus(db, 'webhook_delivery'),
      countPools(db),
      indexerCursors(db),
      oldestPendingDue(db),
    ]);
    setAll(invoices, inv, 'status');
    setAll(payments, pay, 'status');
    setAll(deliveries, del, 'state');
    oldestDue.set(oldest === null ? 0 : Math.max(0, (now - oldest.getTime()) / 1000));
    poolFree.reset();
    // Labelled with the network's name (MAINNET, SEPOLIA, DEVNET), as the indexer series are.
    for (const p of pools) poolFree.set({ chain: p.chain, network: networkName(chains, p.chain, p.isTestnet) }, p.free);
    for (const g of [head, height, finalized, lagBlocks, lagSeconds, seen, up, failing, lastError]) g.reset();
    for (const c of cursors) {
      const l = { chain: c.chain, network: c.network };
      // Not placed: it failed before reading a block, so no height yet.
      if (c.placed) height.set(l, Number(c.blockNumber));
      if (c.headNumber && c.placed) {
        head.set(l, Number(c.headNumber));
        lagBlocks.set(l, Math.max(0, Number(c.headNumber) - Number(c.blockNumber)));
      }
      if (c.finalizedNumber) finalized.set(l, Number(c.finalizedNumber));
      if (c.blockTime) lagSeconds.set(l, Math.max(0, now / 1000 - Number(c.blockTime)));
      if (c.headSeenAt) seen.set(l, Math.max(0, (now - c.headSeenAt.getTime()) / 1000));
      up.set(l, c.leaseOwner && c.leaseUntil && c.leaseUntil.getTime() > now ? 1 : 0);
      failing.set(l, isFailingNow(c, new Date(now)) ? 1 : 0);
      lastError.set(l, c.lastError && c.lastErrorAt ? c.lastErrorAt.getTime() / 1000 : 0);
    }
  }
  const collectOnce = async () => {
    refreshed ??= refresh().finally(() => setTimeout(() => (refreshed = null), 250));
    await refreshed;
  };
  for (const g of [invoices, payments, deliveries, oldestDue, poolFree, head, height, finalized, lagBlocks, lagSeconds, seen, up, failing, lastError]) {
    (g as unknown as { collect?: () => Promise<void> }).collect = collectOnce;
  }

  return {
    registry,
    observeRequest(route, method, status, seconds) {
      requests.observe(route, method, status, seconds);
      if (status === 429) limited.inc({ route });
    },
    observeWebhookDelivered(seconds) {
      latency.observe(seconds);
    },
    observeRateLimitFailOpen(reason, requests) {
      failOpen.inc({ reason }, requests);
    },
  };
}
