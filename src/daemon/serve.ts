import type { FastifyInstance } from 'fastify';
import type { Common } from '../common.ts';
import { sweepExpired } from '../store/expiry.ts';
import { neverSleepOnLocks } from '../store/orm.ts';
import { purgeExpiredKeys } from '../store/idempotency.ts';
import { purgeDashboardState } from '../store/dashboard-sessions.ts';
import { createHttpApp } from '../http/app.ts';
import { gatewayPlugin } from '../http/gateway/plugin.ts';
import { checkoutPlugin } from '../http/checkout/plugin.ts';
import { pagePathOf, pagePlugin } from '../http/page/plugin.ts';
import { dashboardPlugin } from '../http/dashboard/plugin.ts';
import { registerServiceWideLimits } from '../http/rate-limit.ts';
import { openRateLimitCounters } from '../store/rate-limit-store.ts';
import { createDeps, type DaemonDeps } from '../app/deps.ts';
import { offerReport, type NetworkOffer, type NotOfferedCode } from '../app/availability.ts';
import { indexerCursors } from '../store/indexer-cursor.ts';
import { isCachedApiKey } from '../app/signed-request-scheme.ts';
import { UsageError } from '../domain/errors.ts';
import { readiness, type Readiness } from '../app/health.ts';
import { openApiDocument } from '../http/openapi.ts';
import { createDaemonMetrics, type DaemonMetrics } from '../metrics/registry.ts';
import { startMetricsServer, type MetricsServer } from '../metrics/server.ts';
import { scheduleJob, type Job } from './schedule.ts';
import { followBroadcasts } from '../sweep/broadcast-sweep.ts';
import { createWebhookSender, type WebhookSender } from '../webhooks/sender.ts';
import { purgeOldWebhooks } from '../webhooks/retention.ts';

export interface Daemon {
  app: FastifyInstance;
  /** http://host:port of the dashboard's own listener, when it has one. */
  dashboardUrl: string | null;
  deps: DaemonDeps;
  /** http://host:port actually bound (port 0 picks a free one). */
  url: string;
  /** The webhook sender of this process, when it runs one. */
  webhooks: WebhookSender | null;
  /** http://host:port of /metrics, /healthz and /readyz, when metrics are enabled. */
  metricsUrl: string | null;
  stop(): Promise<void>;
}

export async function buildDaemonApp(deps: DaemonDeps, metrics?: DaemonMetrics): Promise<FastifyInstance> {
  const { config, log, db } = deps.common;
  const app = createHttpApp({
    log,
    bodyLimit: config.server.bodyLimit,
    trustProxy: config.server.trustProxy,
    requestTimeoutMs: config.server.requestTimeoutMs,
    headersTimeoutMs: config.server.headersTimeoutMs,
    keepAliveTimeoutMs: config.server.keepAliveTimeoutMs,
    // Each answer counted under its route's path; requests no route matched under 'unmatched'.
    ...(metrics ? { observeRequest: metrics.observeRequest } : {}),
  });
  // Both surfaces describe themselves (OpenAPI 3.1 from the validating zod schemas), unsigned.
  const gatewaySpec = JSON.stringify(openApiDocument('gateway'));
  const checkoutSpec = JSON.stringify(openApiDocument('checkout'));
  app.get('/api/v1/openapi.json', async (_req, reply) => reply.type('application/json').send(gatewaySpec));
  app.get('/checkout/api/v1/openapi.json', async (_req, reply) => reply.header('Access-Control-Allow-Origin', '*').type('application/json').send(checkoutSpec));
  // Liveness and readiness for systemd and container health checks (also on the metrics listener).
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const r = await readiness(db);
    return reply.code(r.ready ? 200 : 503).send({ status: r.ready ? 'ready' : 'not_ready', reasons: r.reasons });
  });
  // Exempt only keys the gateway's merchant cache holds as active, and only once their signature verifies.
  const counters = openRateLimitCounters(db, config.rateLimit, {
    log: log.child({ component: 'rate-limit' }),
    ...(metrics ? { onFailOpen: metrics.observeRateLimitFailOpen } : {}),
  });
  registerServiceWideLimits(app, config.rateLimit, counters, (apiKey) => isCachedApiKey(deps, apiKey));
  await app.register(async (scope) => gatewayPlugin(scope, deps), { prefix: '/api/v1' });
  await app.register(async (scope) => checkoutPlugin(scope, deps), { prefix: '/checkout/api/v1' });
  const pagePath = pagePathOf(config);
  await app.register(async (scope) => pagePlugin(scope, deps, pagePath), { prefix: pagePath });
  if (config.dashboard.enabled && !dashboardListenerOwn(config)) await registerDashboard(app, deps);
  return app;
}

