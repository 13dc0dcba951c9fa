import { GatewayError } from './errors.ts';
import { fiatExponent } from './fiat-currencies.ts';
import { divCeil, formatUnits, isDecimalString, isIntegerString, parseUnits } from './money.ts';
import type { RateSource } from './rate-source.ts';

// Fiat invoice -> crypto payment amount. All arithmetic is on bigint: the fiat amount, the price
// and the coin's decimals are each scaled to integers, and the one division rounds up so the buyer
// is never asked for less than the invoice is worth.

export type PricingMode = 'convert' | 'verbatim';

export interface CoinUnits {
  symbol: string;
  decimals: number;
}

export interface PriceInvoiceInput {
  mode: PricingMode;
  /** Invoice amount in minor units of the fiat currency, e.g. "2500" for USD 25.00. */
  invoiceAmountMinor: string;
  fiatCurrency: string;
  coin: CoinUnits;
  rates: RateSource;
  now: Date;
}

/** Stored as payment metadata.pricing. */
export interface PricingRecord {
  mode: PricingMode;
  /** Fiat major units per one coin; null in verbatim mode. */
  rate: string | null;
  /** Which rate source answered ('static', 'coingecko', 'peg'); null in verbatim mode. */
  source: string | null;
  fiat: string;
  /** ISO time the rate was observed (convert) or the amount was copied (verbatim). */
  at: string;
}

export interface PricedAmount {
  /** Decimal string in whole-coin units (convert) or the invoice amount as given (verbatim). */
  amount: string;
  pricing: PricingRecord;
}

export async function priceInvoice(input: PriceInvoiceInput): Promise<PricedAmount> {
  const fiat = input.fiatCurrency.toUpperCase();
  if (input.mode === 'verbatim') {
    // Spec rule 9: the payment amount is invoice.amount, copied as is, in fiat minor units.
    return {
      amount: input.invoiceAmountMinor,
      pricing: { mode: 'verbatim', rate: null, source: null, fiat, at: input.now.toISOString() },
    };
  }

  const exponent = fiatExponent(fiat);
  if (exponent === undefined) {
    throw new GatewayError('INVALID_CURRENCY', `cannot convert from ${JSON.stringify(input.fiatCurrency)}: not a supported ISO 4217 currency`);
  }
  if (!isIntegerString(input.invoiceAmountMinor)) {
    throw new GatewayError('VALIDATION_ERROR', 'invoice amount must be a non-negative integer string of minor units');
  }

  const symbol = input.coin.symbol.toUpperCase();
  const quote = await input.rates.getRate(symbol, fiat);
  if (quote === null || !isDecimalString(quote.rate) || /^0(\.0+)?$/.test(quote.rate)) {
    throw new GatewayError('RATE_UNAVAILABLE', `no ${symbol}/${fiat} exchange rate is available right now; try again shortly`);
  }

  const atomic = convertMinorToAtomic(BigInt(input.invoiceAmountMinor), exponent, quote.rate, input.coin.decimals);
  return {
    amount: formatUnits(atomic, input.coin.decimals),
    pricing: { mode: 'convert', rate: quote.rate, source: quote.source ?? input.rates.name, fiat, at: quote.at.toISOString() },
  };
}

/**
 * ceil(minor / 10^exponent / price * 10^decimals) in coin atomic units, exactly. With the price
 * written as P / 10^k (P an integer) that is ceil(minor * 10^decimals * 10^k / (10^exponent * P)).
 */
export function convertMinorToAtomic(minor: bigint, exponent: number, price: string, decimals: number): bigint {
  const fractionDigits = price.split('.')[1]?.length ?? 0;
  const priceScaled = parseUnits(price, fractionDigits);
  if (priceScaled <= 0n) throw new RangeError('price must be positive');
  const numerator = minor * 10n ** BigInt(decimals + fractionDigits);
  const denominator = 10n ** BigInt(exponent) * priceScaled;
  return divCeil(numerator, denominator);
}

/**
 * The fiat value of `atomic` coin units at `price` (fiat major units per coin), in fiat minor
 * units rounded half up: round(atomic * P * 10^exponent / (10^decimals * 10^k)) with price = P / 10^k.
 */
export function atomicToMinor(atomic: bigint, decimals: number, price: string, exponent: number): bigint {
  const fractionDigits = price.split('.')[1]?.length ?? 0;
  const priceScaled = parseUnits(price, fractionDigits);
  const numerator = atomic * priceScaled * 10n ** BigInt(exponent);
  const denominator = 10n ** BigInt(decimals + fractionDigits);
  return (2n * numerator + denominator) / (2n * denominator);
}
