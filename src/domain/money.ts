// Amounts are bigint atomic units in code and decimal strings on the wire and in the database.
// Nothing here ever touches a JavaScript number for a value.

const DECIMAL_RE = /^(0|[1-9]\d*)(\.\d+)?$/;
const INTEGER_RE = /^(0|[1-9]\d*)$/;

/** Longest decimal string an amount column holds. */
export const MAX_AMOUNT_CHARS = 80;

export function isIntegerString(value: string): boolean {
  return INTEGER_RE.test(value) && value.length <= MAX_AMOUNT_CHARS;
}

export function isDecimalString(value: string): boolean {
  return DECIMAL_RE.test(value) && value.length <= MAX_AMOUNT_CHARS;
}

/** "1.5" with 6 decimals -> 1500000n. Refuses more fractional digits than `decimals`. */
export function parseUnits(value: string, decimals: number): bigint {
  if (!isDecimalString(value)) throw new RangeError(`not a decimal string: ${JSON.stringify(value)}`);
  const [whole = '0', frac = ''] = value.split('.');
  if (frac.length > decimals) throw new RangeError(`${value} has more than ${decimals} decimals`);
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
}

/** 1500000n with 6 decimals -> "1.5"; trailing zeros dropped, "0" for zero. */
export function formatUnits(atomic: bigint, decimals: number): string {
  const negative = atomic < 0n;
  const abs = negative ? -atomic : atomic;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const frac = decimals === 0 ? '' : (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** Integer division rounding towards +infinity, for non-negative numerators and positive denominators. */
export function divCeil(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator < 0n) throw new RangeError('numerator must be non-negative');
  return (numerator + denominator - 1n) / denominator;
}

/** A signed difference of two decimal strings, as a decimal string ("-0.5", "0", "1.25"). */
export function subtractDecimals(a: string, b: string, decimals: number): string {
  return formatUnits(parseUnits(a, decimals) - parseUnits(b, decimals), decimals);
}
