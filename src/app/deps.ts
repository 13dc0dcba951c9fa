import type { ResolvedRegistry } from '../chains/registry.ts';
import type { Common } from '../common.ts';
import type { RateSource } from '../domain/rate-source.ts';
import { createRateSourceFromConfig } from '../domain/rate-source-config.ts';
import { coinRateIds, resolveChains } from '../families/families.ts';

/** What the daemon's routes and workers share: the common bag plus the resolved registry and rates. */
export interface DaemonDeps {
  common: Common;
  registry: ResolvedRegistry;
  rates: RateSource;
}

export function createDeps(common: Common): DaemonDeps {
  return {
    common,
    registry: resolveChains(common.config.chains),
    rates: createRateSourceFromConfig(common.config.pricing, coinRateIds()),
  };
}
