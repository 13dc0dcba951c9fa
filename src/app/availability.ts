import { availableCurrencies, pollIntervalMs, type AvailableCurrencies, type MerchantChoices, type ResolvedChain, type ResolvedNetwork, type ResolvedRegistry } from '../chains/registry.ts';
import { CHAIN_SLUGS } from '../chains/slugs.ts';
import type { Config } from '../config/schema.ts';
import { readCursorReport, readPoolsAndCursors, type CursorReport } from '../store/availability-rows.ts';
import type { Database } from '../store/orm.ts';
import { GatewayError } from '../domain/errors.ts';
import { fiatExponent } from '../domain/fiat-currencies.ts';
import type { RateSource } from '../domain/rate-source.ts';

// "Offer only what can work" (docs/checkout.md#what-is-offered): a chain and coin are offered to a
// buyer only when the chain's pool has a free deposit address, its indexer has reported recently,
// and a price can be made for the coin in the invoice's currency. Computed from one grouped pool
// count and one read of the indexer cursors, reused for checkout.availabilityCacheMs. The network a
// buyer is offered is each chain's mainnet, or its testnet on a test deployment (offerTestnets).

export type NotOfferedCode = 'NO_FREE_ADDRESS' | 'INDEXER_NEVER_REPORTED' | 'INDEXER_STALE' | 'NO_PRICE';

export interface NotOffered {
  code: NotOfferedCode;
  message: string;
}

export interface AvailabilityContext {
  db: Database;
  registry: ResolvedRegistry;
  config: Pick<Config, 'checkout' | 'pricing' | 'indexer'>;
  rates: RateSource;
}

interface CursorHealth {
  reportedAt: Date | null;
  lastError: string | null;
}

/** What the database says of every pool and indexer, at one moment. */
export interface HealthSnapshot {
  at: Date;
  /** Free addresses per `${chain}:${testnet}`. */
  free: ReadonlyMap<string, number>;
  /** Per `${chain}:${network}`. */
  cursors: ReadonlyMap<string, CursorHealth>;
}

/**
 * The network of a chain that buyers are offered: its mainnet, or on a test deployment
 * (checkout.offerTestnets) its testnet. The buyer surface has no testnet selector (spec), so a
 * deployment offers one or the other, never both.
 */
export function buyerNetwork(chain: ResolvedChain, config: Pick<Config, 'checkout'>): ResolvedNetwork {
  return config.checkout.offerTestnets ? chain.testnet : chain.mainnet;
}

const poolKey = (n: Pick<ResolvedNetwork, 'chain' | 'testnet'>) => `${n.chain}:${n.testnet}`;
const cursorKey = (chain: string, network: string) => `${chain}:${network}`;

function newest(a: Date | null | undefined, b: Date | null | undefined): Date | null {
  if (!a) return b ?? null;
  if (!b) return a;
  return a > b ? a : b;
}

/** When the indexer last reported; a row written before its first block (only a failure) is no report. */
function reportedAt(c: CursorReport): Date | null {
  return newest(c.headSeenAt, c.hasBlock ? c.updatedAt : null);
}

/** One grouped pool count and one cursor read. */
export async function readHealth(db: Database, now = new Date()): Promise<HealthSnapshot> {
  const { pools, cursors } = await readPoolsAndCursors(db);
  return {
    at: now,
    free: new Map(pools.map((p) => [`${p.chain}:${p.isTestnet}`, p.free])),
    cursors: new Map(cursors.map((c) => [cursorKey(c.chain, c.network), { reportedAt: reportedAt(c), lastError: c.lastError }])),
  };
}

/** How old an indexer's last report may be: the configured limit, but never under three poll intervals. */
export function staleLimitMs(network: ResolvedNetwork, config: AvailabilityContext['config']): number | null {
  const seconds = config.checkout.indexerStaleAfterSeconds;
  if (seconds === null) return null;
  const poll = Math.max(network.pollMs ?? pollIntervalMs(network), config.indexer.minPollMs);
  return Math.max(seconds * 1000, 3 * poll);
}

