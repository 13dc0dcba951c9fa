import type { ResolvedNetwork } from '../chains/registry.ts';
import { UsageError } from '../domain/errors.ts';
import { RpcUnsupportedError } from './source.ts';

/** The config key of a network's endpoint, as error messages name it. */
export function endpoint(network: ResolvedNetwork, key: 'rpcUrl' | 'apiUrl' = 'rpcUrl'): string {
  return `chains.${network.chain}.${network.testnet ? 'testnet' : 'mainnet'}.${key}`;
}

/** A start-up call whose refusal (method disabled, wrong parameters) stops the indexer with one clear line. */
export async function probe<T>(network: ResolvedNetwork, method: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof RpcUnsupportedError) {
      throw new UsageError(`${new URL(network.rpcUrl).host} does not serve ${method}, which the ${network.chain} indexer needs: point ${endpoint(network)} at an endpoint that does (${err.message.slice(0, 160)})`);
    }
    throw err;
  }
}
