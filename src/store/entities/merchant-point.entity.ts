import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty, updatedAtProperty } from './base.ts';

const MerchantPointSchema = defineEntity({
  name: 'MerchantPoint',
  properties: {
    id: idProperty(),
    name: p.string().length(255),
    apiKey: p.string().length(64).unique(),
    /** AES-256-GCM ciphertext of the API secret (src/domain/secret-box.ts); never the secret itself. */
    apiSecretEnc: p.text(),
    webhookUrl: p.string().length(2048).nullable(),
    active: p.boolean().default(true),
    /** Chain slugs this point accepts; null means every enabled chain. */
    acceptedChains: p.json<string[]>().nullable(),
    /** Token symbols this point accepts per chain slug; null means every token of an accepted chain. */
    acceptedCurrencies: p.json<Record<string, string[]>>().nullable(),
    /** Webhook event types this point receives; null means all. */
    webhookEvents: p.json<string[]>().nullable(),
    /**
     * Bumped by every change of the row (MikroORM's optimistic-lock version): a daemon's cached copy
     * of the point (its decrypted secret included) is good only while the stored version matches.
     */
    version: p.integer().version(),
    createdAt: createdAtProperty(),
    updatedAt: updatedAtProperty(),
  },
});

export class MerchantPoint extends MerchantPointSchema.class {}
MerchantPointSchema.setClass(MerchantPoint);
export { MerchantPointSchema };
