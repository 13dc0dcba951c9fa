import { UsageError } from '../../domain/errors.ts';
import { createHttpClient } from '../http-client.ts';
import { endpoint, probe } from '../probe.ts';
import type { SourceFactory } from '../source.ts';
import { createBitcoinSource } from './bitcoin-source.ts';
import { createCoreFetcher } from './core-fetcher.ts';
import { createEsploraFetcher } from './esplora-fetcher.ts';
import { BITCOIN_NETWORKS, type BitcoinNetworkName } from './networks.ts';

/** The bitcoin reader on Esplora or Bitcoin Core, once block 0 proved the configured network. */
export const connectBitcoin: SourceFactory = async (network, config, log) => {
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
};
