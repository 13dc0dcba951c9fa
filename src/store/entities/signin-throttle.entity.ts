import { defineEntity, p } from '@mikro-orm/core';

/** Failed dashboard sign-ins per account and per IP (keyed by a hash), shared by every serve process. */
const SigninThrottleSchema = defineEntity({
  name: 'SigninThrottle',
  properties: {
    key: p.string().length(80).primary(),
    failures: p.integer().default(0),
    /** No attempt is checked before this (the growing delay). */
    blockedUntil: p.datetime(3),
    updatedAt: p.datetime(3),
  },
});

export class SigninThrottle extends SigninThrottleSchema.class {}
SigninThrottleSchema.setClass(SigninThrottle);
export { SigninThrottleSchema };
