import type { ResolvedNetwork } from '../../chains/registry.ts';
import { parseUnits } from '../../domain/money.ts';
import { FAMILIES } from '../../families/families.ts';

// What the QR code and the "open in wallet" link carry (docs/hosted-page.md): the family's URI form
// (bitcoin BIP21, EVM EIP-681: src/families/<family>/family.ts), or the bare address where wallets
// have none chaingate relies on. An amount that does not fit the coin's decimals (pricing.mode
// verbatim) is left out of the URI rather than rounded: the page still shows it in words.

export interface PaymentUriInput {
  family: ResolvedNetwork['family'];
  chainId: number | null;
  address: string;
  /** Decimal string in whole-coin units. */
  amount: string;
  decimals: number;
  /** Token contract; null for the native coin. */
  tokenAddress: string | null;
}

export function paymentUri(p: PaymentUriInput): string {
  const uri = FAMILIES[p.family].paymentUri;
  return uri ? uri({ chainId: p.chainId, address: p.address, amount: p.amount, atomic: toAtomic(p.amount, p.decimals), tokenAddress: p.tokenAddress }) : p.address;
}

function toAtomic(amount: string, decimals: number): bigint | null {
  try {
    const atomic = parseUnits(amount, decimals);
    return atomic > 0n ? atomic : null;
  } catch {
    return null;
  }
}
