import { isDecimalString } from './money.ts';
import type { RateQuote, RateSource } from './rate-source.ts';

// Rates from an HTTP API speaking CoinGecko's simple-price dialect:
//   GET {baseUrl}/simple/price?ids=bitcoin,ethereum&vs_currencies=usd&include_last_updated_at=true
//   -> {"bitcoin":{"usd":60000.12,"last_updated_at":1711356300}, ...}
// One request per fiat currency fetches every coin at once, and the answer is cached for the TTL,
// which keeps a busy checkout far below the public API's rate limit.

/**
 * CoinGecko ids of the coins that are no chain family's own: the native coins of some EVM chains,
 * and the stablecoins. A family's coin has its id in the family's descriptor; coinRateIds() in
 * src/families/families.ts joins the two, and serve hands the table to the source.
 */
export const OTHER_COIN_IDS: Readonly<Record<string, string>> = {
  POL: 'polygon-ecosystem-token',
  BNB: 'binancecoin',
  AVAX: 'avalanche-2',
  USDT: 'tether',
  USDC: 'usd-coin',
};

export interface HttpRateSourceOptions {
  baseUrl: string;
  /** Our symbols to CoinGecko coin ids: the coins this source prices. */
  coinIds: Readonly<Record<string, string>>;
  ttlSeconds: number;
  timeoutMs: number;
  fetch?: typeof globalThis.fetch;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
}

interface CachedTable {
  fetchedAt: number;
  quotes: Map<string, RateQuote>;
}

/** Never throws: a failed, slow or malformed answer means "no rate" (null). */
export function createHttpRateSource(options: HttpRateSourceOptions): RateSource {
  const doFetch = options.fetch ?? globalThis.fetch;
  const now = options.now ?? Date.now;
  const base = options.baseUrl.replace(/\/+$/, '');
  const ttlMs = options.ttlSeconds * 1000;
  const ids = [...new Set(Object.values(options.coinIds))];
  const cache = new Map<string, CachedTable>();
  const inFlight = new Map<string, Promise<CachedTable | null>>();

  async function load(fiat: string): Promise<CachedTable | null> {
    const url = `${base}/simple/price?ids=${ids.join(',')}&vs_currencies=${encodeURIComponent(fiat)}&include_last_updated_at=true`;
    try {
      const response = await doFetch(url, {
        headers: { accept: 'application/json' },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      if (!response.ok) return null;
      const fetchedAt = now();
      const quotes = parseSimplePrice(await response.text(), fiat, new Date(fetchedAt));
      // An answer without a single usable price is a fault, not news worth caching for the TTL.
      if (quotes === null || quotes.size === 0) return null;
      const table = { fetchedAt, quotes };
      cache.set(fiat, table);
      return table;
    } catch {
      return null;
    }
  }

  async function table(fiat: string): Promise<CachedTable | null> {
    const cached = cache.get(fiat);
    if (cached && now() - cached.fetchedAt < ttlMs) return cached;
    // Concurrent checkouts share one request instead of each firing its own.
    let pending = inFlight.get(fiat);
    if (!pending) {
      pending = load(fiat).finally(() => inFlight.delete(fiat));
      inFlight.set(fiat, pending);
    }
    return pending;
  }

  return {
    name: 'coingecko',
    async getRate(symbol, fiat) {
      const id = options.coinIds[symbol.toUpperCase()];
      if (id === undefined || !/^[a-z]{3}$/i.test(fiat)) return null;
      const loaded = await table(fiat.toLowerCase());
      return loaded?.quotes.get(id) ?? null;
    },
  };
}

/** Quotes per coin id from a simple-price body, or null when the body is not that shape. */
export function parseSimplePrice(body: string, fiat: string, fetchedAt: Date): Map<string, RateQuote> | null {
  let parsed: unknown;
  try {
    // JSON numbers are read from their source text: going through a float would turn
    // 0.1 + tiny into 0.10000000000000001-style noise or lose digits past the 17th.
    parsed = JSON.parse(body, (_key: string, value: unknown, context?: { source?: string }) =>
      typeof value === 'number' ? new JsonNumber(context?.source ?? String(value)) : value,
    );
  } catch {
    return null;
  }
  if (!isRecord(parsed)) return null;
  const quotes = new Map<string, RateQuote>();
  for (const [id, entry] of Object.entries(parsed)) {
    if (!isRecord(entry)) continue;
    const raw = entry[fiat];
    // Only a JSON number is a price; a string "60000" means the API is not what we think it is.
    const rate = raw instanceof JsonNumber ? jsonNumberToDecimal(raw.text) : null;
    if (rate === null || /^0(\.0+)?$/.test(rate)) continue;
    const updated = entry.last_updated_at;
    const seconds = updated instanceof JsonNumber && /^\d{1,12}$/.test(updated.text) ? Number(updated.text) : null;
    quotes.set(id, { rate, at: seconds === null ? fetchedAt : new Date(seconds * 1000) });
  }
  return quotes;
}

const JSON_NUMBER_RE = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;
/** Exponents beyond this are not prices; refusing them keeps the string bounded. */
const MAX_EXPONENT = 60;

/**
 * A JSON number's text as a plain decimal string: "1e-7" -> "0.0000001", "1.5E+3" -> "1500",
 * "60000.120" -> "60000.12". Null for negatives and anything that is not a JSON number.
 */
export function jsonNumberToDecimal(text: string): string | null {
  const match = JSON_NUMBER_RE.exec(text.trim());
  if (!match) return null;
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = match;
  const exponent = Number(exponentText);
  if (sign === '-' || Math.abs(exponent) > MAX_EXPONENT) return null;
  const digits = whole + fraction;
  const point = whole.length + exponent;
  let integerPart: string;
  let fractionPart: string;
  if (point <= 0) {
    integerPart = '0';
    fractionPart = '0'.repeat(-point) + digits;
  } else if (point >= digits.length) {
    integerPart = digits + '0'.repeat(point - digits.length);
    fractionPart = '';
  } else {
    integerPart = digits.slice(0, point);
    fractionPart = digits.slice(point);
  }
  integerPart = integerPart.replace(/^0+(?=\d)/, '');
  fractionPart = fractionPart.replace(/0+$/, '');
  const result = fractionPart === '' ? integerPart : `${integerPart}.${fractionPart}`;
  return isDecimalString(result) ? result : null;
}

/** A JSON number as its source text, so strings and numbers stay apart after parsing. */
class JsonNumber {
  constructor(readonly text: string) {}
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
