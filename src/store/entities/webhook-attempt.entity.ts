import { defineEntity, p } from '@mikro-orm/core';
import { idProperty } from './base.ts';
import { WebhookDelivery } from './webhook-delivery.entity.ts';

/** One HTTP attempt of a delivery, recorded whatever its outcome (docs/webhooks.md). */
const WebhookAttemptSchema = defineEntity({
  name: 'WebhookAttempt',
  properties: {
    id: idProperty(),
    delivery: () => p.manyToOne(WebhookDelivery).index(),
    /** 1 for the first attempt of the delivery. */
    attemptNumber: p.integer().nullable(),
    /** The URL POSTed to: the merchant point's webhookUrl at the time of the attempt. */
    url: p.string().length(2048).nullable(),
    attemptedAt: p.datetime(3),
    statusCode: p.integer().nullable(),
    durationMs: p.integer(),
    /** First bytes of the response body (webhooks.responseBodyLimit, 2 KiB by default). */
    responseBody: p.text().nullable(),
    error: p.text().nullable(),
  },
});

export class WebhookAttempt extends WebhookAttemptSchema.class {}
WebhookAttemptSchema.setClass(WebhookAttempt);
export { WebhookAttemptSchema };
