import { formatUnits, parseUnits } from './money.ts';

// How what arrived compares with what was asked (spec rule 10: the difference is recorded and shown,
// never resolved: a COMPLETED payment stays COMPLETED whatever it received). Exact bigint arithmetic
// on the payment's decimals; the merchant SDK has its own copy (src/sdk/settlement.ts), since the
// SDK's files import nothing outside their folder.

export type SettlementKind = 'exact' | 'underpaid' | 'overpaid';

export interface Settlement {
  kind: SettlementKind;
  /** Coin units, always non-negative: what is missing (underpaid) or extra (overpaid); "0" when exact. */
  difference: string;
}

/** null when either amount is not a decimal with at most `decimals` digits (verbatim pricing of an odd currency). */
export function settlementOf(expected: string, received: string, decimals: number): Settlement | null {
  let want: bigint;
  let got: bigint;
  try {
    want = parseUnits(expected, decimals);
    got = parseUnits(received, decimals);
  } catch {
    return null;
  }
  if (got === want) return { kind: 'exact', difference: '0' };
  return got < want ? { kind: 'underpaid', difference: formatUnits(want - got, decimals) } : { kind: 'overpaid', difference: formatUnits(got - want, decimals) };
}
