import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty } from './base.ts';

/** One of a user's ten one-time TOTP recovery codes, stored as its SHA-256 only. */
const RecoveryCodeSchema = defineEntity({
  name: 'RecoveryCode',
  uniques: [{ properties: ['userId', 'codeHash'] }],
  properties: {
    id: idProperty(),
    userId: p.string().length(32),
    codeHash: p.string().length(64),
    usedAt: p.datetime(3).nullable(),
    createdAt: createdAtProperty(),
  },
});

export class RecoveryCode extends RecoveryCodeSchema.class {}
RecoveryCodeSchema.setClass(RecoveryCode);
export { RecoveryCodeSchema };
