import { InvalidAddressError, UsageError } from '../domain/errors.ts';
import { CHAIN_DEFAULTS } from './chain-defaults.ts';
import { CHAIN_SLUGS, isChainSlug, type ChainFamily, type ChainSlug } from './slugs.ts';
import type { ChainDefaults, CoinSpec, NetworkDefaults } from './chain-defaults.ts';
import type { ChainOverride, NetworkOverride } from './chain-config-schema.ts';

// The resolved chain registry: built-in defaults (chain-defaults.ts) with the operator's
// `chains:` config merged per chain and network. Everything chain-specific that the rest of the
// program needs is read from here instead of being branched on by slug.


export interface TokenRef {
  symbol: string;
  decimals: number;
  /** Contract, mint or jetton-master address; null for the chain's native coin. */
  address: string | null;
}

/** A network's defaults with the operator's overrides applied, plus what the chain says of it. */
export interface ResolvedNetwork extends Omit<NetworkDefaults, 'tokens'> {
  chain: ChainSlug;
  family: ChainFamily;
  testnet: boolean;
  /** The chain's `enabled` flag, repeated here so a network alone answers it. */
  enabled: boolean;
  native: CoinSpec;
  /** The native coin first, then contract tokens in the spec's order. */
  tokens: readonly TokenRef[];
  /** EVM payment contract for the web3 and service_wallet methods; null when not configured. */
  paymentContract: string | null;
  treasury: string | null;
  /** Whether the RPC endpoint serves call traces (native transfers made by contracts). */
  traces: boolean;
  /** java-tron's HTTP API for tron (default: rpcUrl without its /jsonrpc path); null elsewhere unless set. */
  apiUrl: string | null;
  apiKey: string | null;
  /** bitcoin: where blocks are read (an Esplora API, or a Bitcoin Core node's JSON-RPC). */
  source: 'esplora' | 'core';
  /** solana: every block, or per open deposit (docs/indexers.md). */
  mode: 'blocks' | 'addresses';
  concurrency: number;
  /** Blocks behind the head where an indexer without a cursor starts. */
  startMargin: number;
}

export interface ResolvedChain {
  slug: ChainSlug;
  name: string;
  family: ChainFamily;
  enabled: boolean;
  mainnet: ResolvedNetwork;
  testnet: ResolvedNetwork;
}

export interface ResolvedRegistry {
  chains: Readonly<Record<ChainSlug, ResolvedChain>>;
}

export interface MerchantChoices {
  /** Chain slugs the merchant accepts; null accepts every enabled chain. */
  acceptedChains: string[] | null;
  /** Symbols accepted per chain slug; null (or a chain left out) accepts every token of that chain. */
  acceptedCurrencies: Record<string, string[]> | null;
}

export interface AvailableCurrencies {
  availableBlockchains: string[];
  availableCurrencies: Record<string, string[]>;
}


/**
 * An address in its canonical form for its family and network, or InvalidAddressError: the chain
 * families provide it (src/families/families.ts), so that this registry of data loads no family.
 */
export type CanonicalAddress = (family: ChainFamily, address: string, testnet: boolean, options: { kind: 'deposit' | 'contract'; network: string }) => string;

export function isEvm(slug: string): boolean {
  return isChainSlug(slug) && CHAIN_DEFAULTS[slug].family === 'evm';
}

/** Builds the registry from the defaults and the operator's `chains:` config; throws UsageError naming the bad key. */
export function resolveRegistry(overrides: Record<string, ChainOverride>, canonicalAddress: CanonicalAddress): ResolvedRegistry {
  for (const key of Object.keys(overrides)) {
    if (!isChainSlug(key)) {
      throw new UsageError(`chains.${key}: unknown chain slug (known: ${CHAIN_SLUGS.join(', ')})`);
    }
  }
  const chains = {} as Record<ChainSlug, ResolvedChain>;
  for (const slug of CHAIN_SLUGS) {
    const defaults = CHAIN_DEFAULTS[slug];
    const override = overrides[slug] ?? {};
    const enabled = override.enabled ?? true;
    chains[slug] = {
      slug,
      name: defaults.name,
      family: defaults.family,
      enabled,
      mainnet: resolveNetwork(slug, defaults, false, enabled, override.mainnet ?? {}, canonicalAddress),
      testnet: resolveNetwork(slug, defaults, true, enabled, override.testnet ?? {}, canonicalAddress),
    };
  }
  return { chains };
}

