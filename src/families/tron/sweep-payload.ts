import { z } from 'zod';
import { hex41ToTron, tronToHex } from './address.ts';

// The unsigned form of one Tron sweep transaction in plan.json, shared by the planner, the offline
// signer and the sender. `rawData` is the protobuf Transaction.raw (sweep-proto.ts) the signer
// decodes and checks; the other fields say what it is for people and for the stale check, and the
// signer trusts none of them.

export const TronSweepPayloadSchema = z.strictObject({
  /** activate: the fee payer creates a deposit's account; delegate/undelegate: energy lent and taken back; top-up: TRX for the burn. */
  kind: z.enum(['trx', 'token', 'activate', 'delegate', 'undelegate', 'top-up']),
  from: z.string(),
  rawData: z.string().regex(/^[0-9a-f]+$/),
  /** ms since the epoch; java-tron refuses the transaction from then on. */
  expiration: z.string().regex(/^\d+$/),
  /** Energy the planner expects the transaction to use (TriggerSmartContract), else "0". */
  energy: z.string().regex(/^\d+$/),
  /** Bandwidth points: the signed transaction's bytes plus the 64 java-tron adds for its result. */
  bandwidth: z.string().regex(/^\d+$/),
  /** The most sun it may burn (bandwidth, energy, account creation), as planned: sweep-fee.ts tronFee. */
  fee: z.string().regex(/^\d+$/),
  /** Where java-tron takes its bandwidth from, as the owner's account stood when planned (never "free" when it creates an account). */
  bandwidthFrom: z.enum(['staked', 'free', 'burn']),
  /** Whether it creates an account: always for an AccountCreateContract; a TRX transfer to an address that had no account when planned. */
  createsAccount: z.boolean(),
  /** The chain parameters it was priced with, sun (getTransactionFee, getCreateAccountFee, getCreateNewAccountFeeInSystemContract). */
  prices: z.strictObject({ transactionFee: z.string().regex(/^\d+$/), createAccountFee: z.string().regex(/^\d+$/), createNewAccountFee: z.string().regex(/^\d+$/) }),
});
export type TronSweepPayload = z.infer<typeof TronSweepPayloadSchema>;

/** `transfer(address,uint256)`'s selector. */
export const TRANSFER_SELECTOR = 'a9059cbb';

/** The ABI call data of a TRC-20 transfer to a T-address. */
export function transferData(to: string, amount: bigint): string {
  const hex20 = (tronToHex(to) as string).slice(2);
  return `${TRANSFER_SELECTOR}${hex20.padStart(64, '0')}${amount.toString(16).padStart(64, '0')}`;
}

/** The (to, amount) of a TRC-20 transfer's call data, or null when it is anything else. */
export function readTransferData(data: string): { to: string; amount: bigint } | null {
  if (data.length !== 8 + 128 || !data.startsWith(TRANSFER_SELECTOR)) return null;
  const word = data.slice(8, 72);
  if (!/^0{24}[0-9a-f]{40}$/.test(word)) return null;
  return { to: hex41ToTron(`41${word.slice(24)}`), amount: BigInt(`0x${data.slice(72)}`) };
}

/** T-address to java-tron's 41-prefixed hex. */
export const to41 = (address: string): string => `41${(tronToHex(address) as string).slice(2)}`;
