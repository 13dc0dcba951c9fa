import { UsageError } from '../../domain/errors.ts';
import { probeGetLogs } from '../jsonrpc/probe-logs.ts';
import { createRpc } from '../jsonrpc/rpc.ts';
import { quantity } from '../jsonrpc/schemas.ts';
import { createHttpClient } from '../http-client.ts';
import { endpoint, probe } from '../probe.ts';
import type { SourceFactory } from '../source.ts';
import { createJavaTronApi, TronApiError } from './java-tron-api.ts';
import { createTronSource, TRON_CHAIN_IDS } from './tron-source.ts';

/**
 * The Tron reader: java-tron's /jsonrpc (chain id, TRC-20 logs) and its HTTP API (native TRX,
 * solidified height), each checked to serve the configured network.
 */
export const connectTron: SourceFactory = async (network, config, log) => {
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
    const http = createHttpClient({ baseUrl: apiUrl, timeoutMs: config.indexer.rpcTimeoutMs, log, ...(headers ? { headers } : {}) });
    const api = createJavaTronApi(http);
    // The HTTP API must be the same network as the /jsonrpc: its genesis block id ends in the chain id.
    const genesis = await api.blockId(0n).catch((err: unknown) => {
      if (err instanceof TronApiError) throw new UsageError(`${new URL(apiUrl).host} does not answer as java-tron's HTTP API (${err.message}); check ${endpoint(network, 'apiUrl')}`);
      throw err;
    });
    if (expected !== undefined && !genesis?.endsWith(expected.toString(16).padStart(8, '0'))) {
      throw new UsageError(`${new URL(apiUrl).host} (java-tron HTTP API) does not serve tron ${network.network}: its block 0 is ${genesis?.slice(0, 16) ?? 'missing'}…; check ${endpoint(network, 'apiUrl')}`);
    }
    const finality = (await api.solidified()) !== null;
    if (!finality) log.info({ chain: network.chain, network: network.network }, 'the node serves no /walletsolidity: completion uses the confirmation count alone');
    await probeGetLogs(network, rpc, '0x0');
    return createTronSource({ api, rpc, addressChunk: config.indexer.addressesPerLogQuery, finality });
  } catch (err) {
    rpc.close();
    throw err;
  }
};
