import { createHttpRateSource } from './rate-source-http.ts';
import { createPeggedRateSource, createStaticRateSource, DEFAULT_PEGS, type RateSource } from './rate-source.ts';

export interface PricingSourceConfig {
  source: 'static' | 'http';
  static: Record<string, Record<string, string>>;
  http: { baseUrl: string; ttlSeconds: number; timeoutMs: number };
  /** Overrides DEFAULT_PEGS. */
  pegs?: Record<string, string>;
}

/**
 * The rate source the `pricing:` config describes, with the stablecoin peg applied. With the static
 * source an explicit table entry for a pegged pair (say USDT/USD "0.999") wins over the peg.
 */
export function createRateSourceFromConfig(config: PricingSourceConfig, coinIds: Readonly<Record<string, string>>): RateSource {
  const pegs = { ...(config.pegs ?? DEFAULT_PEGS) };
  if (config.source === 'static') {
    for (const [symbol, fiat] of Object.entries(pegs)) {
      const entry = Object.entries(config.static).find(([s]) => s.toUpperCase() === symbol.toUpperCase())?.[1];
      if (entry && Object.keys(entry).some((f) => f.toUpperCase() === fiat.toUpperCase())) delete pegs[symbol];
    }
  }
  const inner = config.source === 'static' ? createStaticRateSource(config.static) : createHttpRateSource({ ...config.http, coinIds });
  return createPeggedRateSource(inner, { pegs });
}
