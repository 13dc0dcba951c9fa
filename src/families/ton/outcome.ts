import type { TonTransaction } from './toncenter-v3.ts';

// Whether the value of a transaction's incoming message stayed with the account, judged from the
// transaction's phases as toncenter v3 renders them (`description`: compute_ph, action, bounce).
//
// A deposit is credited only when the transaction succeeded in both the compute and the action
// phase and did not bounce. An undeployed (uninit) deposit has no code to run: its compute phase is
// skipped with reason no_state (older indexers: cskip_no_state), there is no action phase, and the
// value stays with it unless the message was bounceable, in which case the bounce phase sends it
// back. Every other outcome (compute skipped for lack of gas or a bad state init, compute failed,
// action failed, an aborted transaction, a bounce — even a failed bounce) is not a credit, and says
// why in the chain's own terms.

export type Outcome = { ok: true } | { ok: false; reason: string };

const skipReason = (reason: string | undefined) => (reason ?? 'unknown').replace(/^cskip_/, '');

/** What went wrong in the phases, or null when the message's value stayed with the account. */
function phaseProblem(d: TonTransaction['description']): string | null {
  const compute = d.compute_ph;
  if (!compute) return 'the transaction has no compute phase';
  if (compute.skipped === true) {
    const why = skipReason(compute.reason);
    // Nothing to run on an undeployed account: the value is credited to its balance as it is.
    return why === 'no_state' ? null : `its compute phase was skipped (${why})`;
  }
  if (compute.success !== true) return `its compute phase failed (exit code ${compute.exit_code ?? 'unknown'})`;
  if (!d.action) return 'its compute phase ran but the answer shows no action phase';
  if (d.action.success !== true) return `its action phase failed (result code ${d.action.result_code ?? 'unknown'})`;
  if (d.aborted === true) return 'the transaction was aborted';
  return null;
}

export function incomingOutcome(tx: TonTransaction): Outcome {
  const d = tx.description;
  const problem = phaseProblem(d);
  const undeployed = d.compute_ph?.skipped === true && skipReason(d.compute_ph.reason) === 'no_state';
  const bounce = d.bounce?.type;
  if (bounce === 'ok') {
    return { ok: false, reason: `bounced: ${problem ?? (undeployed ? 'the deposit wallet is not deployed' : 'the transaction failed')}; the value went back to the sender` };
  }
  if (bounce) {
    // The message was bounceable and the transaction failed; the bounce could not even be paid for.
    return { ok: false, reason: `bounce failed (${bounce}): ${problem ?? (undeployed ? 'the deposit wallet is not deployed' : 'the transaction failed')}` };
  }
  if (problem) return { ok: false, reason: `not credited: ${problem}` };
  return { ok: true };
}