/** Whether the dashboard has a listener of its own (dashboard.host and dashboard.port set). */
function dashboardListenerOwn(config: Common['config']): boolean {
  return config.dashboard.host !== null || config.dashboard.port !== null;
}

async function registerDashboard(app: FastifyInstance, deps: DaemonDeps): Promise<void> {
  const { publicUrl } = deps.common.config.dashboard;
  await app.register(async (scope) => dashboardPlugin(scope, deps, { publicOrigin: publicUrl ? new URL(publicUrl).origin : null }), { prefix: '/dashboard' });
}

/** The dashboard on its own listener (an internal interface): the same plugin, no gateway beside it. */
async function buildDashboardApp(deps: DaemonDeps): Promise<FastifyInstance> {
  const { config, log } = deps.common;
  const app = createHttpApp({ log, bodyLimit: config.server.bodyLimit, trustProxy: config.server.trustProxy });
  await registerDashboard(app, deps);
  return app;
}

/** Short words for why a network is not offered, for the start-up summary (status has the long ones). */
const SHORT_REASON: Record<NotOfferedCode, string> = {
  NO_FREE_ADDRESS: 'no free address',
  INDEXER_NEVER_REPORTED: 'no indexer',
  INDEXER_STALE: 'indexer silent',
  NO_PRICE: 'no price',
};

/**
 * One start-up line saying what buyers are offered and, grouped by reason, what not
 * (docs/checkout.md#what-is-offered): "offered: ethereum (ETH, USDT, USDC); not offered: bitcoin,
 * tron (no free address, no indexer)". `chaingate status` gives each reason in full with its fix.
 */
