import { UsageError } from '../../domain/errors.ts';
import { createHttpClient } from '../http-client.ts';
import { endpoint } from '../probe.ts';
import type { SourceFactory } from '../source.ts';
import { createTonSource, TON_GLOBAL_IDS } from './ton-source.ts';
import { createToncenterV3, TonApiError } from './toncenter-v3.ts';

/** The TON reader on toncenter API v3, once the masterchain head proved the configured network. */
export const connectTon: SourceFactory = async (network, config, log) => {
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
  return createTonSource({ api, jettonMasters: network.tokens.flatMap((t) => (t.address ? [t.address] : [])), testnet: network.testnet });
};
