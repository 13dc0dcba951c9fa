import { defineEntity, p } from '@mikro-orm/core';

/** Per-day sequence behind referenceIds (INV-YYMMDD-NNNL), bumped atomically with an upsert. */
const ReferenceCounterSchema = defineEntity({
  name: 'ReferenceCounter',
  properties: {
    id: p.string().primary().length(16),
    value: p.integer(),
  },
});

export class ReferenceCounter extends ReferenceCounterSchema.class {}
ReferenceCounterSchema.setClass(ReferenceCounter);
export { ReferenceCounterSchema };
