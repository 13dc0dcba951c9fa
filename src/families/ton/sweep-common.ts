import { Address } from '@ton/core';
import type { Holding } from '../sweep.ts';
import { InvalidAddressError, UsageError } from '../../domain/errors.ts';
import { tonAddresses } from './address.ts';
import { WALLET_V4R2_CODE } from './wallet-v4.ts';

// What the TON sweep and refund planners share: address checks, the wallet code they accept,
// how long a plan stays valid.

/** How long a plan's messages stay valid (valid_until): enough to carry the plan to the offline machine and back. */
export const PLAN_LIFETIME_S = 6 * 3600;
export const CONCURRENCY = 4;
export const V4R2_CODE_HASH = WALLET_V4R2_CODE.hash().toString('hex');
export const hold = (symbol: string, token: string | null, decimals: number, amount: bigint): Holding => ({ symbol, token, decimals, amount: amount.toString() });
export const raw = (a: string) => Address.parse(a).toRawString().toUpperCase();

export function validate(value: string, testnet: boolean, flag: string): string {
  try {
    return tonAddresses.validate(value.trim(), testnet, {});
  } catch (err) {
    if (err instanceof InvalidAddressError) throw new UsageError(`${flag}: ${err.message}`);
    throw err;
  }
}
