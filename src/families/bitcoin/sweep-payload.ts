import type { Holding } from '../sweep.ts';

// The unsigned form of one bitcoin sweep or refund transaction in a plan file, shared by the
// planner, the offline signer and the sender.

export interface BitcoinSweepPayload {
  /** The unsigned PSBT (BIP174), base64. */
  psbt: string;
  /** sat/vB. */
  feeRate: string;
  /** The largest vsize the signed transaction can have; fee = vsize × feeRate. */
  vsize: number;
  /** Satoshis: inputs minus the outputs. */
  fee: string;
}

export const btc = (amount: bigint): Holding => ({ symbol: 'BTC', token: null, decimals: 8, amount: amount.toString() });
