import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty } from './base.ts';

export type IdempotencyState = 'IN_FLIGHT' | 'COMPLETED';

/** Claimed by INSERT against the (merchantId, key) unique constraint, never read-then-write. */
const IdempotencyRecordSchema = defineEntity({
  name: 'IdempotencyRecord',
  uniques: [{ properties: ['merchantId', 'key'] }],
  indexes: [{ properties: ['expiresAt'] }],
  properties: {
    id: idProperty(),
    merchantId: p.string().length(32),
    key: p.string().length(255),
    /** sha256 of method, path and body hash. */
    fingerprint: p.string().length(64),
    state: p.string().length(16).$type<IdempotencyState>(),
    statusCode: p.integer().nullable(),
    responseBody: p.text().nullable(),
    createdAt: createdAtProperty(),
    expiresAt: p.datetime(3),
  },
});

export class IdempotencyRecord extends IdempotencyRecordSchema.class {}
IdempotencyRecordSchema.setClass(IdempotencyRecord);
export { IdempotencyRecordSchema };
