import { UsageError } from '../domain/errors.ts';
import type { FamilySweepPlanner, RefundAsk, SweepCandidate } from './sweep.ts';

// What the refund planners of the families that plan from the planner's own input share.

/** A planner's input when it plans a refund (FamilySweepPlanner with `refund` set). */
export type RefundInput = Omit<Parameters<FamilySweepPlanner['plan']>[0], 'min' | 'accountKeys' | 'masterFingerprint' | 'refund'> & { refund: RefundAsk };

/** The one address a refund is made from; more than one, or a refund of nothing, is refused. */
export function refundCandidate(candidates: SweepCandidate[], refund: RefundAsk): SweepCandidate {
  const [candidate, ...others] = candidates;
  if (!candidate || others.length > 0) throw new UsageError(`a refund is made from one address; ${candidates.length} were given`);
  if (refund.amount <= 0n) throw new UsageError(`a refund moves more than 0 ${refund.symbol}`);
  return candidate;
}
