import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty } from './base.ts';

/** A passkey of a dashboard user (WebAuthn public key; nothing secret). */
const WebauthnCredentialSchema = defineEntity({
  name: 'WebauthnCredential',
  indexes: [{ properties: ['userId'] }],
  properties: {
    id: idProperty(),
    userId: p.string().length(32),
    /** base64url credential id, as the authenticator names it. */
    credentialId: p.string().length(1024).unique(),
    /** base64url COSE public key. */
    publicKey: p.text(),
    counter: p.bigint('number').default(0),
    transports: p.json<string[]>().nullable(),
    name: p.string().length(64),
    createdAt: createdAtProperty(),
    lastUsedAt: p.datetime(3).nullable(),
  },
});

export class WebauthnCredential extends WebauthnCredentialSchema.class {}
WebauthnCredentialSchema.setClass(WebauthnCredential);
export { WebauthnCredentialSchema };
