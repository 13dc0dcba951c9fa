import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty, updatedAtProperty } from './base.ts';
import type { DeliveryStatus } from '../../domain/lifecycle.ts';
import { WebhookEvent } from './webhook-event.entity.ts';

/**
 * One delivery of an event (a replay is a new delivery of the same event, replayOf = the original
 * delivery). Senders lease due rows (leaseOwner, leaseUntil) so an attempt is made by one of them only.
 */
const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  indexes: [{ properties: ['state', 'nextAttemptAt'] }],
  properties: {
    id: idProperty(),
    event: () => p.manyToOne(WebhookEvent).index(),
    replayOf: p.string().length(32).nullable(),
    state: p.string().length(16).$type<DeliveryStatus>().default('PENDING'),
    attemptCount: p.integer().default(0),
    nextAttemptAt: p.datetime(3).nullable(),
    leaseOwner: p.string().length(64).nullable(),
    leaseUntil: p.datetime(3).nullable(),
    lastStatusCode: p.integer().nullable(),
    lastError: p.text().nullable(),
    deliveredAt: p.datetime(3).nullable(),
    createdAt: createdAtProperty(),
    updatedAt: updatedAtProperty(),
  },
});

export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);
export { WebhookDeliverySchema };
