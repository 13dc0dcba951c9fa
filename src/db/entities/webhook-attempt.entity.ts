import { defineEntity, p } from '@mikro-orm/core';
import { idProperty } from './base.ts';
import { WebhookDelivery } from './webhook-delivery.entity.ts';

const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  properties: {
    id: idProperty(),
    delivery: () => p.manyToOne(WebhookDelivery),
    attemptedAt: p.datetime(3),
    statusCode: p.integer().nullable(),
    durationMs: p.integer(),
    /** First 2 KiB of the response body. */
    responseBody: p.text().nullable(),
    error: p.text().nullable(),
  },
});

export class WebhookAttempt extends WebhookAttemptSchema.class {}
WebhookAttemptSchema.setClass(WebhookAttempt);
export { WebhookAttemptSchema };
