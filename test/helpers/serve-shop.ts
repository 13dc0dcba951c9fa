import assert from 'node:assert/strict';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { runCli } from './cli.ts';
import { createTestDatabase, type DialectName } from './databases.ts';
import { writeConfigFile } from './indexer-process.ts';

export interface ShopCreds {
  apiKey: string;
  apiSecret: string;
}

export interface Shop {
  /** The database's URL (sqlite:<path> or postgres://…). */
  url: string;
  /** The environment a real `serve` or CLI command of this shop runs with. */
  env: Record<string, string>;
  creds: ShopCreds;
  drop(): Promise<void>;
}

/**
 * A fresh database of the dialect (on PostgreSQL a copy of one migrated once per process; SQLite
 * migrates on the first write), with one merchant point made by `chaingate merchant create`; rate limits off, so load tests measure the
 * store, not the limiter.
 */
export async function newShop(dialect: DialectName, name = 'Test Shop'): Promise<Shop> {
  const tdb = await createTestDatabase(dialect, { migrated: dialect === 'postgresql' });
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'k'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ rateLimit: { enabled: false } }) };
  const made = await runCli(['merchant', 'create', '--name', name, '--json'], env);
  assert.equal(made.code, 0, made.stderr);
  return { url: tdb.url, env, creds: JSON.parse(made.stdout) as ShopCreds, drop: () => tdb.drop() };
}

/** A signed POST /api/v1/invoices of 2500 USD for `orderId`, with `key` (default the order id) as its Idempotency-Key. */
export function createInvoice(baseUrl: string, creds: ShopCreds, orderId: string, key = orderId, init: { signal?: AbortSignal } = {}): Promise<Response> {
  const body = JSON.stringify({ orderId, amount: '2500', currency: 'USD' });
  return fetch(`${baseUrl}/api/v1/invoices`, { method: 'POST', headers: signRequest({ ...creds, method: 'POST', path: '/api/v1/invoices', body, idempotencyKey: key }), body, ...init });
}
