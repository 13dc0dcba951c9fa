import type { ChainFamily } from '../../../chains/registry.ts';
import { parseUnits } from '../../../domain/money.ts';

// What the QR code and the "open in wallet" link carry (docs/hosted-page.md):
//  - bitcoin: BIP21 `bitcoin:<address>?amount=<BTC as a decimal>`
//  - EVM native coin: EIP-681 `ethereum:<address>@<chainId>?value=<wei>`
//  - EVM token: EIP-681 `ethereum:<token>@<chainId>/transfer?address=<address>&uint256=<atomic units>`
//  - every other chain: the bare address (wallets there have no URI form chaingate relies on).
// An amount that does not fit the coin's decimals (pricing.mode verbatim) is left out of the URI
// rather than rounded: the page still shows it in words.

export interface PaymentUriInput {
  family: ChainFamily;
  chainId: number | null;
  address: string;
  /** Decimal string in whole-coin units. */
  amount: string;
  decimals: number;
  /** Token contract; null for the native coin. */
  tokenAddress: string | null;
}

export function paymentUri(p: PaymentUriInput): string {
  const atomic = toAtomic(p.amount, p.decimals);
  if (p.family === 'bitcoin') {
    return atomic === null ? `bitcoin:${p.address}` : `bitcoin:${p.address}?amount=${p.amount}`;
  }
  if (p.family === 'evm' && p.chainId !== null) {
    if (p.tokenAddress) {
      const base = `ethereum:${p.tokenAddress}@${p.chainId}/transfer?address=${p.address}`;
      return atomic === null ? base : `${base}&uint256=${atomic}`;
    }
    const base = `ethereum:${p.address}@${p.chainId}`;
    return atomic === null ? base : `${base}?value=${atomic}`;
  }
  return p.address;
}

function toAtomic(amount: string, decimals: number): bigint | null {
  try {
    const atomic = parseUnits(amount, decimals);
    return atomic > 0n ? atomic : null;
  } catch {
    return null;
  }
}