export function offerSummary(offers: readonly NetworkOffer[]): { offered: string[]; notOffered: string[]; msg: string } {
  const name = (o: NetworkOffer) => (o.network === 'MAINNET' ? o.chain : `${o.chain} ${o.network}`);
  const offered = offers.filter((o) => o.offered);
  const groups = new Map<string, string[]>();
  for (const o of offers.filter((x) => !x.offered)) {
    const why = o.reasons.map((r) => SHORT_REASON[r.code]).join(', ');
    groups.set(why, [...(groups.get(why) ?? []), name(o)]);
  }
  const yes = offered.length ? offered.map((o) => `${name(o)} (${o.coins.join(', ')})`).join(', ') : 'nothing';
  const no = [...groups].map(([why, names]) => `${names.join(', ')} (${why})`).join('; ');
  return {
    offered: offered.map((o) => `${o.chain}:${o.network}`),
    notOffered: offers.filter((o) => !o.offered).map((o) => `${o.chain}:${o.network}`),
    msg: `offered to buyers: ${yes}${no ? `; not offered: ${no} — \`chaingate status\` says how to fix each` : ''}`,
  };
}

/**
 * The summary of what buyers are offered, logged once at start-up (a warning when something enabled
 * is not offered). A rate API that does not answer within 3 s is not waited for.
 */
async function logOffers(deps: DaemonDeps, log: Common['log']): Promise<void> {
  const { db, config } = deps.common;
  try {
    const report = offerReport({ db, registry: deps.registry, config, rates: deps.rates });
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), 3000).unref());
    const offers = await Promise.race([report, timeout]);
    if (!offers) {
      log.warn('could not work out at start-up which chains are offered (the price source did not answer within 3 s); `chaingate status` shows it');
      return;
    }
    const { msg, ...fields } = offerSummary(offers);
    if (fields.notOffered.length > 0) log.warn(fields, msg);
    else log.info(fields, msg);
  } catch (err) {
    log.warn({ err }, 'could not work out at start-up which chains are offered');
  }
}

/** Binds the metrics listener; a port already taken is the operator's to fix, said in one line. */
async function listenMetrics(config: Common['config'], metrics: DaemonMetrics, ready: () => Promise<Readiness>): Promise<MetricsServer> {
  try {
    return await startMetricsServer({ host: config.metrics.host, port: config.metrics.port, registry: metrics.registry, ready });
  } catch (err) {
    throw new UsageError(`metrics listener ${config.metrics.host}:${config.metrics.port}: ${(err as Error).message} (metrics.port, CHAINGATE_METRICS_PORT; metrics.enabled: false turns it off)`);
  }
}

/** Binds the public listener and returns its http://host:port (port 0 picks a free one). */
async function listenPublic(app: FastifyInstance, config: Common['config']): Promise<string> {
  const { host, port } = config.server;
  try {
    await app.listen({ host, port });
  } catch (err) {
    throw new UsageError(`listener ${host}:${port}: ${(err as Error).message} (server.host, server.port, CHAINGATE_HOST, CHAINGATE_PORT)`);
  }
  const addr = app.server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
}

async function listenDashboard(app: FastifyInstance, config: Common['config']): Promise<string> {
  const host = config.dashboard.host ?? config.server.host;
  const port = config.dashboard.port ?? 0;
  try {
    await app.listen({ host, port });
  } catch (err) {
    throw new UsageError(`dashboard listener ${host}:${port}: ${(err as Error).message} (dashboard.host, dashboard.port; dashboard.enabled: false turns it off)`);
  }
  const addr = app.server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
}

/** The start-up warnings about configuration that works but will not take real payments as expected. */
async function warnAtStart(deps: DaemonDeps): Promise<void> {
  const { config, log, db } = deps.common;
  if (config.pricing.mode === 'convert' && config.pricing.source === 'static') {
    log.warn(
      'pricing uses the built-in static rate table (pricing.source: static): fixed example rates, not market prices; point pricing.source at http and pricing.http.baseUrl at a rate API before taking real payments (docs/pricing.md)',
    );
  }
  // With the indexer check off, chains are offered whose indexer never ran on this database: payments
  // there would wait forever. (With it on, the summary below says "no indexer" for them.)
  if (config.checkout.indexerStaleAfterSeconds === null) {
    const enabled = Object.values(deps.registry.chains).filter((c) => c.enabled);
    const cursors = new Set((await indexerCursors(db)).map((c) => c.chain));
    const neverIndexed = enabled.filter((c) => !cursors.has(c.slug)).map((c) => c.slug);
    if (neverIndexed.length) {
      log.warn({ chains: neverIndexed }, 'checkout.indexerStaleAfterSeconds is null and no indexer has run yet for these enabled chains: their payments would never be seen; start `chaingate index <chain>` for each (docs/indexers.md), or disable them with chains.<slug>.enabled: false');
    }
  }
  await logOffers(deps, log);
}

function scheduleJobs(common: Common): Job[] {
  const { config, log, db } = common;
  return [
    scheduleJob('expiry-sweep', config.expiry.sweepCron, log, () => sweepExpired(db)),
    scheduleJob('idempotency-purge', config.idempotency.purgeCron, log, () => purgeExpiredKeys(db)),
    scheduleJob('webhook-retention', config.webhooks.retentionCron, log, () => purgeOldWebhooks(db, config.webhooks.retentionDays)),
    scheduleJob('dashboard-purge', config.idempotency.purgeCron, log, () => purgeDashboardState(db, new Date(), config.dashboard.idleTimeoutMinutes * 60_000)),
  ];
}

/**
 * `chaingate serve`: both HTTP surfaces plus the scheduled sweeps of this process. Either all of it
 * runs or, when a step fails (a port taken), what was started is closed again before the error is
 * thrown; the caller closes `common`.
 */
export async function startDaemon(common: Common, options: { schedule?: boolean; webhooks?: boolean; followBroadcasts?: boolean } = {}): Promise<Daemon> {
  const deps = createDeps(common);
  const { config, log, db } = common;
  // Another process's write lock is waited for between attempts, never by sleeping on the event loop.
  await neverSleepOnLocks(db);
  const metrics = config.metrics.enabled ? createDaemonMetrics(db, deps.registry) : null;
  const app = await buildDaemonApp(deps, metrics ?? undefined);
  let draining = false;
  // What start-up opened, closed again in reverse order if a later step fails.
  const opened: (() => Promise<unknown>)[] = [() => app.close()];
  try {
    // The metrics port first: if it is taken, the public port is never bound (nothing half-started).
    const ready = () => (draining ? Promise.resolve({ ready: false, reasons: ['shutting down'] }) : readiness(db));
    const metricsServer = metrics ? await listenMetrics(config, metrics, ready) : null;
    if (metricsServer) opened.push(() => metricsServer.close());
    const url = await listenPublic(app, config);
    const dashboard = config.dashboard.enabled && dashboardListenerOwn(config) ? await buildDashboardApp(deps) : null;
    if (dashboard) opened.push(() => dashboard.close());
    const dashboardUrl = dashboard ? await listenDashboard(dashboard, config) : null;
    await warnAtStart(deps);
    const jobs = options.schedule !== false ? scheduleJobs(common) : [];
    // Refund and sweep broadcasts begun (from the dashboard or the CLI) are followed to finality here.
    if (options.followBroadcasts ?? options.schedule !== false) jobs.push(scheduleJob('follow-broadcasts', config.dashboard.followBroadcastsCron, log, () => followBroadcasts(common)));
    opened.push(...jobs.map((j) => () => j.stop()));
    // Webhook deliveries (docs/webhooks.md); `chaingate webhooks work` can run more senders elsewhere.
    const webhooks = (options.webhooks ?? options.schedule !== false)
      ? createWebhookSender({ common, ...(metrics ? { onDelivered: (ms: number) => metrics.observeWebhookDelivered(ms / 1000) } : {}) })
      : null;
    webhooks?.start();
    log.info({ url, dashboard: dashboardUrl ? `${dashboardUrl}/dashboard/` : config.dashboard.enabled ? `${url}/dashboard/` : null, metrics: metricsServer ? `${metricsServer.url}/metrics` : null, database: db.url }, 'chaingate is serving');

    let stopping: Promise<void> | null = null;
    return {
      app,
      deps,
      url,
      dashboardUrl,
      webhooks,
      metricsUrl: metricsServer?.url ?? null,
      stop() {
        draining = true;
        stopping ??= Promise.resolve(dashboard?.close()).then(() => shutdown({ common, app, jobs, webhooks, metricsServer }));
        return stopping;
      },
    };
  } catch (err) {
    for (const close of opened.reverse()) await close().catch((e: unknown) => log.warn({ err: e }, 'closing after a failed start failed'));
    throw err;
  }
}

/**
 * The webhook sender stops claiming first; it and the requests in flight then share one grace
 * (server.shutdownGraceMs), after which webhook attempts are cut off (their deliveries stay due) and
 * connections closed. The jobs stop meanwhile; then the metrics listener and the database close.
 */
async function shutdown(parts: { common: Common; app: FastifyInstance; jobs: Job[]; webhooks: WebhookSender | null; metricsServer: MetricsServer | null }): Promise<void> {
  const { common, app, jobs, webhooks, metricsServer } = parts;
  const graceMs = common.config.server.shutdownGraceMs;
  const sender = webhooks?.stop(graceMs);
  const grace = setTimeout(() => app.server.closeAllConnections(), graceMs);
  await Promise.all([sender, app.close(), ...jobs.map((j) => j.stop())]);
  clearTimeout(grace);
  await metricsServer?.close();
  await common.close();
}