function indexCommand(network: ResolvedNetwork): string {
  return `chaingate index ${network.chain}${network.testnet ? ' --testnet' : ''}`;
}

/** Why this network's indexer does not count as reporting (null when it does, or when not checked). */
export function indexerProblem(network: ResolvedNetwork, cursor: CursorHealth | undefined, config: AvailabilityContext['config'], now: Date): NotOffered | null {
  const limit = staleLimitMs(network, config);
  if (limit === null) return null;
  if (!cursor?.reportedAt) {
    return { code: 'INDEXER_NEVER_REPORTED', message: `no indexer has reported for ${network.label} (start \`${indexCommand(network)}\`)` };
  }
  const age = now.getTime() - cursor.reportedAt.getTime();
  if (age <= limit) return null;
  const error = cursor.lastError ? `; its last error: ${cursor.lastError}` : '';
  return {
    code: 'INDEXER_STALE',
    message: `the ${network.label} indexer last reported ${Math.round(age / 1000)} s ago (limit ${Math.round(limit / 1000)} s, checkout.indexerStaleAfterSeconds)${error}; is \`${indexCommand(network)}\` running?`,
  };
}

/** Why a network is not offered at all, whatever the coin: empty pool, silent indexer. */
export function networkProblems(network: ResolvedNetwork, health: HealthSnapshot, config: AvailabilityContext['config']): NotOffered[] {
  const problems: NotOffered[] = [];
  if ((health.free.get(poolKey(network)) ?? 0) === 0) {
    problems.push({
      code: 'NO_FREE_ADDRESS',
      message: `the ${network.label} pool has no free deposit address (seed it: \`chaingate wallets seed --chain ${network.chain}${network.testnet ? ' --testnet' : ''}\`)`,
    });
  }
  const indexer = indexerProblem(network, health.cursors.get(cursorKey(network.chain, network.network)), config, health.at);
  if (indexer) problems.push(indexer);
  return problems;
}

/** The coins of `symbols` for which a price can be made in `fiat` right now. */
export async function pricedCoins(rates: RateSource, mode: Config['pricing']['mode'], fiat: string, symbols: readonly string[]): Promise<Set<string>> {
  if (mode === 'verbatim') return new Set(symbols);
  const upper = fiat.toUpperCase();
  if (fiatExponent(upper) === undefined) return new Set();
  const quotes = await Promise.all(symbols.map(async (s) => [s, await rates.getRate(s, upper).catch(() => null)] as const));
  return new Set(quotes.filter(([, q]) => q !== null && !/^0*(\.0*)?$/.test(q.rate)).map(([s]) => s));
}

/** A network's standing, for `chaingate status` and serve's start-up warnings. */
export interface NetworkOffer {
  chain: string;
  network: string;
  testnet: boolean;
  label: string;
  offered: boolean;
  /** Coins a buyer can be offered (in at least one of `fiats`). */
  coins: string[];
  /** Coins left out for want of a price in any of `fiats`. */
  unpriced: string[];
  /** Why the network is not offered; empty when it is. */
  reasons: NotOffered[];
  fiats: string[];
}

/** Fiat currencies the report prices coins in: the static table's, or USD for a rate API. */
export function referenceFiats(pricing: Config['pricing']): string[] {
  if (pricing.source !== 'static') return ['USD'];
  const fiats = new Set(['USD']);
  for (const byFiat of Object.values(pricing.static)) for (const f of Object.keys(byFiat)) fiats.add(f.toUpperCase());
  return [...fiats].sort();
}

/**
 * Every enabled chain's buyer network (its mainnet, or its testnet with checkout.offerTestnets), and
 * its other network when that has a pool or an indexer, with whether a checkout there can work and
 * why not. Coins count as priced when any reference fiat prices them.
 */
