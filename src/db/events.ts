import type { EntityManager } from '@mikro-orm/sql';
import { MerchantPoint } from './entities/merchant-point.entity.ts';
import { WebhookDelivery } from './entities/webhook-delivery.entity.ts';
import { WebhookEvent } from './entities/webhook-event.entity.ts';

export const EVENT_TYPES = [
  'payment.completed',
  'payment.confirming',
  'payment.failed',
  'payment.expired',
  'invoice.paid',
  'invoice.expired',
  'invoice.cancelled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number] | 'ping';

/** Version of the webhook payload schema (docs/webhooks.md). */
export const WEBHOOK_API_VERSION = '2026-11-01';

export interface EventInput {
  merchantId: string;
  type: EventType;
  paymentId?: string | null;
  invoiceId?: string | null;
  data: Record<string, unknown>;
}

/**
 * Writes an outbox event — inside the caller's transaction, with the state change it reports — and,
 * when the merchant point has a webhook URL and subscribes to the type, its first delivery.
 */
export async function recordEvent(em: EntityManager, input: EventInput, now = new Date()): Promise<WebhookEvent> {
  const merchant = await em.findOneOrFail(MerchantPoint, { id: input.merchantId });
  const event = em.create(WebhookEvent, {
    merchant,
    type: input.type,
    payload: '',
    paymentId: input.paymentId ?? null,
    invoiceId: input.invoiceId ?? null,
    createdAt: now,
  });
  event.payload = JSON.stringify({ id: event.id, type: input.type, apiVersion: WEBHOOK_API_VERSION, createdAt: now.toISOString(), data: input.data });
  const subscribed = merchant.webhookEvents === null || merchant.webhookEvents === undefined || merchant.webhookEvents.includes(input.type);
  if (merchant.webhookUrl && (subscribed || input.type === 'ping')) {
    em.create(WebhookDelivery, {
      event,
      replayOf: null,
      state: 'PENDING',
      nextAttemptAt: now,
      leaseOwner: null,
      leaseUntil: null,
      lastStatusCode: null,
      lastError: null,
      deliveredAt: null,
    });
  }
  await em.flush();
  return event;
}
