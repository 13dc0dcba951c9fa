import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty } from './base.ts';

/** One dashboard action that changed something (or a failed sign-in): who, what, which point, from where. */
const AuditEntrySchema = defineEntity({
  name: 'AuditEntry',
  indexes: [{ properties: ['createdAt'] }, { properties: ['pointId', 'createdAt'] }],
  properties: {
    id: idProperty(),
    /** The acting user; null for an operator's CLI command or an unknown account. */
    userId: p.string().length(32).nullable(),
    /** The email given or the user's, or `cli` for the operator. */
    actor: p.string().length(320),
    action: p.string().length(64),
    pointId: p.string().length(32).nullable(),
    ip: p.string().length(64).nullable(),
    userAgent: p.string().length(512).nullable(),
    /** What changed, never a secret. */
    details: p.json<Record<string, unknown>>().nullable(),
    createdAt: createdAtProperty(),
  },
});

export class AuditEntry extends AuditEntrySchema.class {}
AuditEntrySchema.setClass(AuditEntry);
export { AuditEntrySchema };
