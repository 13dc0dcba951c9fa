import type { ResolvedNetwork } from '../chains/registry.ts';
import type { Config } from '../config/schema.ts';
import { UsageError } from '../domain/errors.ts';
import type { Logger } from '../logger.ts';
import { BITCOIN_NETWORKS, type BitcoinNetworkName } from '../chains/bitcoin-networks.ts';
import { createBitcoinSource } from './bitcoin/bitcoin-source.ts';
import { createCoreFetcher } from './bitcoin/core-fetcher.ts';
import { createEsploraFetcher } from './bitcoin/esplora-fetcher.ts';
import { createEvmSource } from './evm/evm-source.ts';
import { probeFinalized } from './evm/finality.ts';
import { quantity } from './evm/schemas.ts';
import { createRpc, RangeTooLargeError, RpcUnsupportedError, type Rpc } from './evm/rpc.ts';
import { createHttpClient } from './http-client.ts';
import type { ChainSource } from './source.ts';
import { createJavaTronApi, TronApiError } from './tron/java-tron-api.ts';
import { createTonSource, TON_GLOBAL_IDS } from './ton/ton-source.ts';
import { createToncenterV3, TonApiError } from './ton/toncenter-v3.ts';
import { createTronSource, TRON_CHAIN_IDS } from './tron/tron-source.ts';
import { createSolanaSource, SOLANA_GENESIS } from './solana/solana-source.ts';
import { associatedTokenAccounts } from './solana/token-accounts.ts';

type SourceFactory = (network: ResolvedNetwork, config: Config, log: Logger) => Promise<ChainSource>;

function endpoint(network: ResolvedNetwork): string {
  return `chains.${network.chain}.${network.testnet ? 'testnet' : 'mainnet'}.rpcUrl`;
}

/**
 * One reader per chain family, behind the ChainSource interface. Each checks at start that its
 * endpoint serves the configured chain (EVM chain id, bitcoin genesis block), so an indexer never
 * credits payments from the wrong network.
 */
const FACTORIES: Partial<Record<ResolvedNetwork['family'], SourceFactory>> = {
  async evm(network, config, log) {
    const rpc = createRpc({ url: network.rpcUrl, chainId: network.chainId, log, timeoutMs: config.indexer.rpcTimeoutMs });
    try {
      const remote = BigInt(await probe(network, 'eth_chainId', () => rpc.call('eth_chainId', [], { schema: quantity })));
      if (network.chainId !== null && remote !== BigInt(network.chainId)) {
        throw new UsageError(`RPC ${new URL(network.rpcUrl).host} serves chain id ${remote}, but ${network.chain} ${network.network} is ${network.chainId}: check ${endpoint(network)}`);
      }
      const finalized = await checkEvmMethods(network, rpc, log);
      return createEvmSource({ rpc, traces: network.traces, addressChunk: config.indexer.addressesPerLogQuery, ...(finalized === null ? {} : { finality: { atStart: finalized, log } }) });
    } catch (err) {
      rpc.close();
      throw err;
    }
  },
  async tron(network, config, log) {
    // TronGrid's key goes with both faces of the node: its /jsonrpc and its HTTP API.
    const headers = network.apiKey ? { 'TRON-PRO-API-KEY': network.apiKey } : undefined;
    const rpc = createRpc({ url: network.rpcUrl, chainId: null, log, timeoutMs: config.indexer.rpcTimeoutMs, ...(headers ? { headers } : {}) });
    try {
      const remote = BigInt(await probe(network, 'eth_chainId', () => rpc.call('eth_chainId', [], { schema: quantity })));
      const expected = TRON_CHAIN_IDS[network.network];
      if (expected !== undefined && remote !== expected) {
        throw new UsageError(`${new URL(network.rpcUrl).host} serves chain id ${remote}, not tron ${network.network} (${expected}): check ${endpoint(network)} (the node's /jsonrpc endpoint)`);
      }
      const apiUrl = network.apiUrl ?? network.rpcUrl.replace(/\/jsonrpc\/?$/, '');
      const http = createHttpClient({
        baseUrl: apiUrl,
        timeoutMs: config.indexer.rpcTimeoutMs,
        log,
        ...(headers ? { headers } : {}),
      });
      const api = createJavaTronApi(http);
      // The HTTP API must be the same network as the /jsonrpc: its genesis block id ends in the chain id.
      const genesis = await api.blockId(0n).catch((err: unknown) => {
        if (err instanceof TronApiError) throw new UsageError(`${new URL(apiUrl).host} does not answer as java-tron's HTTP API (${err.message}); check chains.${network.chain}.${network.testnet ? 'testnet' : 'mainnet'}.apiUrl`);
        throw err;
      });
      if (expected !== undefined && !genesis?.endsWith(expected.toString(16).padStart(8, '0'))) {
        throw new UsageError(`${new URL(apiUrl).host} (java-tron HTTP API) does not serve tron ${network.network}: its block 0 is ${genesis?.slice(0, 16) ?? 'missing'}…; check chains.${network.chain}.${network.testnet ? 'testnet' : 'mainnet'}.apiUrl`);
      }
      const finality = (await api.solidified()) !== null;
      if (!finality) log.info({ chain: network.chain, network: network.network }, 'the node serves no /walletsolidity: completion uses the confirmation count alone');
      await probe(network, 'eth_getLogs', () => rpc.call('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x0', address: '0x0000000000000000000000000000000000000000' }]).catch((err: unknown) => {
        if (err instanceof RangeTooLargeError) return [];
        throw err;
      }));
      return createTronSource({ api, rpc, addressChunk: config.indexer.addressesPerLogQuery, finality });
    } catch (err) {
      rpc.close();
      throw err;
    }
  },
  async solana(network, config, log) {
    const http = createHttpClient({ baseUrl: network.rpcUrl, timeoutMs: config.indexer.rpcTimeoutMs, log });
    const genesis = (await http.jsonRpc<string>('getGenesisHash', [])).result;
    const expected = SOLANA_GENESIS[network.network];
    if (expected && genesis !== expected) {
      throw new UsageError(`${new URL(network.rpcUrl).host} serves a cluster whose genesis is ${String(genesis).slice(0, 12)}…, not solana ${network.network}: check ${endpoint(network)}`);
    }
    const mints = network.tokens.flatMap((t) => (t.address ? [t.address] : []));
    return createSolanaSource({ http, mode: network.mode, concurrency: network.concurrency, mints, tokenAccountOf: associatedTokenAccounts });
  },
  async ton(network, config, log) {
    const http = createHttpClient({
      baseUrl: network.rpcUrl,
      timeoutMs: config.indexer.rpcTimeoutMs,
      log,
      ...(network.apiKey ? { headers: { 'X-API-Key': network.apiKey } } : {}),
    });
    const api = createToncenterV3(http);
    const head = await api.masterchainHead().catch((err: unknown) => {
      if (err instanceof TonApiError) throw new UsageError(`${new URL(network.rpcUrl).host} does not answer as toncenter API v3 (${err.message}): check ${endpoint(network)} (toncenter's base URL)`);
      throw err;
    });
    const expected = TON_GLOBAL_IDS[network.network];
    if (expected !== undefined && head.global_id !== undefined && head.global_id !== expected) {
      throw new UsageError(`${new URL(network.rpcUrl).host} serves TON global id ${head.global_id}, not ton ${network.network} (${expected}): check ${endpoint(network)}`);
    }
    return createTonSource({ api, jettonMasters: network.tokens.flatMap((t) => (t.address ? [t.address] : [])) });
  },
  async bitcoin(network, config, log) {
    const name = network.network as BitcoinNetworkName;
    const params = BITCOIN_NETWORKS[name];
    const fetcher =
      network.source === 'core'
        ? createCoreFetcher({ url: network.rpcUrl, timeoutMs: config.indexer.rpcTimeoutMs, log })
        : createEsploraFetcher(createHttpClient({ baseUrl: network.rpcUrl, timeoutMs: config.indexer.rpcTimeoutMs, log }));
    const genesis = await probe(network, network.source === 'core' ? 'getblockhash' : '/block-height/0', () => fetcher.hashAt(0n));
    if (params && genesis !== params.genesis) {
      throw new UsageError(`${new URL(network.rpcUrl).host} serves a chain whose block 0 is ${genesis?.slice(0, 16)}…, not bitcoin ${network.network}: check ${endpoint(network)}`);
    }
    return createBitcoinSource({ fetcher, network: name });
  },
};

