import { openCommon } from '../../src/cli/context.ts';
import type { Common } from '../../src/common.ts';
import { createMerchant } from '../../src/store/merchants.ts';
import { startDaemon, type Daemon } from '../../src/daemon/serve.ts';
import { inTransaction } from '../../src/store/transaction.ts';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { getNetwork } from '../../src/chains/registry.ts';
import { newId } from '../../src/domain/ids.ts';
import { createTestDatabase, type DialectName } from './databases.ts';

export interface TestMerchant {
  id: string;
  apiKey: string;
  apiSecret: string;
}

export interface TestDaemon {
  url: string;
  daemon: Daemon;
  common: Common;
  merchant: TestMerchant;
  createMerchant(input?: { name?: string; webhookUrl?: string | null; acceptedChains?: string[] | null }): Promise<TestMerchant>;
  /** A signed gateway request with the SDK helper; `raw` sends those exact bytes. */
  signed(method: string, path: string, body?: unknown, options?: SignedOptions): Promise<ApiResponse>;
  /** An unsigned request (checkout surface, or to test auth failures). */
  plain(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<ApiResponse>;
  seedPool(chain: string, addresses: string[], isTestnet?: boolean): Promise<void>;
  /**
   * Writes the indexer cursor of a chain's network as an indexer would after a poll at `at` (default
   * now), for tests that turn the indexer check on (`checkout.indexerStaleAfterSeconds`).
   */
  markIndexed(chain: string, options?: { testnet?: boolean; at?: Date; lastError?: string | null }): Promise<void>;
}

export interface SignedOptions {
  merchant?: TestMerchant;
  idempotencyKey?: string;
  timestamp?: number;
  headers?: Record<string, string>;
  /** The exact body bytes (a Buffer for bytes that are not UTF-8). */
  raw?: string | Buffer;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

export const TEST_MASTER_KEY = 't'.repeat(64);

/**
 * What every test daemon starts with. Most tests open payments without running an indexer, so the
 * indexer check is off (`indexerStaleAfterSeconds: null`) and availability is never cached; tests of
 * "offer only what can work" turn the check on with their own `checkout` override and `markIndexed`.
 */
export const TEST_DAEMON_DEFAULTS = {
  rateLimit: { enabled: false },
  webhooks: { allowPrivateNetworks: true },
  checkout: { indexerStaleAfterSeconds: null, availabilityCacheMs: 0 },
};

/** A daemon on a fresh database of the dialect, on 127.0.0.1 and a free port; stopped by t.after. */
export async function startTestDaemon(
  t: { after(fn: () => Promise<void> | void): void },
  dialect: DialectName,
  overrides: Record<string, unknown> = {},
  /** followBroadcasts: serve's follow-up of refund and sweep broadcasts (off, like the other scheduled jobs, unless asked). */
  options: { followBroadcasts?: boolean } = {},
): Promise<TestDaemon> {
  const tdb = await createTestDatabase(dialect, { migrated: dialect === 'postgresql' });
  const common = await openCommon({
    env: { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: TEST_MASTER_KEY, CHAINGATE_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', CHAINGATE_PORT: '0', CHAINGATE_METRICS_PORT: '0' },
    overrides: { ...TEST_DAEMON_DEFAULTS, ...overrides },
    skipMigrationCheck: true,
  });
  const { migrate } = await import('../../src/store/migrate.ts');
  await migrate(common.db);
  const daemon = await startDaemon(common, { schedule: false, followBroadcasts: options.followBroadcasts ?? false });
  t.after(async () => {
    await daemon.stop();
    await tdb.drop();
  });

  const mk = async (input: { name?: string; webhookUrl?: string | null; acceptedChains?: string[] | null } = {}): Promise<TestMerchant> => {
    const { merchant, apiSecret } = await createMerchant(common.db, common.box, {
      name: input.name ?? 'Acme Corp',
      webhookUrl: input.webhookUrl ?? null,
      acceptedChains: input.acceptedChains ?? null,
    });
    return { id: merchant.id, apiKey: merchant.apiKey, apiSecret };
  };
  const merchant = await mk();

  const send = async (method: string, path: string, headers: Record<string, string>, body: string | Buffer | undefined): Promise<ApiResponse> => {
    const res = await fetch(daemon.url + path, { method, headers, body });
    const text = await res.text();
    let json: unknown ;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, text, json };
  };

  return {
    url: daemon.url,
    daemon,
    common,
    merchant,
    createMerchant: mk,
    async signed(method, path, body, options = {}) {
      const m = options.merchant ?? merchant;
      const raw = options.raw ?? (body === undefined ? undefined : JSON.stringify(body));
      const headers = signRequest({
        apiKey: m.apiKey,
        apiSecret: m.apiSecret,
        method,
        path,
        body: raw ?? '',
        idempotencyKey: options.idempotencyKey,
        timestamp: options.timestamp,
      });
      if (raw === undefined) delete headers['Content-Type'];
      return send(method, path, { ...headers, ...options.headers }, raw);
    },
    async plain(method, path, body, headers = {}) {
      const raw = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      const h: Record<string, string> = { Accept: 'application/json', ...headers };
      if (raw !== undefined && !Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['Content-Type'] = 'application/json';
      return send(method, path, h, raw);
    },
    async seedPool(chain, addresses, isTestnet = false) {
      // In a transaction that is tried again on a lost lock: serve's connection never sleeps on one,
      // and an indexer process may be writing.
      await inTransaction(common.db, async (em) => {
        for (const [i, address] of addresses.entries()) {
          em.create(WalletAddress, { chain, isTestnet, address, source: 'test', derivationIndex: i, paymentId: null, leasedAt: null });
        }
      });
    },
    async markIndexed(chain, options = {}) {
      const network = getNetwork(daemon.deps.registry, chain, options.testnet ?? false);
      const at = options.at ?? new Date();
      const fields = { headSeenAt: at, updatedAt: at, headNumber: '100', lastError: options.lastError ?? null, lastErrorAt: options.lastError ? at : null, lastErrorSeenAt: options.lastError ? at : null };
      await inTransaction(common.db, async (em) => {
        const updated = await em.nativeUpdate(IndexerCursor, { chain: network.chain, network: network.network }, fields);
        if (updated === 0) {
          await em.insert(IndexerCursor, { id: newId(), chain: network.chain, network: network.network, blockNumber: '100', blockHash: `0x${'ab'.repeat(32)}`, leaseOwner: null, leaseUntil: null, blockTime: null, finalizedNumber: null, ...fields });
        }
      });
    },
  };
}

/** n distinct, valid-looking EVM addresses. */
export function evmAddresses(n: number, seed = 1): string[] {
  return Array.from({ length: n }, (_, i) => `0x${(seed * 100000 + i + 1).toString(16).padStart(40, '0')}`);
}
