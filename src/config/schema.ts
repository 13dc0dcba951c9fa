import { validate as validateCron } from 'node-cron';
import { z } from 'zod';
import { chainOverrideSchema, httpUrl } from '../chains/chain-config-schema.ts';

const decimalString = z.string().regex(/^(0|[1-9]\d*)(\.\d+)?$/, 'a decimal string such as "3000" or "0.5"');

export const databaseUrl = z
  .string()
  .refine((v) => /^sqlite:.+/.test(v) || /^postgres(ql)?:\/\/.+/.test(v), 'must be sqlite:<path> or postgres://…');

// A cron expression node-cron accepts: five or six fields (minute hour day month weekday), as in the defaults.
const cron = z.string().refine((v) => validateCron(v), { message: 'must be a cron expression such as "*/10 * * * *" (minute hour day month weekday)' });

/** At most `max` requests in any `windowMs` milliseconds. */
const windowLimit = z.strictObject({ max: z.int().min(1), windowMs: z.int().min(1).max(86_400_000) });

export const configSchema = z.strictObject({
  database: z.strictObject({ url: databaseUrl }),
  server: z
    .strictObject({
      host: z.string().min(1),
      port: z.coerce.number().int().min(0).max(65_535),
      trustProxy: z.boolean(),
      bodyLimit: z.int().min(1024).max(64 * 1024 * 1024),
      checkoutPageUrl: httpUrl.nullable(),
      checkoutAllowedOrigins: z.array(z.string()),
      /** Whole request (headers and body) must arrive within this; a slow client is cut off with 408. */
      requestTimeoutMs: z.int().min(1000).max(600_000),
      /** Headers must arrive within this; it also ends a new connection that sends nothing. */
      headersTimeoutMs: z.int().min(1000).max(600_000),
      /** An idle keep-alive connection is closed after this; above the load balancer's own idle timeout. */
      keepAliveTimeoutMs: z.int().min(1000).max(600_000),
      /** On SIGTERM, in-flight requests and webhook attempts get this long before they are cut off. */
      shutdownGraceMs: z.int().min(0).max(600_000),
    })
    // Node refuses to start a server whose headers timeout exceeds its request timeout.
    .refine((s) => s.requestTimeoutMs >= s.headersTimeoutMs, {
      path: ['requestTimeoutMs'],
      message: 'must be at least server.headersTimeoutMs (the whole request cannot arrive before its headers)',
    }),
  security: z.strictObject({
    masterKey: z.string().min(32, 'at least 32 characters (e.g. `openssl rand -hex 32`)').nullable(),
  }),
  log: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    /** json: one JSON object a line; pretty: `HH:MM:SS LEVEL msg key=value`; auto: pretty on a terminal, else json. */
    format: z.enum(['auto', 'json', 'pretty']),
  }),
  idempotency: z.strictObject({ ttlHours: z.number().positive(), purgeCron: cron }),
  expiry: z.strictObject({ sweepCron: cron }),
  pools: z.strictObject({ lowWaterMark: z.int().min(0) }),
  /** What the buyer is offered (docs/checkout.md#what-is-offered). */
  checkout: z.strictObject({
    /**
     * A chain is offered only while its indexer has reported within this many seconds (at least three
     * of its poll intervals), and the signed gateway's checkout refuses it otherwise
     * (CHAIN_NOT_MONITORED); null offers and leases chains without looking at their indexer.
     */
    indexerStaleAfterSeconds: z.int().min(10).max(86_400).nullable(),
    /** How long one availability answer (pool counts, indexer reports, prices) is reused, in ms. */
    availabilityCacheMs: z.int().min(0).max(60_000),
    /**
     * A test deployment: the buyer surface offers each chain's testnet instead of its mainnet (marked
     * as a test network on the page), and the gateway checkout's `testnet` defaults to true.
     */
    offerTestnets: z.boolean(),
    /** The hosted page shows a "demo — test phrase, never pay" banner (npm run demo sets it). */
    demoBanner: z.boolean(),
  }),
  /** The merchant dashboard (docs/dashboard.md): pages under /dashboard/, its API under /dashboard/api/. */
  dashboard: z.strictObject({
    enabled: z.boolean(),
    /** null: served on the public listener; otherwise on a listener of its own (an internal interface). */
    host: z.string().min(1).nullable(),
    port: z.coerce.number().int().min(0).max(65_535).nullable(),
    /**
     * The dashboard's own origin as the browser sees it (https://admin.shop.example), checked against
     * the Origin of every state-changing request; null: the Host header's origin.
     */
    publicUrl: z.url().nullable(),
    /** A session ends after this many minutes without a request… */
    idleTimeoutMinutes: z.int().min(1).max(24 * 60),
    /** …and this many hours after sign-in, whatever its activity. */
    absoluteTimeoutHours: z.int().min(1).max(24 * 30),
    /** How often `serve` follows refund and sweep broadcasts that began and have not ended. */
    followBroadcastsCron: cron,
  }),
  /** Prometheus metrics on their own listener (docs/operations.md#metrics-and-health), not the public one. */
  metrics: z.strictObject({
    enabled: z.boolean(),
    host: z.string().min(1),
    port: z.coerce.number().int().min(0).max(65_535),
    /** `index <chain>` serves its own RPC metrics here (0: off; each indexer needs its own port). */
    indexerPort: z.coerce.number().int().min(0).max(65_535),
  }),
  pricing: z.strictObject({
    mode: z.enum(['convert', 'verbatim']),
    source: z.enum(['static', 'http']),
    static: z.record(z.string(), z.record(z.string(), decimalString)),
    http: z.strictObject({
      baseUrl: httpUrl,
      ttlSeconds: z.int().min(0),
      timeoutMs: z.int().min(100),
    }),
  }),
  rateLimit: z.strictObject({
    enabled: z.boolean(),
    /** Per client IP and route of the checkout API (docs/rate-limits.md). */
    routes: z.strictObject({
      invoiceRead: windowLimit,
      invoiceStatus: windowLimit,
      checkout: windowLimit,
      paymentStatus: windowLimit,
      confirm: windowLimit,
    }),
    /** Per client IP across every route of the daemon. */
    serviceWide: z.strictObject({ burst: windowLimit, sustained: windowLimit, gateway: z.boolean() }),
  }),
  webhooks: z
    .strictObject({
      maxAttempts: z.int().min(1).max(20),
      timeoutMs: z.int().min(100).max(60_000),
      allowPrivateNetworks: z.boolean(),
      retryScheduleSeconds: z.array(z.number().min(0).max(7 * 86_400)).min(1),
      retryJitter: z.number().min(0).max(1),
      pollIntervalMs: z.int().min(10).max(60_000),
      leaseSeconds: z.number().positive().max(3600),
      concurrency: z.int().min(1).max(100),
      responseBodyLimit: z.int().min(0).max(64 * 1024),
      retentionDays: z.number().min(0).max(3650),
      retentionCron: cron,
    })
    // A lease must outlive the slowest attempt, or a second sender could take the row mid-attempt.
    .refine((w) => w.leaseSeconds * 1000 >= w.timeoutMs + 5000, {
      path: ['leaseSeconds'],
      message: 'must exceed webhooks.timeoutMs by at least 5 seconds',
    }),
  chains: z.record(z.string(), chainOverrideSchema),
  indexer: z.strictObject({
    maxBlocksPerRange: z.int().min(1).max(10_000),
    minPollMs: z.int().min(50).max(600_000),
    leaseSeconds: z.int().min(5).max(3600),
    lateWatchDays: z.number().min(0).max(365),
    rpcTimeoutMs: z.int().min(500).max(120_000),
    addressesPerLogQuery: z.int().min(1).max(10_000),
    /**
     * A mainnet indexer without `chains.<chain>.mainnet.rpcUrl` refuses to start unless this is
     * true: it would watch payments through a free public endpoint nobody chose. Never under
     * NODE_ENV=production, where every indexer needs its own rpcUrl.
     */
    allowPublicEndpoints: z.boolean(),
  }),
  idToken: z
    .strictObject({
      issuer: z.string().optional(),
      audience: z.string().optional(),
      jwksUrl: httpUrl.optional(),
      jwk: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});

export type Config = z.infer<typeof configSchema>;