export async function offerReport(ctx: AvailabilityContext, now = new Date(), health?: HealthSnapshot): Promise<NetworkOffer[]> {
  const snapshot = health ?? (await readHealth(ctx.db, now));
  const fiats = referenceFiats(ctx.config.pricing);
  const out: NetworkOffer[] = [];
  for (const slug of CHAIN_SLUGS) {
    const chain = ctx.registry.chains[slug];
    if (!chain.enabled) continue;
    const offeredToBuyers = buyerNetwork(chain, ctx.config);
    for (const network of [chain.mainnet, chain.testnet]) {
      const used = snapshot.free.has(poolKey(network)) || snapshot.cursors.has(cursorKey(network.chain, network.network));
      if (network !== offeredToBuyers && !used) continue;
      const symbols = network.tokens.map((t) => t.symbol);
      const priced = new Set<string>();
      for (const fiat of fiats) for (const s of await pricedCoins(ctx.rates, ctx.config.pricing.mode, fiat, symbols)) priced.add(s);
      const reasons = networkProblems(network, snapshot, ctx.config);
      if (priced.size === 0) {
        reasons.push({ code: 'NO_PRICE', message: `no price can be made for ${symbols.join(', ')} in ${fiats.join(', ')} (pricing.${ctx.config.pricing.source === 'static' ? 'static' : 'http'}; docs/pricing.md)` });
      }
      out.push({
        chain: network.chain,
        network: network.network,
        testnet: network.testnet,
        label: network.label,
        offered: reasons.length === 0,
        coins: symbols.filter((s) => priced.has(s)),
        unpriced: symbols.filter((s) => !priced.has(s)),
        reasons,
        fiats,
      });
    }
  }
  return out;
}

/** The per-daemon service: cached snapshots, the public offer, and the checkout gate. */
export interface Availability {
  /** What a buyer of an invoice in `fiat` is offered (on the buyer networks), narrowed by the merchant's choices. */
  offered(choices: MerchantChoices, fiat: string, now?: Date): Promise<AvailableCurrencies>;
  /** Throws SERVICE_UNAVAILABLE when the network's indexer is not reporting; reads its cursor afresh. */
  assertIndexed(network: ResolvedNetwork, now?: Date): Promise<void>;
  /**
   * The signed gateway's form of the same check: CHAIN_NOT_MONITORED, saying which (the caller is
   * the merchant's server, not the public). Off, as for the buyer, with indexerStaleAfterSeconds: null.
   */
  assertMonitored(network: ResolvedNetwork, now?: Date): Promise<void>;
}

