import type { ResolvedNetwork } from '../../chains/registry.ts';
import { UsageError } from '../../domain/errors.ts';
import type { Logger } from '../../logger.ts';
import { endpoint, probe } from '../probe.ts';
import type { SourceFactory } from '../source.ts';
import { createEvmSource } from './evm-source.ts';
import { probeFinalized } from './finality.ts';
import { createRpc, type Rpc } from '../jsonrpc/rpc.ts';
import { quantity } from '../jsonrpc/schemas.ts';
import { probeGetLogs } from '../jsonrpc/probe-logs.ts';

/** The EVM reader, once its endpoint proved to serve the configured chain id and the methods it needs. */
export const connectEvm: SourceFactory = async (network, config, log) => {
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
};


/**
 * The methods an EVM indexer needs answer at start-up: eth_getLogs over a small range (BNB Chain's
 * public dataseed endpoints, for one, disable it), and whether the `finalized` tag is served —
 * completion then waits for it, with the confirmation count as a floor (docs/chains.md). Returns
 * the finalized height, or null when the node does not serve the tag (logged once).
 */
async function checkEvmMethods(network: ResolvedNetwork, rpc: Rpc, log: Logger): Promise<bigint | null> {
  const head = `0x${BigInt(await probe(network, 'eth_blockNumber', () => rpc.call('eth_blockNumber', [], { schema: quantity }))).toString(16)}`;
  await probeGetLogs(network, rpc, head);
  const finalized = await probeFinalized(rpc).catch((err: unknown) => {
    throw new Error(`${new URL(network.rpcUrl).host} did not answer eth_getBlockByNumber("finalized") after several attempts: ${(err as Error).message.slice(0, 200)}`);
  });
  if (finalized.served) return finalized.finalized;
  log.info({ chain: network.chain, network: network.network, answer: finalized.reason.slice(0, 200) }, 'the node does not serve the finalized block tag: completion uses the confirmation count alone');
  return null;
}
