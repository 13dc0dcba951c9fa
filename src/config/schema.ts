import { z } from 'zod';
import { chainOverrideSchema } from '../chains/chain-config-schema.ts';

const decimalString = z.string().regex(/^(0|[1-9]\d*)(\.\d+)?$/, 'a decimal string such as "3000" or "0.5"');

export const databaseUrl = z
  .string()
  .refine((v) => /^sqlite:.+/.test(v) || /^postgres(ql)?:\/\/.+/.test(v), 'must be sqlite:<path> or postgres://…');

export const configSchema = z.strictObject({
  database: z.strictObject({ url: databaseUrl }),
  server: z.strictObject({
    host: z.string().min(1),
    port: z.coerce.number().int().min(0).max(65_535),
    trustProxy: z.boolean(),
    bodyLimit: z.int().min(1024).max(64 * 1024 * 1024),
    checkoutPageUrl: z.url().nullable(),
    checkoutAllowedOrigins: z.array(z.string()),
  }),
  security: z.strictObject({
    masterKey: z.string().min(32, 'at least 32 characters (e.g. `openssl rand -hex 32`)').nullable(),
  }),
  log: z.strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  }),
  idempotency: z.strictObject({ ttlHours: z.number().positive(), purgeCron: z.string() }),
  expiry: z.strictObject({ sweepCron: z.string() }),
  pools: z.strictObject({ lowWaterMark: z.int().min(0) }),
  pricing: z.strictObject({
    mode: z.enum(['convert', 'verbatim']),
    source: z.enum(['static', 'http']),
    static: z.record(z.string(), z.record(z.string(), decimalString)),
    http: z.strictObject({
      baseUrl: z.url(),
      ttlSeconds: z.int().min(0),
      timeoutMs: z.int().min(100),
    }),
  }),
  rateLimit: z
    .strictObject({
      enabled: z.boolean(),
    })
    .catchall(z.unknown()),
  webhooks: z.strictObject({
    maxAttempts: z.int().min(1).max(20),
    timeoutMs: z.int().min(100).max(60_000),
    allowPrivateNetworks: z.boolean(),
  }),
  chains: z.record(z.string(), chainOverrideSchema),
  idToken: z
    .strictObject({
      issuer: z.string().optional(),
      audience: z.string().optional(),
      jwksUrl: z.url().optional(),
      jwk: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
});

export type Config = z.infer<typeof configSchema>;