export function createAvailability(ctx: AvailabilityContext): Availability {
  const cacheMs = ctx.config.checkout.availabilityCacheMs;
  let cached: { until: number; snapshot: Promise<HealthSnapshot> } | null = null;
  const prices = new Map<string, { until: number; coins: Promise<Set<string>> }>();
  const answers = new Map<string, { snapshot: Promise<HealthSnapshot>; coins: Promise<Set<string>>; answer: Promise<AvailableCurrencies> }>();
  const testnets = ctx.config.checkout.offerTestnets;
  const allSymbols = [...new Set(CHAIN_SLUGS.flatMap((s) => buyerNetwork(ctx.registry.chains[s], ctx.config).tokens.map((t) => t.symbol)))];

  const health = (now: Date): Promise<HealthSnapshot> => {
    if (cached && cached.until > Date.now()) return cached.snapshot;
    const snapshot = readHealth(ctx.db, now);
    cached = { until: Date.now() + cacheMs, snapshot };
    snapshot.catch(() => (cached = null));
    return snapshot;
  };
  const priced = (fiat: string): Promise<Set<string>> => {
    const key = fiat.toUpperCase();
    const hit = prices.get(key);
    if (hit && hit.until > Date.now()) return hit.coins;
    const coins = pricedCoins(ctx.rates, ctx.config.pricing.mode, key, allSymbols);
    if (prices.size > 200) prices.clear();
    prices.set(key, { until: Date.now() + cacheMs, coins });
    return coins;
  };

  /** The offer computed from a snapshot and the priced coins. */
  const offer = async (choices: MerchantChoices, snapshotP: Promise<HealthSnapshot>, coinsP: Promise<Set<string>>): Promise<AvailableCurrencies> => {
    const base = availableCurrencies(ctx.registry, choices, testnets);
    const [snapshot, coins] = await Promise.all([snapshotP, coinsP]);
    const availableBlockchains: string[] = [];
    const currencies: Record<string, string[]> = {};
    for (const slug of base.availableBlockchains) {
      const network = buyerNetwork(ctx.registry.chains[slug as keyof ResolvedRegistry['chains']], ctx.config);
      if (networkProblems(network, snapshot, ctx.config).length > 0) continue;
      const symbols = (base.availableCurrencies[slug] ?? []).filter((s) => coins.has(s));
      if (symbols.length === 0) continue;
      availableBlockchains.push(slug);
      currencies[slug] = symbols;
    }
    return { availableBlockchains, availableCurrencies: currencies };
  };

  /** Why the network's indexer does not count as reporting, from its cursor read afresh (not the cache). */
  const indexerProblemNow = async (network: ResolvedNetwork, now: Date): Promise<NotOffered | null> => {
    if (ctx.config.checkout.indexerStaleAfterSeconds === null) return null;
    const row = await readCursorReport(ctx.db, network.chain, network.network);
    return indexerProblem(network, row ? { reportedAt: reportedAt(row), lastError: row.lastError } : undefined, ctx.config, now);
  };

  return {
    offered(choices, fiat, now = new Date()) {
      const snapshotP = health(now);
      const coinsP = priced(fiat);
      // Same snapshot, same prices, same choices: the same answer (the snapshot's own time decides
      // staleness), so its promise is kept with them and computed once per cache period, not per read.
      const key = `${fiat.toUpperCase()}|${JSON.stringify(choices.acceptedChains ?? null)}|${JSON.stringify(choices.acceptedCurrencies ?? null)}`;
      const hit = answers.get(key);
      if (hit && hit.snapshot === snapshotP && hit.coins === coinsP) return hit.answer;
      const answer = offer(choices, snapshotP, coinsP);
      if (answers.size > 1000) answers.clear();
      answers.set(key, { snapshot: snapshotP, coins: coinsP, answer });
      return answer;
    },
    async assertIndexed(network, now = new Date()) {
      if (await indexerProblemNow(network, now)) {
        throw new GatewayError('SERVICE_UNAVAILABLE', `${network.chain} is not offered right now: its payments cannot be detected (no recent report from its indexer); choose another chain or retry later`, {
          headers: { 'Retry-After': '30' },
        });
      }
    },
    async assertMonitored(network, now = new Date()) {
      const problem = await indexerProblemNow(network, now);
      if (!problem) return;
      // Not the problem's own message: an indexer's last error may name an RPC endpoint, which is the operator's.
      const why = problem.code === 'INDEXER_NEVER_REPORTED' ? 'no indexer has ever reported for it' : 'its indexer has not reported recently';
      throw new GatewayError('CHAIN_NOT_MONITORED', `${network.label} is not monitored (${why}), so a payment there could not be detected; no address was leased. Retry later or choose another chain`, {
        headers: { 'Retry-After': '30' },
      });
    },
  };
}

const services = new WeakMap<object, Availability>();

/** One service per daemon (keyed by its deps), so the public read and the page share the cache. */
export function availabilityOf(deps: { common: { db: Database; config: Config }; registry: ResolvedRegistry; rates: RateSource }): Availability {
  let service = services.get(deps);
  if (!service) {
    service = createAvailability({ db: deps.common.db, registry: deps.registry, config: deps.common.config, rates: deps.rates });
    services.set(deps, service);
  }
  return service;
}
