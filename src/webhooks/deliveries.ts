import type { DeliveryStatus } from '../domain/lifecycle.ts';
import { anyDeliveryDue, insertAttempt, insertDelivery, insertEvent, leaseDueDeliveries, releaseDeliveries } from '../store/events.ts';
import type { Executor } from '../store/executor.ts';
import type { Database } from '../store/orm.ts';
import { poolReader } from '../store/raw-sql.ts';
import { insertAudit, type AuditInput } from '../store/audit-log.ts';
import { moveDelivery } from '../store/lifecycle.ts';
import { deliveriesOfEvent, eventsWithDeliveries, eventTarget, failedEventIds, leasedDelivery, merchantWebhookUrl, type LeasedDelivery } from '../store/webhook-deliveries.ts';
import { UsageError } from '../domain/errors.ts';
import type { PostResult } from './post.ts';

// The deliveries repository: leasing due rows to senders, recording attempts, replays and listings.

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/**
 * Leases up to `limit` due deliveries to `owner` and returns their ids, oldest due first
 * (src/store/events.ts leaseDueDeliveries: concurrent senders take disjoint sets). A lease that ran out
 * (its sender died) makes the row due again. A poll that finds nothing due writes nothing.
 */
export async function claimDueDeliveries(
  db: Database,
  input: { owner: string; limit: number; leaseMs: number; now?: Date },
): Promise<string[]> {
  const now = input.now ?? new Date();
  if (!(await anyDeliveryDue(poolReader(db), now))) return [];
  return db.write((x) => leaseDueDeliveries(x, { owner: input.owner, limit: input.limit, until: new Date(now.getTime() + input.leaseMs), now }));
}

/** A delivery this owner holds the lease of, with its event and merchant point; null if it lost it. */
export async function loadLeasedDelivery(db: Database, id: string, owner: string): Promise<LeasedDelivery | null> {
  return leasedDelivery(poolReader(db), id, owner);
}

export interface AttemptRecord {
  deliveryId: string;
  owner: string;
  attemptNumber: number;
  url: string | null;
  attemptedAt: Date;
  result: PostResult;
  state: DeliveryStatus;
  nextAttemptAt: Date | null;
}

/**
 * Stores the attempt and moves the delivery on (DELIVERED, FAILED, or PENDING with its next time),
 * releasing the lease. Returns false when the lease had been lost meanwhile (the attempt is stored
 * anyway: it did happen).
 */
export async function recordAttempt(db: Database, rec: AttemptRecord): Promise<boolean> {
  return db.write(async (x) => {
    const now = new Date();
    await insertAttempt(x, {
      deliveryId: rec.deliveryId,
      attemptNumber: rec.attemptNumber,
      url: rec.url,
      attemptedAt: rec.attemptedAt,
      statusCode: rec.result.statusCode,
      durationMs: rec.result.durationMs,
      responseBody: rec.result.responseBody,
      error: rec.result.error,
    });
    const fact = rec.state === 'DELIVERED' ? 'delivered' : rec.state === 'FAILED' ? 'gaveUp' : 'retried';
    return moveDelivery(x, rec, fact, {
      attemptCount: rec.attemptNumber,
      nextAttemptAt: rec.nextAttemptAt,
      lastStatusCode: rec.result.statusCode,
      lastError: rec.result.error,
      deliveredAt: rec.result.ok ? now : null,
    });
  });
}

/**
 * Gives leased deliveries back untouched (no attempt counted, their due time kept), so that the next
 * sender takes them at once. For attempts a stopping sender did not make or cut off.
 */
export async function releaseLease(db: Database, input: { deliveryIds: string[]; owner: string }): Promise<void> {
  if (input.deliveryIds.length === 0) return;
  await db.write((x) => releaseDeliveries(x, { ...input, now: new Date() }));
}

export interface AttemptView {
  attemptNumber: number | null;
  attemptedAt: string;
  url: string | null;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
}

export interface DeliveryView {
  id: string;
  replayOf: string | null;
  state: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: string | null;
  deliveredAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  attempts: AttemptView[];
}

export interface EventView {
  id: string;
  type: string;
  merchantId: string;
  paymentId: string | null;
  invoiceId: string | null;
  createdAt: string;
  /** State of the latest delivery; NONE when the event was never sent (no webhook URL, not subscribed). */
  state: DeliveryStatus | 'NONE';
  deliveries: DeliveryView[];
}

export interface ListEventsFilter {
  merchantId?: string;
  /** Only events whose latest delivery gave up. */
  failed?: boolean;
  since?: Date;
  limit: number;
}

