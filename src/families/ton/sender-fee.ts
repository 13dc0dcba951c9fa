import type { SweepTransaction } from './sweep-api.ts';

// What a TON transaction cost the account that sent it, beside the values it sent: the fee a sweep
// or refund records once its order is final (sweep-send.ts), and so what a refund's fee takes off
// the deposit (docs/refunds.md).
//
// TON's fee rule (docs.ton.org/foundations/fees; block.tlb): a transaction's `total_fees` holds
// its storage, compute and action fees, and of each outgoing internal message's forwarding fee only
// the first part (first_frac, 21845/65536 ≈ 1/3, config param 25) that the action phase collects.
// The rest of that forwarding fee travels in the message as its `fwd_fee` (and an `ihr_fee` where
// instant hypercube routing is on) for the blocks that carry it on; the sender pays it too (with
// mode 1 on top of the value, otherwise out of it). So the sender's balance drops by
//   total_fees + Σ over outgoing messages (fwd_fee + ihr_fee) + Σ values sent,
// and recording `total_fees` alone would leave the deposit holding less than the engine thinks.

/** Nanoton the transaction's account paid in fees: total_fees plus every outgoing message's fwd_fee and ihr_fee. */
export function senderFee(tx: Pick<SweepTransaction, 'total_fees' | 'out_msgs'>): bigint {
  let fee = tx.total_fees ?? 0n;
  for (const out of tx.out_msgs ?? []) fee += (out.fwd_fee ?? 0n) + (out.ihr_fee ?? 0n);
  return fee;
}
