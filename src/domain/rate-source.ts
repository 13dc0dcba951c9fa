import { isDecimalString } from './money.ts';

// Where the price of a coin in a fiat currency comes from. Rates are decimal strings of fiat major
// units per one whole coin ("60000.12" USD per BTC), never JS numbers.

export interface RateQuote {
  rate: string;
  /** When the rate was observed (a cached rate keeps the time it was fetched, not the time it was read). */
  at: Date;
  /** Which source answered, when a composite source delegates; defaults to the source's own name. */
  source?: string;
}

export interface RateSource {
  name: string;
  /** The price of one `symbol` in `fiat`, or null when unknown. Never throws for an unavailable rate. */
  getRate(symbol: string, fiat: string): Promise<RateQuote | null>;
}

/** Stablecoins counted at face value in their peg currency; a static rule, overridable per deployment. */
export const DEFAULT_PEGS: Readonly<Record<string, string>> = { USDT: 'USD', USDC: 'USD' };

/** A fixed table, e.g. from config: `{ BTC: { USD: "60000" } }`. Quotes carry the time of the call. */
export function createStaticRateSource(
  table: Record<string, Record<string, string>>,
  options: { now?: () => Date } = {},
): RateSource {
  const now = options.now ?? (() => new Date());
  const rates = new Map<string, string>();
  for (const [symbol, byFiat] of Object.entries(table)) {
    for (const [fiat, rate] of Object.entries(byFiat)) {
      if (!isDecimalString(rate)) throw new RangeError(`rate for ${symbol}/${fiat} is not a decimal string: ${JSON.stringify(rate)}`);
      rates.set(pairKey(symbol, fiat), rate);
    }
  }
  return {
    name: 'static',
    async getRate(symbol, fiat) {
      const rate = rates.get(pairKey(symbol, fiat));
      return rate === undefined ? null : { rate, at: now() };
    },
  };
}

/**
 * Answers "1" for each pegged stablecoin in its peg currency and asks `inner` for everything else
 * (including a stablecoin in another fiat). Pass `pegs: {}` to price stablecoins at market.
 */
export function createPeggedRateSource(
  inner: RateSource,
  options: { pegs?: Record<string, string>; now?: () => Date } = {},
): RateSource {
  const pegs = new Map(Object.entries(options.pegs ?? DEFAULT_PEGS).map(([s, f]) => [s.toUpperCase(), f.toUpperCase()]));
  const now = options.now ?? (() => new Date());
  return {
    name: inner.name,
    async getRate(symbol, fiat) {
      if (pegs.get(symbol.toUpperCase()) === fiat.toUpperCase()) return { rate: '1', at: now(), source: 'peg' };
      return inner.getRate(symbol, fiat);
    },
  };
}

function pairKey(symbol: string, fiat: string): string {
  return `${symbol.toUpperCase()}/${fiat.toUpperCase()}`;
}