/** Events, newest first, each with its deliveries (oldest first) and their attempts. */
export async function listEvents(db: Database, filter: ListEventsFilter): Promise<EventView[]> {
  const { events, deliveries, attempts } = await eventsWithDeliveries(db, filter);
  const attemptsOf = new Map<string, AttemptView[]>();
  for (const a of attempts) {
    const list = attemptsOf.get(a.deliveryId) ?? [];
    list.push({
      attemptNumber: a.attemptNumber,
      attemptedAt: a.attemptedAt.toISOString(),
      url: a.url,
      statusCode: a.statusCode,
      durationMs: a.durationMs,
      error: a.error,
      responseBody: a.responseBody,
    });
    attemptsOf.set(a.deliveryId, list);
  }
  const deliveriesOf = new Map<string, DeliveryView[]>();
  for (const d of deliveries) {
    const list = deliveriesOf.get(d.eventId) ?? [];
    list.push({
      id: d.id,
      replayOf: d.replayOf,
      state: d.state,
      attemptCount: d.attemptCount,
      nextAttemptAt: iso(d.nextAttemptAt),
      deliveredAt: iso(d.deliveredAt),
      lastStatusCode: d.lastStatusCode,
      lastError: d.lastError,
      createdAt: d.createdAt.toISOString(),
      attempts: attemptsOf.get(d.id) ?? [],
    });
    deliveriesOf.set(d.eventId, list);
  }
  return events.map((e) => {
    const ds = deliveriesOf.get(e.id) ?? [];
    return {
      id: e.id,
      type: e.type,
      merchantId: e.merchantId,
      paymentId: e.paymentId,
      invoiceId: e.invoiceId,
      createdAt: e.createdAt.toISOString(),
      state: ds.at(-1)?.state ?? 'NONE',
      deliveries: ds,
    };
  });
}

export interface ReplayResult {
  eventId: string;
  deliveryId: string;
  /** The event's original delivery (null when it had never been delivered before). */
  replayOf: string | null;
}

const noWebhookUrl = (merchantId: string) =>
  new UsageError(`merchant point ${merchantId} has no webhook URL: set one with \`chaingate merchant update ${merchantId} --webhook-url <url>\``);

async function replayIn(x: Executor, eventId: string, now: Date): Promise<ReplayResult> {
  const event = await eventTarget(x, eventId);
  if (!event) throw new UsageError(`no webhook event with id ${JSON.stringify(eventId)}`);
  if (!event.webhookUrl) throw noWebhookUrl(event.merchantId);
  const deliveries = await deliveriesOfEvent(x, event.eventId);
  const pending = deliveries.find((d) => d.state === 'PENDING');
  if (pending) {
    throw new UsageError(`event ${event.eventId} already has a delivery in progress (${pending.id}, next attempt ${iso(pending.nextAttemptAt) ?? 'now'})`);
  }
  const original = deliveries.find((d) => !d.replayOf) ?? deliveries[0];
  const deliveryId = await insertDelivery(x, event.eventId, { now, replayOf: original?.id ?? null });
  return { eventId: event.eventId, deliveryId, replayOf: original?.id ?? null };
}

/**
 * A new delivery of an event: same event id and the same payload bytes, linked to the original.
 * `chaingate webhooks replay` and the dashboard's "Redeliver" both come here; the dashboard's audit
 * row (with the new delivery's id) is written in the same transaction.
 */
export async function replayEvent(db: Database, eventId: string, now = new Date(), audit: AuditInput | null = null): Promise<ReplayResult> {
  return db.write(async (x) => {
    const replayed = await replayIn(x, eventId, now);
    if (audit) await insertAudit(x, { ...audit, details: { ...audit.details, eventId: replayed.eventId, deliveryId: replayed.deliveryId, replayOf: replayed.replayOf } });
    return replayed;
  });
}

/** Replays every event whose latest delivery FAILED; events that cannot be replayed are reported. */
export async function replayFailed(
  db: Database,
  filter: { merchantId?: string; since?: Date },
  now = new Date(),
): Promise<{ replayed: ReplayResult[]; skipped: { eventId: string; reason: string }[] }> {
  const ids = await failedEventIds(db, filter);
  const replayed: ReplayResult[] = [];
  const skipped: { eventId: string; reason: string }[] = [];
  for (const id of ids) {
    try {
      replayed.push(await replayEvent(db, id, now));
    } catch (err) {
      if (!(err instanceof UsageError)) throw err;
      skipped.push({ eventId: id, reason: err.message });
    }
  }
  return { replayed, skipped };
}

/**
 * A `ping` event and its delivery, created already leased to `owner` so that this process (not a
 * running daemon) makes the one attempt and can report it.
 */
export async function createPing(
  db: Database,
  merchantId: string,
  lease: { owner: string; leaseMs: number },
  now = new Date(),
): Promise<{ eventId: string; deliveryId: string; url: string }> {
  return db.write(async (x) => {
    const url = await merchantWebhookUrl(x, merchantId);
    if (url === undefined) throw new UsageError(`no merchant point with id ${JSON.stringify(merchantId)}`);
    if (!url) throw noWebhookUrl(merchantId);
    const data = { merchantId, message: 'chaingate test event: this endpoint receives signed webhooks' };
    const eventId = await insertEvent(x, { merchantId, type: 'ping', paymentId: null, invoiceId: null, at: now, data });
    const deliveryId = await insertDelivery(x, eventId, { now, lease: { owner: lease.owner, until: new Date(now.getTime() + lease.leaseMs) } });
    return { eventId, deliveryId, url };
  });
}
