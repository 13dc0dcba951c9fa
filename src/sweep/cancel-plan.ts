import type { Common } from '../common.ts';
import { UsageError } from '../domain/errors.ts';
import { cancelPlan } from '../store/plan-reservations.ts';
import { poolReader } from '../store/raw-sql.ts';
import { refundById } from '../store/refunds.ts';
import { findSweep } from '../store/sweeps.ts';
import type { Executor } from '../store/executor.ts';

// `chaingate sweep cancel` / `refund cancel` (docs/sweeps.md#reservations): a plan never broadcast
// gives back what it reserved (its deposits; a refund's amount). A plan whose transactions a
// broadcast recorded cannot be cancelled: they may already be on the chain.

/** `inWrite` runs inside the write that cancels (the dashboard's audit row), only when it did. */
export async function cancelSweepPlan(common: Common, kind: 'sweep' | 'refund', ref: string, now = new Date(), inWrite?: (x: Executor, planId: string) => Promise<void>): Promise<{ planId: string; kind: string }> {
  const reader = poolReader(common.db);
  const refund = kind === 'refund' ? await refundById(reader, ref) : null;
  const found = await findSweep(reader, refund?.planId ?? ref);
  if (!found) throw new UsageError(`no ${kind} plan ${JSON.stringify(ref)}${kind === 'refund' ? ' (a refund id, a plan id or its first 8+ hex digits)' : ''}`);
  const plan = found.plan;
  if (plan.kind !== kind) throw new UsageError(`plan ${plan.id.slice(0, 16)}… is a ${plan.kind} plan: cancel it with \`chaingate ${plan.kind} cancel\``);
  const outcome = await common.db.write(async (x) => {
    const done = await cancelPlan(x, plan.id, now);
    if (done === 'cancelled') await inWrite?.(x, plan.id);
    return done;
  });
  if (outcome === 'broadcast') throw new UsageError(`plan ${plan.id.slice(0, 16)}… was broadcast: its transactions may be on the chain and cannot be cancelled (see \`chaingate ${kind} ${kind === 'sweep' ? 'show' : 'list'}\`)`);
  if (outcome === 'already') throw new UsageError(`plan ${plan.id.slice(0, 16)}… was already cancelled`);
  return { planId: plan.id, kind: plan.kind };
}
