import { newId } from '../domain/ids.ts';
import type { EntityManager } from '@mikro-orm/sql';
import { MerchantPoint } from './entities/merchant-point.entity.ts';
import { WebhookDelivery } from './entities/webhook-delivery.entity.ts';
import { WebhookEvent } from './entities/webhook-event.entity.ts';

/** Event types a merchant point can subscribe to (merchant.webhookEvents; null means all). */
export const EVENT_TYPES = [
  'payment.completed',
  'payment.confirming',
  'payment.failed',
  'payment.expired',
  'payment.late_funds',
  'payment.refunded',
  'invoice.paid',
  'invoice.expired',
  'invoice.cancelled',
] as const;
export type SubscribableEventType = (typeof EVENT_TYPES)[number];
/** `ping` is sent only on request (`chaingate webhooks test`), whatever the subscription. */
export type EventType = SubscribableEventType | 'ping';

/** Version of the webhook payload schema (docs/webhooks.md); changes when a field changes meaning. */
export const WEBHOOK_API_VERSION = '2026-11-01';

export interface EventInput {
  merchantId: string;
  type: EventType;
  paymentId?: string | null;
  invoiceId?: string | null;
  /** payment.*: paymentEventData(); invoice.*: { invoice: invoiceView() }. */
  data: Record<string, unknown>;
}

export function isSubscribed(merchant: Pick<MerchantPoint, 'webhookEvents'>, type: EventType): boolean {
  if (type === 'ping') return true;
  return merchant.webhookEvents === null || merchant.webhookEvents === undefined || merchant.webhookEvents.includes(type);
}

/** The exact body every attempt of this event sends (and signs). */
export function eventPayload(id: string, type: EventType, createdAt: Date, data: Record<string, unknown>): string {
  return JSON.stringify({ id, type, apiVersion: WEBHOOK_API_VERSION, createdAt: createdAt.toISOString(), data });
}

export interface NewDeliveryOptions {
  now: Date;
  /** The original delivery of the event when this one is a replay. */
  replayOf?: string | null;
  /** Created already leased, so that only this process makes its first attempt (`webhooks test`). */
  lease?: { owner: string; until: Date };
}

/** A PENDING delivery of an event, due now; the caller flushes. */
export function addDelivery(em: EntityManager, event: WebhookEvent, options: NewDeliveryOptions): WebhookDelivery {
  return em.create(WebhookDelivery, {
    id: newId(),
    event,
    replayOf: options.replayOf ?? null,
    state: 'PENDING',
    attemptCount: 0,
    nextAttemptAt: options.now,
    leaseOwner: options.lease?.owner ?? null,
    leaseUntil: options.lease?.until ?? null,
    lastStatusCode: null,
    lastError: null,
    deliveredAt: null,
    createdAt: options.now,
    updatedAt: options.now,
  });
}

/**
 * Writes an outbox event — inside the caller's transaction, with the state change it reports — and,
 * when the merchant point has a webhook URL and subscribes to the type, its first delivery. The
 * event is kept either way, so `chaingate webhooks replay` can deliver it later.
 *
 * `at` is when the fact happened (a chain fact's block time) and is the event's `createdAt`. The
 * first attempt is due at the server's clock, now: a block stamped ahead of it (clock skew, early
 * producers, a local chain's burst) must not hold the webhook back until the clock catches up.
 */
export async function recordEvent(em: EntityManager, input: EventInput, at = new Date()): Promise<WebhookEvent> {
  const merchant = await em.findOneOrFail(MerchantPoint, { id: input.merchantId });
  const id = newId();
  const event = em.create(WebhookEvent, {
    id,
    merchant,
    type: input.type,
    payload: eventPayload(id, input.type, at, input.data),
    paymentId: input.paymentId ?? null,
    invoiceId: input.invoiceId ?? null,
    createdAt: at,
  });
  if (merchant.webhookUrl && isSubscribed(merchant, input.type)) addDelivery(em, event, { now: new Date() });
  await em.flush();
  return event;
}
