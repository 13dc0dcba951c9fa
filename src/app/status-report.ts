import { indexerCursors, isFailingNow } from '../store/indexer-cursor.ts';
import { originsOnly } from '../domain/http-url.ts';
import type { Database } from '../store/orm.ts';
import { migrationStatus } from '../store/migrate.ts';
import { countPools, type PoolCount } from '../store/wallet-pool.ts';
import { poolReader } from '../store/raw-sql.ts';
import { sweptTotals } from '../store/sweeps.ts';
import { countByStatus, merchantCounts } from '../store/status-counts.ts';
import { failedAttemptsSince, oldestPendingDue } from '../store/webhook-deliveries.ts';
import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import { isChainSlug } from '../chains/slugs.ts';
import { formatUnits } from '../domain/money.ts';
import { offerReport, type AvailabilityContext, type NetworkOffer } from './availability.ts';

export interface StatusReport {
  database: { url: string; dialect: string; pendingMigrations: number };
  merchants: { total: number; active: number };
  invoices: Record<string, number>;
  payments: Record<string, number>;
  /** `network`: the network's name (MAINNET, SEPOLIA, DEVNET, …), as the indexers and the metrics say it. */
  pools: (PoolCount & { network: string })[];
  /**
   * What `sweep broadcast` moved to cold storage per chain, network and coin: final (`swept`) and on
   * its way (`pending`) in coin units, null for a coin the registry does not know; the same in atomic
   * units under `sweptAtomic` and `pendingAtomic`. `network` is named as the pools' is.
   */
  sweeps: { chain: string; network: string; isTestnet: boolean; symbol: string; decimals: number | null; swept: string | null; pending: string | null; sweptAtomic: string; pendingAtomic: string }[];
  indexers: {
    chain: string;
    network: string;
    /** The processed height; null when the indexer has not read a block yet (it failed first). */
    block: string | null;
    /** When the processed height last moved; null when it never has. */
    updatedAt: string | null;
    running: boolean;
    leaseOwner: string | null;
    /** What the node last said, when the indexer has read it. */
    head: string | null;
    lagBlocks: number | null;
    /** Seconds since the indexer last read the head (null: never). */
    lastPollAgeSeconds: number | null;
    /**
     * Its last poll, or an RPC call it keeps retrying, failed, no poll has succeeded since, and a
     * process is still behind it (a lease, or a failure recorded within 2 minutes); a stopped
     * indexer is not failing, whatever its last error was.
     */
    failing: boolean;
    /** When the current run of failures began (null when not failing); the same as lastErrorAt. */
    failingSince: string | null;
    /** The newest failure: for an RPC fault the method, the endpoint (scheme://host[:port]) and the cause. */
    lastError: string | null;
    lastErrorAt: string | null;
    /** The endpoint the config gives this indexer (scheme://host[:port]); null when the report was made without it. */
    endpoint: string | null;
  }[];
  /** Problems: each indexer failing now (dated when its failures began) and failed webhook attempts of the last `recentMinutes`. */
  recentErrors: { at: string; source: string; message: string }[];
  webhooks: { pending: number; failed: number; delivered: number; oldestPendingAt: string | null };
  /**
   * What buyers are offered, per enabled chain (mainnet, and testnets in use): offered or not, and
   * why not (docs/checkout.md#what-is-offered). Empty when the report was made without the config.
   */
  offers: NetworkOffer[];
  generatedAt: string;
}

/** The network's name for a pool or a sweep: the configured one (a DEVNET) where the report has the registry. */
function networkNameOf(chain: string, isTestnet: boolean, registry: AvailabilityContext['registry'] | undefined): string {
  if (!isChainSlug(chain)) return isTestnet ? 'TESTNET' : 'MAINNET';
  if (registry) return (isTestnet ? registry.chains[chain].testnet : registry.chains[chain].mainnet).network;
  return (isTestnet ? CHAIN_DEFAULTS[chain].testnet : CHAIN_DEFAULTS[chain].mainnet).network;
}

