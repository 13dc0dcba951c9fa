import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty } from './base.ts';

/** A sweep plan as `sweep plan` wrote it (docs/sweeps.md): what `sweep broadcast` checks a signed file against. */
const SweepPlanSchema = defineEntity({
  name: 'SweepPlan',
  indexes: [{ properties: ['chain', 'isTestnet', 'createdAt'] }],
  properties: {
    /** SHA-256 of the plan file without its id, hex. */
    id: p.string().primary().length(64),
    chain: p.string().length(32),
    network: p.string().length(32),
    isTestnet: p.boolean().default(false),
    kind: p.string().length(16),
    toAddress: p.string().length(128),
    feePayer: p.string().length(128).nullable(),
    /** The whole plan file, as written (JSON text): broadcast reads its deposits and amounts from here. */
    body: p.text(),
    createdAt: createdAtProperty(),
    /** Until when a plan not yet broadcast reserves its deposits (and a refund its amount); null: plans made before reservations. */
    expiresAt: p.datetime(3).nullable(),
    /** Set by `sweep cancel` / `refund cancel` on a plan never broadcast: its reservation ends. */
    cancelledAt: p.datetime(3).nullable(),
  },
});

export class SweepPlan extends SweepPlanSchema.class {}
SweepPlanSchema.setClass(SweepPlan);
export { SweepPlanSchema };
