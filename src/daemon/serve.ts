import type { FastifyInstance } from 'fastify';
import type { Common } from '../common.ts';
import { sweepExpired } from '../db/expiry.ts';
import { sqlitePath } from '../db/orm.ts';
import { nativeSqlite } from '../db/raw-sql.ts';
import { startCheckpointer } from '../db/sqlite-checkpointer.ts';
import { purgeExpiredKeys } from '../db/idempotency.ts';
import { createHttpApp } from './http/app.ts';
import { gatewayPlugin } from './http/gateway/plugin.ts';
import { checkoutPlugin } from './http/checkout/plugin.ts';
import { pagePathOf, pagePlugin } from './http/page/plugin.ts';
import { registerServiceWideLimits } from './http/rate-limit.ts';
import { createDeps, type DaemonDeps } from './deps.ts';
import { offerReport } from './availability.ts';
import { IndexerCursor } from '../db/entities/indexer-cursor.entity.ts';
import { merchantKeyCache } from '../db/merchants.ts';
import { UsageError } from '../domain/errors.ts';
import { readiness } from './health.ts';
import { openApiDocument } from './http/openapi.ts';
import { createDaemonMetrics, type DaemonMetrics } from './metrics/registry.ts';
import { startMetricsServer, type MetricsServer } from './metrics/server.ts';
import { scheduleJob, type Job } from './schedule.ts';
import { createWebhookSender, type WebhookSender } from './webhooks/sender.ts';
import { purgeOldWebhooks } from './webhooks/retention.ts';

export interface Daemon {
  app: FastifyInstance;
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
  const merchants = merchantKeyCache(db, deps.common.box);
  registerServiceWideLimits(app, config.rateLimit, (apiKey) => merchants.peek(apiKey) !== undefined);
  await app.register(async (scope) => gatewayPlugin(scope, deps), { prefix: '/api/v1' });
  await app.register(async (scope) => checkoutPlugin(scope, deps), { prefix: '/checkout/api/v1' });
  const pagePath = pagePathOf(config);
  await app.register(async (scope) => pagePlugin(scope, deps, pagePath), { prefix: pagePath });
  return app;
}

/**
 * One warning per enabled chain (and testnet in use) that buyers are not offered, with the reasons
 * (docs/checkout.md#what-is-offered). A rate API that does not answer within 3 s is not waited for.
 */
async function warnNotOffered(deps: DaemonDeps, log: Common['log']): Promise<void> {
  const { db, config } = deps.common;
  try {
    const report = offerReport({ db, registry: deps.registry, config, rates: deps.rates });
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), 3000).unref());
    const offers = await Promise.race([report, timeout]);
    if (!offers) {
      log.warn('could not work out at start-up which chains are offered (the price source did not answer within 3 s); `chaingate status` shows it');
      return;
    }
    for (const o of offers) {
      if (o.offered) continue;
      log.warn(
        { chain: o.chain, network: o.network, reasons: o.reasons.map((r) => r.code) },
        `${o.chain} ${o.network} is not offered to buyers: ${o.reasons.map((r) => r.message).join('; ')}`,
      );
    }
  } catch (err) {
    log.warn({ err }, 'could not work out at start-up which chains are offered');
  }
}

/** `chaingate serve`: both HTTP surfaces plus the scheduled sweeps of this process. */
export async function startDaemon(common: Common, options: { schedule?: boolean; webhooks?: boolean } = {}): Promise<Daemon> {
  const deps = createDeps(common);
  const { config, log, db } = common;
  const metrics = config.metrics.enabled ? createDaemonMetrics(db) : null;
  const app = await buildDaemonApp(deps, metrics ?? undefined);
  await app.listen({ host: config.server.host, port: config.server.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const url = `http://${host}:${port}`;
  log.info({ url, database: db.url }, 'chaingate is serving');
  if (config.pricing.mode === 'convert' && config.pricing.source === 'static') {
    log.warn(
      'pricing uses the built-in static rate table (pricing.source: static): fixed example rates, not market prices; point pricing.source at http and pricing.http.baseUrl at a rate API before taking real payments (docs/pricing.md)',
    );
  }
  // Offered, but no indexer has ever run for them on this database: payments there would wait forever.
  const enabled = Object.values(deps.registry.chains).filter((c) => c.enabled);
  const cursors = new Set((await db.em().find(IndexerCursor, {}, { fields: ['chain'] })).map((c) => c.chain));
  const neverIndexed = enabled.filter((c) => !cursors.has(c.slug)).map((c) => c.slug);
  if (neverIndexed.length) {
    log.warn({ chains: neverIndexed }, 'no indexer has run yet for these enabled chains: start `chaingate index <chain>` for each (docs/indexers.md), or disable them with chains.<slug>.enabled: false');
  }

  await warnNotOffered(deps, log);
  const checkpointer = db.dialect === 'sqlite' && sqlitePath(config.database.url) !== ':memory:'
    ? startCheckpointer(sqlitePath(config.database.url), await nativeSqlite(db.em()), log)
    : null;

  const jobs: Job[] = [];
  if (options.schedule !== false) {
    jobs.push(scheduleJob('expiry-sweep', config.expiry.sweepCron, log, () => sweepExpired(db)));
    jobs.push(scheduleJob('idempotency-purge', config.idempotency.purgeCron, log, () => purgeExpiredKeys(db)));
    jobs.push(scheduleJob('webhook-retention', config.webhooks.retentionCron, log, () => purgeOldWebhooks(db, config.webhooks.retentionDays)));
  }
  // Webhook deliveries (docs/webhooks.md); `chaingate webhooks work` can run more senders elsewhere.
  const webhooks = (options.webhooks ?? options.schedule !== false)
    ? createWebhookSender({ common, ...(metrics ? { onDelivered: (ms: number) => metrics.observeWebhookDelivered(ms / 1000) } : {}) })
    : null;
  webhooks?.start();
  let metricsServer: MetricsServer | null = null;
  if (metrics) {
    try {
      metricsServer = await startMetricsServer({ host: config.metrics.host, port: config.metrics.port, registry: metrics.registry, ready: () => readiness(db) });
    } catch (err) {
      await app.close();
      if (webhooks) await webhooks.stop();
      throw new UsageError(`metrics listener ${config.metrics.host}:${config.metrics.port}: ${(err as Error).message} (metrics.port, CHAINGATE_METRICS_PORT; metrics.enabled: false turns it off)`);
    }
    log.info({ url: `${metricsServer.url}/metrics` }, 'metrics, /healthz and /readyz are served');
  }

  let stopping: Promise<void> | null = null;
  return {
    app,
    deps,
    url,
    webhooks,
    metricsUrl: metricsServer?.url ?? null,
    stop() {
      // Stop accepting, let in-flight requests finish, stop the jobs, then close the database.
      stopping ??= (async () => {
        // In-flight requests get the grace period; then whatever is left is cut off, so a slow
        // client cannot hold the shutdown forever.
        const grace = setTimeout(() => app.server.closeAllConnections(), config.server.shutdownGraceMs);
        await app.close();
        clearTimeout(grace);
        await Promise.all([...jobs.map((j) => j.stop()), webhooks?.stop(), metricsServer?.close(), checkpointer?.stop()]);
        await common.close();
      })();
      return stopping;
    },
  };
}