/** A coin's decimals from the registry's defaults (sweeps record atomic units per symbol); null when unknown. */
function decimalsOf(chain: string, isTestnet: boolean, symbol: string): number | null {
  if (!isChainSlug(chain)) return null;
  const defaults = CHAIN_DEFAULTS[chain];
  if (defaults.native.symbol === symbol) return defaults.native.decimals;
  return (isTestnet ? defaults.testnet : defaults.mainnet).tokens[symbol]?.decimals ?? null;
}

/** What an operator wants at a glance; read-only, shared by `chaingate status` and its --watch view. */
export async function statusReport(
  db: Database,
  now = new Date(),
  recentMinutes = 15,
  offers?: Omit<AvailabilityContext, 'db'>,
  endpointOf?: (chain: string, network: string) => string | null,
): Promise<StatusReport> {
  const since = new Date(now.getTime() - recentMinutes * 60_000);
  const failedAttempts = await failedAttemptsSince(db, since, 20);
  const [{ pending }, merchants, invoices, payments, pools, cursors, deliveries, swept] = await Promise.all([
    migrationStatus(db),
    merchantCounts(db),
    countByStatus(db, 'invoice'),
    countByStatus(db, 'payment'),
    countPools(db),
    indexerCursors(db),
    countByStatus(db, 'webhook_delivery'),
    sweptTotals(poolReader(db)),
  ]);
  const offered = offers ? await offerReport({ ...offers, db }, now) : [];
  const oldestDue = await oldestPendingDue(db);
  return {
    database: { url: db.url, dialect: db.dialect, pendingMigrations: pending.length },
    merchants,
    invoices,
    payments,
    pools: pools.map((p) => ({ ...p, network: networkNameOf(p.chain, p.isTestnet, offers?.registry) })),
    sweeps: swept.map((t) => {
      const decimals = decimalsOf(t.chain, t.isTestnet, t.symbol);
      const coins = (atomic: string) => (decimals === null ? null : formatUnits(BigInt(atomic), decimals));
      return { chain: t.chain, network: networkNameOf(t.chain, t.isTestnet, offers?.registry), isTestnet: t.isTestnet, symbol: t.symbol, decimals, swept: coins(t.swept), pending: coins(t.pending), sweptAtomic: t.swept, pendingAtomic: t.pending };
    }),
    indexers: cursors.map((c) => ({
      chain: c.chain,
      network: c.network,
      block: c.placed ? c.blockNumber : null,
      updatedAt: c.placed ? c.updatedAt.toISOString() : null,
      running: Boolean(c.leaseOwner && c.leaseUntil && c.leaseUntil > now),
      leaseOwner: c.leaseOwner ?? null,
      head: c.headNumber ?? null,
      lagBlocks: c.headNumber && c.placed ? Math.max(0, Number(c.headNumber) - Number(c.blockNumber)) : null,
      lastPollAgeSeconds: c.headSeenAt ? Math.max(0, Math.round((now.getTime() - c.headSeenAt.getTime()) / 1000)) : null,
      failing: isFailingNow(c, now),
      failingSince: isFailingNow(c, now) ? (c.lastErrorAt?.toISOString() ?? null) : null,
      lastError: c.lastError === null ? null : originsOnly(c.lastError),
      lastErrorAt: c.lastErrorAt?.toISOString() ?? null,
      endpoint: endpointOf?.(c.chain, c.network) ?? null,
    })),
    recentErrors: [
      // An indexer still failing is a current problem however long ago it began.
      ...cursors
        .filter((c) => c.lastErrorAt && isFailingNow(c, now))
        .map((c) => ({ at: c.lastErrorAt!.toISOString(), source: `indexer ${c.chain} ${c.network}`, message: originsOnly(c.lastError!) })),
      ...failedAttempts.map((a) => ({ at: a.attemptedAt.toISOString(), source: 'webhook', message: `${a.url ?? '(no url)'}: ${a.statusCode ? `HTTP ${a.statusCode}` : (a.error ?? 'failed').slice(0, 160)}` })),
    ].sort((a, b) => (a.at < b.at ? 1 : -1)).slice(0, 20),
    webhooks: {
      pending: deliveries.PENDING ?? 0,
      failed: deliveries.FAILED ?? 0,
      delivered: deliveries.DELIVERED ?? 0,
      oldestPendingAt: oldestDue?.toISOString() ?? null,
    },
    offers: offered,
    generatedAt: now.toISOString(),
  };
}
