import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty } from './base.ts';

/** A dashboard sign-in. Only the SHA-256 of its 256-bit cookie token is stored. */
const DashboardSessionSchema = defineEntity({
  name: 'DashboardSession',
  indexes: [{ properties: ['userId'] }],
  properties: {
    id: idProperty(),
    tokenHash: p.string().length(64).unique(),
    userId: p.string().length(32),
    /** `mfa`: password given, second factor still owed; `full`: signed in. */
    stage: p.string().length(8),
    /** Sent back in every form; compared with the one posted (docs/dashboard.md#forgery). */
    csrfToken: p.string().length(64),
    /** A WebAuthn challenge this session is waiting on (enrolment), single use. */
    challenge: p.string().length(128).nullable(),
    ip: p.string().length(64).nullable(),
    userAgent: p.string().length(512).nullable(),
    createdAt: createdAtProperty(),
    lastSeenAt: p.datetime(3),
    /** The absolute end of the session, whatever its activity. */
    expiresAt: p.datetime(3),
  },
});

export class DashboardSession extends DashboardSessionSchema.class {}
DashboardSessionSchema.setClass(DashboardSession);
export { DashboardSessionSchema };