/** A start-up call whose refusal (method disabled, wrong parameters) stops the indexer with one clear line. */
async function probe<T>(network: ResolvedNetwork, method: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof RpcUnsupportedError) {
      throw new UsageError(`${new URL(network.rpcUrl).host} does not serve ${method}, which the ${network.chain} indexer needs: point ${endpoint(network)} at an endpoint that does (${err.message.slice(0, 160)})`);
    }
    throw err;
  }
}

/**
 * The methods an EVM indexer needs answer at start-up: eth_getLogs over a small range (BNB Chain's
 * public dataseed endpoints, for one, disable it), and whether the `finalized` tag is served —
 * completion then waits for it, with the confirmation count as a floor (docs/chains.md). Returns
 * the finalized height, or null when the node does not serve the tag (logged once).
 */
async function checkEvmMethods(network: ResolvedNetwork, rpc: Rpc, log: Logger): Promise<bigint | null> {
  const head = `0x${BigInt(await probe(network, 'eth_blockNumber', () => rpc.call('eth_blockNumber', [], { schema: quantity }))).toString(16)}`;
  // One block: the smallest range any provider accepts. "Range too large" still proves the method exists.
  await probe(network, 'eth_getLogs', () =>
    rpc.call('eth_getLogs', [{ fromBlock: head, toBlock: head, address: '0x0000000000000000000000000000000000000000' }]).catch((err: unknown) => {
      if (err instanceof RangeTooLargeError) return [];
      throw err;
    }),
  );
  const finalized = await probeFinalized(rpc).catch((err: unknown) => {
    throw new Error(`${new URL(network.rpcUrl).host} did not answer eth_getBlockByNumber("finalized") after several attempts: ${(err as Error).message.slice(0, 200)}`);
  });
  if (finalized.served) return finalized.finalized;
  log.info({ chain: network.chain, network: network.network, answer: finalized.reason.slice(0, 200) }, 'the node does not serve the finalized block tag: completion uses the confirmation count alone');
  return null;
}

export function hasIndexer(family: ResolvedNetwork['family']): boolean {
  return FACTORIES[family] !== undefined;
}

export async function createChainSource(network: ResolvedNetwork, config: Config, log: Logger): Promise<ChainSource> {
  const factory = FACTORIES[network.family];
  if (!factory) throw new UsageError(`the ${network.family} indexer is not available yet (indexed families: ${Object.keys(FACTORIES).join(', ')})`);
  return factory(network, config, log);
}
