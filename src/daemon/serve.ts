import type { FastifyInstance } from 'fastify';
import type { Common } from '../cli/context.ts';
import { sweepExpired } from '../db/expiry.ts';
import { purgeExpiredKeys } from '../db/idempotency.ts';
import { createHttpApp } from './http/app.ts';
import { gatewayPlugin } from './http/gateway/plugin.ts';
import { checkoutPlugin } from './http/checkout/plugin.ts';
import { pagePathOf, pagePlugin } from './http/page/plugin.ts';
import { registerServiceWideLimits } from './http/rate-limit.ts';
import { createDeps, type DaemonDeps } from './deps.ts';
import { hasIndexer } from '../indexers/sources.ts';
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
  stop(): Promise<void>;
}

export async function buildDaemonApp(deps: DaemonDeps): Promise<FastifyInstance> {
  const { config, log } = deps.common;
  const app = createHttpApp({ log, bodyLimit: config.server.bodyLimit, trustProxy: config.server.trustProxy });
  registerServiceWideLimits(app, config.rateLimit);
  await app.register(async (scope) => gatewayPlugin(scope, deps), { prefix: '/api/v1' });
  await app.register(async (scope) => checkoutPlugin(scope, deps), { prefix: '/checkout/api/v1' });
  const pagePath = pagePathOf(config);
  await app.register(async (scope) => pagePlugin(scope, deps, pagePath), { prefix: pagePath });
  return app;
}

/** `chaingate serve`: both HTTP surfaces plus the scheduled sweeps of this process. */
export async function startDaemon(common: Common, options: { schedule?: boolean; webhooks?: boolean } = {}): Promise<Daemon> {
  const deps = createDeps(common);
  const { config, log, db } = common;
  const app = await buildDaemonApp(deps);
  await app.listen({ host: config.server.host, port: config.server.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const url = `http://${host}:${port}`;
  log.info({ url, database: db.url }, 'chaingate is serving');
  const unindexed = Object.values(deps.registry.chains).filter((c) => c.enabled && !hasIndexer(c.family)).map((c) => c.slug);
  if (unindexed.length) {
    log.warn(
      { chains: unindexed },
      'these chains are offered to buyers but have no indexer yet: payments on them are never detected; disable them with chains.<slug>.enabled: false or reconcile by hand',
    );
  }

  const jobs: Job[] = [];
  if (options.schedule !== false) {
    jobs.push(scheduleJob('expiry-sweep', config.expiry.sweepCron, log, () => sweepExpired(db)));
    jobs.push(scheduleJob('idempotency-purge', config.idempotency.purgeCron, log, () => purgeExpiredKeys(db)));
    jobs.push(scheduleJob('webhook-retention', config.webhooks.retentionCron, log, () => purgeOldWebhooks(db, config.webhooks.retentionDays)));
  }
  // Webhook deliveries (docs/webhooks.md); `chaingate webhooks work` can run more senders elsewhere.
  const webhooks = (options.webhooks ?? options.schedule !== false) ? createWebhookSender({ common }) : null;
  webhooks?.start();

  let stopping: Promise<void> | null = null;
  return {
    app,
    deps,
    url,
    webhooks,
    stop() {
      // Stop accepting, let in-flight requests finish, stop the jobs, then close the database.
      stopping ??= (async () => {
        await app.close();
        await Promise.all([...jobs.map((j) => j.stop()), webhooks?.stop()]);
        await common.close();
      })();
      return stopping;
    },
  };
}
