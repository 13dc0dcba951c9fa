import { fiatExponent } from './fiat-currencies.ts';
import { formatUnits, parseUnits } from './money.ts';
import { atomicToMinor } from './pricing.ts';

// Coin amounts at the rate a payment was priced at (metadata.pricing), for the dashboard: exact
// bigint arithmetic, rounded half up to the fiat's minor unit, signed for differences.

/** Atomic coin units (signed) in fiat minor units at `rate` (fiat major units per coin). */
export function minorAtRate(atomic: bigint, decimals: number, rate: string, fiat: string): bigint | null {
  const exponent = fiatExponent(fiat);
  if (exponent === undefined) return null;
  const abs = atomicToMinor(atomic < 0n ? -atomic : atomic, decimals, rate, exponent);
  return atomic < 0n ? -abs : abs;
}

/** A coin amount (decimal string) in fiat minor units at `rate`; null when it cannot be (verbatim pricing, a foreign currency). */
export function coinToMinor(amount: string, decimals: number, rate: string | null, fiat: string): bigint | null {
  if (rate === null) return null;
  try {
    return minorAtRate(parseUnits(amount, decimals), decimals, rate, fiat);
  } catch {
    return null;
  }
}

/** Fiat minor units as a major-unit string with all its decimals: 2450n USD -> "24.50", -50n -> "-0.50", 45000n JPY -> "45000". */
export function formatFiat(minor: bigint, fiat: string): string {
  const exponent = fiatExponent(fiat) ?? 0;
  const text = formatUnits(minor, exponent);
  if (exponent === 0) return text;
  const [whole, frac = ''] = text.split('.');
  return `${whole}.${frac.padEnd(exponent, '0')}`;
}
