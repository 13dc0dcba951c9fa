// How much a payment received against what it asked for. The gateway marks a payment COMPLETED on
// its confirmations alone and never resolves a difference (the specification's rule 10): the
// merchant does, so fulfil only after checking this. Exact decimal arithmetic on the wire's
// strings (no floats); imports nothing, like the other SDK files.

export type SettlementKind = 'exact' | 'underpaid' | 'overpaid';

export interface Settlement {
  kind: SettlementKind;
  /** Always non-negative, in the coin's units: what is missing (underpaid) or extra (overpaid); "0" when exact. */
  difference: string;
  expected: string;
  received: string;
}

const DECIMAL = /^(0|[1-9]\d*)(\.\d+)?$/;

function scaled(value: string, scale: number): bigint {
  if (!DECIMAL.test(value)) throw new TypeError(`not a decimal amount: ${JSON.stringify(value)}`);
  const [whole = '0', frac = ''] = value.split('.');
  return BigInt(whole) * 10n ** BigInt(scale) + BigInt(frac.padEnd(scale, '0') || '0');
}

function unscaled(value: bigint, scale: number): string {
  const digits = value.toString().padStart(scale + 1, '0');
  if (scale === 0) return digits;
  const frac = digits.slice(-scale).replace(/0+$/, '');
  return frac ? `${digits.slice(0, -scale)}.${frac}` : digits.slice(0, -scale);
}

/** `settlementOf(payment)` for a payment, its status projection's parent or a webhook's `data.payment`: anything with expectedAmount and receivedAmount. */
export function settlementOf(payment: { expectedAmount: string; receivedAmount: string }): Settlement {
  const { expectedAmount: expected, receivedAmount: received } = payment;
  const scale = Math.max(expected.split('.')[1]?.length ?? 0, received.split('.')[1]?.length ?? 0);
  const want = scaled(expected, scale);
  const got = scaled(received, scale);
  const kind: SettlementKind = got === want ? 'exact' : got < want ? 'underpaid' : 'overpaid';
  return { kind, difference: unscaled(got > want ? got - want : want - got, scale), expected, received };
}
