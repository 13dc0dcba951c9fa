import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty } from './base.ts';
import { MerchantPoint } from './merchant-point.entity.ts';

/** An outbox row, written in the same transaction as the state change it reports. */
const WebhookEventSchema = defineEntity({
  name: 'WebhookEvent',
  indexes: [{ properties: ['merchant', 'createdAt'] }],
  properties: {
    id: idProperty(),
    merchant: () => p.manyToOne(MerchantPoint),
    type: p.string().length(64),
    /** The exact JSON body delivered (signed per attempt over these bytes). */
    payload: p.text(),
    paymentId: p.string().length(32).nullable().index(),
    invoiceId: p.string().length(32).nullable().index(),
    createdAt: createdAtProperty(),
  },
});

export class WebhookEvent extends WebhookEventSchema.class {}
WebhookEventSchema.setClass(WebhookEvent);
export { WebhookEventSchema };
