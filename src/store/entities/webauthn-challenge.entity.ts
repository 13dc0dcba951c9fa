import { defineEntity, p } from '@mikro-orm/core';

/** A passkey sign-in challenge, taken (deleted) by the one answer that uses it. */
const WebauthnChallengeSchema = defineEntity({
  name: 'WebauthnChallenge',
  properties: {
    challenge: p.string().length(128).primary(),
    expiresAt: p.datetime(3),
  },
});

export class WebauthnChallenge extends WebauthnChallengeSchema.class {}
WebauthnChallengeSchema.setClass(WebauthnChallenge);
export { WebauthnChallengeSchema };
