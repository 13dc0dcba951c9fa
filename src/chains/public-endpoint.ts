import type { ChainOverride } from './chain-config-schema.ts';
import type { ResolvedNetwork } from './registry.ts';

// The registry carries a free public endpoint per network so that trying chaingate needs no node
// of its own. A shop's payments are never watched through one silently: a mainnet needs its own
// `rpcUrl` or an explicit `indexer.allowPublicEndpoints: true`, and production needs its own
// everywhere (docs/indexers.md#rpc-endpoints).

export interface EndpointChoice {
  /** The operator's rpcUrl, or null when the registry's public default would be used. */
  configured: boolean;
  /** Why the indexer refuses to start, or null. */
  problem: string | null;
}

export function endpointChoice(
  chains: Record<string, ChainOverride>,
  network: ResolvedNetwork,
  options: { allowPublicEndpoints: boolean; production: boolean },
): EndpointChoice {
  const kind = network.testnet ? 'testnet' : 'mainnet';
  if (chains[network.chain]?.[kind]?.rpcUrl !== undefined) return { configured: true, problem: null };
  const setting = `chains.${network.chain}.${kind}.rpcUrl`;
  const fallback = `the public endpoint ${network.rpcUrl}`;
  if (options.production) {
    return { configured: false, problem: `${setting} is not set, and under NODE_ENV=production every indexer needs an endpoint of its own (without one it would use ${fallback})` };
  }
  if (!network.testnet && !options.allowPublicEndpoints) {
    return {
      configured: false,
      problem: `${setting} is not set: set it to your node's or provider's URL (or set indexer.allowPublicEndpoints: true to use ${fallback}, which nobody chose for your payments)`,
    };
  }
  return { configured: false, problem: null };
}
