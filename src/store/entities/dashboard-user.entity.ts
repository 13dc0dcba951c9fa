import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty, updatedAtProperty } from './base.ts';

/**
 * A person who signs into the merchant dashboard (docs/dashboard.md). Made by `chaingate users
 * create`, which leaves the password empty and stores the hash of a one-time set-up token.
 */
const DashboardUserSchema = defineEntity({
  name: 'DashboardUser',
  properties: {
    id: idProperty(),
    /** Lower-cased at the edge; the sign-in key. */
    email: p.string().length(320).unique(),
    /** argon2id in PHC form (src/domain/password-hash.ts); null until set up. */
    passwordHash: p.text().nullable(),
    active: p.boolean().default(true),
    /** TOTP secret sealed with the secret box (AAD `totp:<user id>`); null when TOTP is not enrolled. */
    totpSecretEnc: p.text().nullable(),
    /** SHA-256 of the one-time set-up token (hex); null once used. */
    setupTokenHash: p.string().length(64).nullable().unique(),
    setupExpiresAt: p.datetime(3).nullable(),
    /** The last TOTP time step accepted: a code is never accepted twice. */
    totpLastStep: p.bigint('number').nullable(),
    createdAt: createdAtProperty(),
    updatedAt: updatedAtProperty(),
  },
});

export class DashboardUser extends DashboardUserSchema.class {}
DashboardUserSchema.setClass(DashboardUser);
export { DashboardUserSchema };
