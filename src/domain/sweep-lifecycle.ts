// The life of one sweep transaction (docs/sweeps.md): which status may move to which, on what fact.
// Pure data; src/store/sweeps.ts applies a fact with one conditional update (`where status in (from)`),
// the only write of the status column, so two broadcasts racing can never both move a transaction.

export const SWEEP_TX_STATUSES = ['SIGNED', 'SENT', 'FINAL', 'FAILED'] as const;
export type SweepTxStatus = (typeof SWEEP_TX_STATUSES)[number];

export interface SweepTransition {
  from: readonly SweepTxStatus[];
  to: SweepTxStatus;
}

/**
 * - accepted: the node took the raw transaction (or already had it). A FAILED one may be sent again:
 *   the same raw bytes, so resending is harmless.
 * - rejected: the node refused it; the node's message is recorded beside the status.
 * - finalized: the chain holds it at the network's required depth. Final is final: no way out.
 * - dropped: once sent, the chain no longer knows it (evicted from the mempool, or reorged out): it
 *   goes back to SIGNED, to be sent again by the next broadcast.
 * - reverted: the chain included it but it failed (an EVM revert), so nothing moved.
 */
export const SWEEP_TRANSITIONS = {
  accepted: { from: ['SIGNED', 'FAILED'], to: 'SENT' },
  rejected: { from: ['SIGNED', 'FAILED'], to: 'FAILED' },
  finalized: { from: ['SIGNED', 'SENT', 'FAILED'], to: 'FINAL' },
  dropped: { from: ['SENT'], to: 'SIGNED' },
  reverted: { from: ['SENT'], to: 'FAILED' },
} as const satisfies Record<string, SweepTransition>;
export type SweepFact = keyof typeof SWEEP_TRANSITIONS;

/** The transition a fact causes from this status, or null when it does not apply. */
export function sweepTransition(status: SweepTxStatus, fact: SweepFact): SweepTransition | null {
  const t: SweepTransition = SWEEP_TRANSITIONS[fact];
  return t.from.includes(status) ? t : null;
}

/** Whether a broadcast still has work to do for a transaction in this status. */
export function sweepNeedsWork(status: SweepTxStatus): boolean {
  return status !== 'FINAL';
}
