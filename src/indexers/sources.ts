import type { ResolvedNetwork } from '../chains/registry.ts';
import type { Config } from '../config/schema.ts';
import { UsageError } from '../domain/errors.ts';
import type { Logger } from '../logger.ts';
import { createEsploraSource, GENESIS } from './bitcoin/esplora-source.ts';
import { createEvmSource } from './evm/evm-source.ts';
import { createRpc } from './evm/rpc.ts';
import { createHttpClient } from './http-client.ts';
import type { ChainSource } from './source.ts';
import { createTronSource, TRON_CHAIN_IDS } from './tron/tron-source.ts';
import { createSolanaSource, SOLANA_GENESIS } from './solana/solana-source.ts';

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
    const remote = BigInt(await rpc.call<string>('eth_chainId', []));
    if (network.chainId !== null && remote !== BigInt(network.chainId)) {
      rpc.close();
      throw new UsageError(`RPC ${new URL(network.rpcUrl).host} serves chain id ${remote}, but ${network.chain} ${network.network} is ${network.chainId}: check ${endpoint(network)}`);
    }
    return createEvmSource({ rpc, traces: network.traces, addressChunk: config.indexer.addressesPerLogQuery });
  },
  async tron(network, config, log) {
    const rpc = createRpc({ url: network.rpcUrl, chainId: null, log, timeoutMs: config.indexer.rpcTimeoutMs });
    const remote = BigInt(await rpc.call<string>('eth_chainId', []));
    const expected = TRON_CHAIN_IDS[network.network];
    if (expected !== undefined && remote !== expected) {
      rpc.close();
      throw new UsageError(`${new URL(network.rpcUrl).host} serves chain id ${remote}, not tron ${network.network} (${expected}): check ${endpoint(network)} (the node's /jsonrpc endpoint)`);
    }
    return createTronSource(createEvmSource({ rpc, traces: network.traces, addressChunk: config.indexer.addressesPerLogQuery }));
  },
  async solana(network, config, log) {
    const http = createHttpClient({ baseUrl: network.rpcUrl, timeoutMs: config.indexer.rpcTimeoutMs, log });
    const genesis = (await http.jsonRpc<string>('getGenesisHash', [])).result;
    const expected = SOLANA_GENESIS[network.network];
    if (expected && genesis !== expected) {
      throw new UsageError(`${new URL(network.rpcUrl).host} serves a cluster whose genesis is ${String(genesis).slice(0, 12)}…, not solana ${network.network}: check ${endpoint(network)}`);
    }
    return createSolanaSource({ http });
  },
  async bitcoin(network, config, log) {
    const http = createHttpClient({ baseUrl: network.rpcUrl, timeoutMs: config.indexer.rpcTimeoutMs, log });
    const genesis = (await http.text('/block-height/0'))?.trim();
    const expected = GENESIS[network.network];
    if (expected && genesis !== expected) {
      throw new UsageError(`${new URL(network.rpcUrl).host} serves a chain whose block 0 is ${genesis?.slice(0, 16)}…, not bitcoin ${network.network}: check ${endpoint(network)}`);
    }
    return createEsploraSource({ http, testnet: network.testnet });
  },
};

export function hasIndexer(family: ResolvedNetwork['family']): boolean {
  return FACTORIES[family] !== undefined;
}

export async function createChainSource(network: ResolvedNetwork, config: Config, log: Logger): Promise<ChainSource> {
  const factory = FACTORIES[network.family];
  if (!factory) throw new UsageError(`the ${network.family} indexer is not available yet (indexed families: ${Object.keys(FACTORIES).join(', ')})`);
  return factory(network, config, log);
}