function resolveNetwork(
  slug: ChainSlug,
  chain: ChainDefaults,
  testnet: boolean,
  enabled: boolean,
  override: NetworkOverride,
  canonicalAddress: CanonicalAddress,
): ResolvedNetwork {
  const kind = testnet ? 'testnet' : 'mainnet';
  const at = `chains.${slug}.${kind}`;
  const defaults: NetworkDefaults = chain[kind];
  const requiredConfirmations = override.confirmations ?? defaults.requiredConfirmations;

  const address = (key: string, value: string, addressKind: 'deposit' | 'contract'): string => {
    try {
      return canonicalAddress(chain.family, value, testnet, { kind: addressKind, network: override.network ?? defaults.network });
    } catch (error) {
      if (error instanceof InvalidAddressError) throw new UsageError(`${at}.${key}: ${error.message}`);
      throw error;
    }
  };

  const devnet = override.network === 'DEVNET';
  if (override.network !== undefined && !testnet) {
    throw new UsageError(`${at}.network: a mainnet is MAINNET; only testnets have variants (bitcoin: TESTNET4, SIGNET, REGTEST; EVM: DEVNET)`);
  }
  if (override.network !== undefined && (devnet ? chain.family !== 'evm' : chain.family !== 'bitcoin')) {
    throw new UsageError(`${at}.network: ${override.network} is ${devnet ? 'a local EVM chain' : "one of bitcoin's test networks"}; ${slug}'s testnet ${chain.family === 'bitcoin' ? 'takes TESTNET4, SIGNET or REGTEST' : chain.family === 'evm' ? 'takes DEVNET' : 'has no variants'}`);
  }
  if (devnet && override.rpcUrl === undefined) {
    throw new UsageError(`${at}.rpcUrl: required with network: DEVNET (the local node's URL, e.g. http://127.0.0.1:8545)`);
  }
  if (override.chainId !== undefined && !devnet) {
    throw new UsageError(`${at}.chainId: only a local chain (network: DEVNET) has an id of its own; ${chain.name}'s ${kind} is ${defaults.chainId ?? 'not an EVM chain'}`);
  }
  if ((override.mode !== undefined || override.concurrency !== undefined) && chain.family !== 'solana') {
    throw new UsageError(`${at}.${override.mode !== undefined ? 'mode' : 'concurrency'}: only solana has read modes`);
  }
  if (override.source !== undefined && chain.family !== 'bitcoin') {
    throw new UsageError(`${at}.source: only bitcoin reads from a choice of sources (esplora, core)`);
  }
  if (override.traces && chain.family !== 'evm') {
    throw new UsageError(`${at}.traces: call traces exist on EVM chains only; the ${slug} indexer reads native transfers from the chain's own API`);
  }
  if (override.eip7702 !== undefined && chain.family !== 'evm') {
    throw new UsageError(`${at}.eip7702: EIP-7702 is an EVM feature; ${slug} has no such choice`);
  }
  if (override.paymentContract !== undefined && chain.family !== 'evm') {
    throw new UsageError(`${at}.paymentContract: payment contracts exist on EVM chains only, not on ${slug}`);
  }

  return {
    chain: slug,
    family: chain.family,
    testnet,
    enabled,
    network: override.network ?? defaults.network,
    // A DEVNET is a local chain: its own id (Hardhat's 31337 unless set), never the public testnet's.
    chainId: devnet ? (override.chainId ?? 31_337) : defaults.chainId,
    label: override.label ?? (override.network && override.network !== defaults.network ? `${chain.name} ${override.network.toLowerCase()}` : defaults.label),
    // Another network than the default (a DEVNET, bitcoin's SIGNET or REGTEST) is not the default's explorer's.
    explorerTxUrl: override.explorerTxUrl !== undefined ? override.explorerTxUrl : override.network && override.network !== defaults.network ? null : defaults.explorerTxUrl,
    blockTimeMs: override.blockTimeMs ?? defaults.blockTimeMs,
    rpcUrl: override.rpcUrl ?? defaults.rpcUrl,
    requiredConfirmations,
    eip7702: override.eip7702 ?? defaults.eip7702 ?? false,
    native: chain.native,
    // A local chain has none of the public testnet's token contracts: only those the config names.
    tokens: resolveTokens(at, chain, devnet ? { ...defaults, tokens: {} } : defaults, override, (key, value) => address(key, value, 'contract')),
    paymentContract:
      override.paymentContract === undefined ? null : address('paymentContract', override.paymentContract, 'contract'),
    treasury: override.treasury === undefined ? null : address('treasury', override.treasury, 'deposit'),
    traces: override.traces ?? false,
    apiUrl: override.apiUrl ?? (chain.family === 'tron' ? (override.rpcUrl ?? defaults.rpcUrl).replace(/\/jsonrpc\/?$/, '') : null),
    apiKey: override.apiKey ?? null,
    source: override.source ?? 'esplora',
    mode: override.mode ?? 'blocks',
    concurrency: override.concurrency ?? 4,
    ...(override.pollMs ?? defaults.pollMs ? { pollMs: override.pollMs ?? defaults.pollMs } : {}),
    startMargin: override.startMargin ?? requiredConfirmations,
  };
}

