import { newId } from '../domain/ids.ts';
import type { Executor, Reader } from './executor.ts';
import { jsonOf } from './raw-sql.ts';

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

export function isSubscribed(merchant: { webhookEvents?: string[] | null }, type: EventType): boolean {
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

export interface NewEvent {
  merchantId: string;
  type: EventType;
  paymentId: string | null;
  invoiceId: string | null;
  /** When the fact happened: the event's createdAt, in its payload too. */
  at: Date;
  data: Record<string, unknown>;
}

/** Writes an outbox event; its id. */
export async function insertEvent(x: Executor, e: NewEvent): Promise<string> {
  const id = newId();
  await x.run('insert into webhook_event (id, merchant_id, type, payload, payment_id, invoice_id, created_at) values (?, ?, ?, ?, ?, ?, ?)', [
    id,
    e.merchantId,
    e.type,
    eventPayload(id, e.type, e.at, e.data),
    e.paymentId,
    e.invoiceId,
    e.at,
  ]);
  return id;
}

/** A PENDING delivery of an event, due now; its id. */
export async function insertDelivery(x: Executor, eventId: string, options: NewDeliveryOptions): Promise<string> {
  const id = newId();
  await x.run(
    `insert into webhook_delivery (id, event_id, replay_of, state, attempt_count, next_attempt_at, lease_owner, lease_until, last_status_code, last_error, delivered_at, created_at, updated_at)
     values (?, ?, ?, 'PENDING', 0, ?, ?, ?, null, null, null, ?, ?)`,
    [id, eventId, options.replayOf ?? null, options.now, options.lease?.owner ?? null, options.lease?.until ?? null, options.now, options.now],
  );
  return id;
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
export async function recordEvent(x: Executor, input: EventInput, at = new Date()): Promise<{ id: string; deliveryId: string | null }> {
  const merchant = await x.get<{ webhook_url: string | null; webhook_events: unknown }>('select webhook_url, webhook_events from merchant_point where id = ?', [input.merchantId]);
  if (!merchant) throw new Error(`merchant point ${input.merchantId} is not in the database`);
  const id = await insertEvent(x, { merchantId: input.merchantId, type: input.type, paymentId: input.paymentId ?? null, invoiceId: input.invoiceId ?? null, at, data: input.data });
  const subscribed = merchant.webhook_url && isSubscribed({ webhookEvents: jsonOf<string[]>(merchant.webhook_events) }, input.type);
  return { id, deliveryId: subscribed ? await insertDelivery(x, id, { now: new Date() }) : null };
}

const DUE = `state = 'PENDING' and next_attempt_at <= ? and (lease_until is null or lease_until <= ?)`;
const leaseSql = (lock: string) => `update webhook_delivery set lease_owner = ?, lease_until = ?, updated_at = ?
  where id in (select id from webhook_delivery where ${DUE} order by next_attempt_at, id limit ?${lock})
  returning id, next_attempt_at`;
const LEASE_DUE_SQL = { sqlite: leaseSql(''), postgresql: leaseSql(' for update skip locked') };

/** Whether any delivery is due at `now` (a read, so an idle sender's poll takes no write lock). */
export async function anyDeliveryDue(r: Reader, now: Date): Promise<boolean> {
  return (await r.get(`select 1 as due from webhook_delivery where ${DUE} limit 1`, [now, now])) !== undefined;
}

/**
 * Leases up to `limit` due deliveries to `owner`, oldest due first, in one statement: on PostgreSQL
 * the candidates are locked SKIP LOCKED, so concurrent senders take disjoint sets without waiting;
 * on SQLite the write lock makes it atomic. A lease that ran out (its sender died) is due again.
 */
export async function leaseDueDeliveries(x: Executor, input: { owner: string; limit: number; until: Date; now: Date }): Promise<string[]> {
  const rows = await x.all<{ id: string; next_attempt_at: unknown }>(LEASE_DUE_SQL[x.dialect], [input.owner, input.until, input.now, input.now, input.now, input.limit]);
  const due = (r: { next_attempt_at: unknown }) => (r.next_attempt_at instanceof Date ? r.next_attempt_at.getTime() : Number(r.next_attempt_at));
  return rows.sort((a, b) => due(a) - due(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((r) => r.id);
}

/** Gives leased deliveries back untouched (no attempt counted, their due time kept). */
export async function releaseDeliveries(x: Executor, input: { deliveryIds: string[]; owner: string; now: Date }): Promise<void> {
  for (const id of input.deliveryIds) {
    await x.run(`update webhook_delivery set lease_owner = null, lease_until = null, updated_at = ? where id = ? and lease_owner = ? and state = 'PENDING'`, [input.now, id, input.owner]);
  }
}

export interface NewAttempt {
  deliveryId: string;
  attemptNumber: number;
  url: string | null;
  attemptedAt: Date;
  statusCode: number | null;
  durationMs: number;
  responseBody: string | null;
  error: string | null;
}

/** One HTTP attempt of a delivery, whatever its outcome. */
export async function insertAttempt(x: Executor, a: NewAttempt): Promise<void> {
  await x.run(
    'insert into webhook_attempt (id, delivery_id, attempt_number, url, attempted_at, status_code, duration_ms, response_body, error) values (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    [newId(), a.deliveryId, a.attemptNumber, a.url, a.attemptedAt, a.statusCode, a.durationMs, a.responseBody, a.error],
  );
}

/**
 * Deletes webhook events created before `cutoff` that have nothing left to deliver, with their
 * deliveries and attempts; the number of events deleted. A pending delivery keeps its event.
 */
export async function deleteEventsBefore(x: Executor, cutoff: Date): Promise<number> {
  const old = `select e.id from webhook_event e where e.created_at < ? and not exists
    (select 1 from webhook_delivery p where p.event_id = e.id and p.state = 'PENDING')`;
  await x.run(`delete from webhook_attempt where delivery_id in (select d.id from webhook_delivery d where d.event_id in (${old}))`, [cutoff]);
  await x.run(`delete from webhook_delivery where event_id in (${old})`, [cutoff]);
  return x.run(`delete from webhook_event where id in (${old})`, [cutoff]);
}