function resolveTokens(
  at: string,
  chain: ChainDefaults,
  defaults: NetworkDefaults,
  override: NetworkOverride,
  address: (key: string, value: string) => string,
): TokenRef[] {
  const overrides = override.tokens ?? {};
  for (const symbol of Object.keys(overrides)) {
    const key = `tokens.${symbol}`;
    if (symbol === chain.native.symbol) {
      throw new UsageError(`${at}.${key}: ${symbol} is the native coin and has no contract address`);
    }
    if (!chain.tokenSymbols.includes(symbol)) {
      const known = chain.tokenSymbols.length > 0 ? chain.tokenSymbols.join(', ') : 'none besides the native coin';
      throw new UsageError(`${at}.${key}: ${chain.name} does not carry ${symbol} (tokens: ${known})`);
    }
  }

  const tokens: TokenRef[] = [{ symbol: chain.native.symbol, decimals: chain.native.decimals, address: null }];
  for (const symbol of chain.tokenSymbols) {
    const base = defaults.tokens[symbol];
    const patch = overrides[symbol];
    if (patch !== undefined) {
      const decimals = patch.decimals ?? base?.decimals;
      // A token absent from the defaults (e.g. on a testnet with no official token) has no decimals to fall back on.
      if (decimals === undefined) {
        throw new UsageError(`${at}.tokens.${symbol}.decimals: required when adding a token the registry does not list`);
      }
      tokens.push({ symbol, decimals, address: address(`tokens.${symbol}.address`, patch.address) });
    } else if (base !== undefined) {
      tokens.push({ symbol, decimals: base.decimals, address: base.address });
    }
  }
  return tokens;
}

/** The network of a chain; throws UsageError for a slug the registry does not know. */
export function getNetwork(registry: ResolvedRegistry, slug: string, testnet: boolean): ResolvedNetwork {
  if (!isChainSlug(slug)) throw new UsageError(`unknown chain slug ${JSON.stringify(slug)} (known: ${CHAIN_SLUGS.join(', ')})`);
  const chain = registry.chains[slug];
  return testnet ? chain.testnet : chain.mainnet;
}

/** The explorer's page of a transaction on the network, or null when it names no explorer. */
export function explorerTxUrl(network: Pick<ResolvedNetwork, 'explorerTxUrl'>, txHash: string): string | null {
  return network.explorerTxUrl ? network.explorerTxUrl.replace('{txHash}', encodeURIComponent(txHash)) : null;
}

/** The token of that symbol on the network (case-insensitive), or undefined when the network does not carry it. */
export function findToken(network: ResolvedNetwork, symbol: string): TokenRef | undefined {
  const wanted = symbol.toUpperCase();
  return network.tokens.find((token) => token.symbol === wanted);
}

const POLL_FLOOR_MS = 5_000;

/** How often a tracker re-checks a network: its block time, but never more often than every 5 s (spec). */
export function pollIntervalMs(network: Pick<ResolvedNetwork, 'blockTimeMs'>): number {
  return Math.max(network.blockTimeMs, POLL_FLOOR_MS);
}

/** What a buyer may choose: enabled chains and their tokens, narrowed by the merchant's choices (null = all). */
export function availableCurrencies(
  registry: ResolvedRegistry,
  merchant: MerchantChoices,
  testnet = false,
): AvailableCurrencies {
  const acceptedChains = merchant.acceptedChains === null ? null : new Set(merchant.acceptedChains.map((s) => s.toLowerCase()));
  const acceptedBySlug = new Map<string, Set<string>>();
  for (const [slug, symbols] of Object.entries(merchant.acceptedCurrencies ?? {})) {
    acceptedBySlug.set(slug.toLowerCase(), new Set(symbols.map((s) => s.toUpperCase())));
  }

  const availableBlockchains: string[] = [];
  const currencies: Record<string, string[]> = {};
  for (const slug of CHAIN_SLUGS) {
    const chain = registry.chains[slug];
    if (!chain.enabled || (acceptedChains !== null && !acceptedChains.has(slug))) continue;
    const network = testnet ? chain.testnet : chain.mainnet;
    const accepted = acceptedBySlug.get(slug);
    const symbols = network.tokens.map((t) => t.symbol).filter((symbol) => accepted === undefined || accepted.has(symbol));
    if (symbols.length === 0) continue;
    availableBlockchains.push(slug);
    currencies[slug] = symbols;
  }
  return { availableBlockchains, availableCurrencies: currencies };
}
