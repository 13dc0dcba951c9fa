import type { DeliveryStatus } from '../domain/lifecycle.ts';
import type { Reader, SqlValue } from './executor.ts';
import type { Database } from './orm.ts';
import { dateOf, nullableDate, poolReader } from './raw-sql.ts';

// The reads of webhook events, their deliveries and attempts: what a sender needs for its next
// attempt, the listings and replays of `chaingate webhooks`, and the figures of status and metrics.
// Their writes are in src/store/events.ts and src/store/lifecycle.ts.

/** A delivery leased to a sender, with what its attempt sends and to whom. */
export interface LeasedDelivery {
  id: string;
  attemptCount: number;
  createdAt: Date;
  event: { id: string; type: string; payload: string };
  merchant: { id: string; webhookUrl: string | null; apiSecretEnc: string };
}

/** A PENDING delivery this owner holds the lease of, with its event and merchant point; null if it lost it. */
export async function leasedDelivery(r: Reader, id: string, owner: string): Promise<LeasedDelivery | null> {
  const row = await r.get<{
    id: string;
    attempt_count: number | string;
    created_at: unknown;
    event_id: string;
    type: string;
    payload: string;
    merchant_id: string;
    webhook_url: string | null;
    api_secret_enc: string;
  }>(
    `select d.id, d.attempt_count, d.created_at, e.id as event_id, e.type, e.payload, m.id as merchant_id, m.webhook_url, m.api_secret_enc
       from webhook_delivery d join webhook_event e on e.id = d.event_id join merchant_point m on m.id = e.merchant_id
      where d.id = ? and d.lease_owner = ? and d.state = 'PENDING'`,
    [id, owner],
  );
  if (!row) return null;
  return {
    id: row.id,
    attemptCount: Number(row.attempt_count),
    createdAt: dateOf(row.created_at),
    event: { id: row.event_id, type: row.type, payload: row.payload },
    merchant: { id: row.merchant_id, webhookUrl: row.webhook_url, apiSecretEnc: row.api_secret_enc },
  };
}

/** An event's merchant point and where it takes webhooks (null: nowhere); undefined when there is no such event. */
export async function eventTarget(r: Reader, eventId: string): Promise<{ eventId: string; merchantId: string; webhookUrl: string | null } | undefined> {
  const row = await r.get<{ id: string; merchant_id: string; webhook_url: string | null }>(
    'select e.id, e.merchant_id, m.webhook_url from webhook_event e join merchant_point m on m.id = e.merchant_id where e.id = ?',
    [eventId],
  );
  return row && { eventId: row.id, merchantId: row.merchant_id, webhookUrl: row.webhook_url };
}

/** Where a merchant point takes webhooks (null: nowhere); undefined when there is no such point. */
export async function merchantWebhookUrl(r: Reader, merchantId: string): Promise<string | null | undefined> {
  return (await r.get<{ webhook_url: string | null }>('select webhook_url from merchant_point where id = ?', [merchantId]))?.webhook_url;
}

/** The deliveries of an event, oldest first, as a replay decides on them. */
export async function deliveriesOfEvent(r: Reader, eventId: string): Promise<Pick<DeliveryRow, 'id' | 'state' | 'replayOf' | 'nextAttemptAt'>[]> {
  const rows = await r.all<{ id: string; state: DeliveryStatus; replay_of: string | null; next_attempt_at: unknown }>(
    'select id, state, replay_of, next_attempt_at from webhook_delivery where event_id = ? order by created_at, id',
    [eventId],
  );
  return rows.map((d) => ({ id: d.id, state: d.state, replayOf: d.replay_of, nextAttemptAt: nullableDate(d.next_attempt_at) }));
}

export interface EventFilter {
  merchantId?: string | undefined;
  since?: Date | undefined;
  /** Only events whose latest delivery gave up. */
  failed?: boolean | undefined;
  /** Keyset pagination, newest first: only events older than this one (created_at, then id). */
  before?: { createdAt: Date; id: string } | undefined;
  /** Only this event. */
  eventId?: string | undefined;
}

/** The event `e` has a FAILED delivery and no delivery after it: its latest delivery gave up. */
const LATEST_FAILED = `exists (select 1 from webhook_delivery d where d.event_id = e.id and d.state = 'FAILED' and not exists
  (select 1 from webhook_delivery n where n.event_id = d.event_id and (n.created_at > d.created_at or (n.created_at = d.created_at and n.id > d.id))))`;

function eventWhere(filter: EventFilter): { sql: string; params: SqlValue[] } {
  const terms: string[] = [];
  const params: SqlValue[] = [];
  if (filter.merchantId) {
    terms.push('e.merchant_id = ?');
    params.push(filter.merchantId);
  }
  if (filter.since) {
    terms.push('e.created_at >= ?');
    params.push(filter.since);
  }
  if (filter.failed) terms.push(LATEST_FAILED);
  if (filter.before) {
    terms.push('(e.created_at < ? or (e.created_at = ? and e.id < ?))');
    params.push(filter.before.createdAt, filter.before.createdAt, filter.before.id);
  }
  if (filter.eventId) {
    terms.push('e.id = ?');
    params.push(filter.eventId);
  }
  return { sql: terms.length ? `where ${terms.join(' and ')}` : '', params };
}

/** Ids of events (optionally of one merchant point, created since a time) whose latest delivery FAILED, oldest first. */
export async function failedEventIds(db: Database, filter: Omit<EventFilter, 'failed'>): Promise<string[]> {
  const where = eventWhere({ ...filter, failed: true });
  return (await poolReader(db).all<{ id: string }>(`select e.id from webhook_event e ${where.sql} order by e.created_at, e.id`, where.params)).map((r) => r.id);
}

export interface EventRow {
  id: string;
  type: string;
  /** The exact JSON body every attempt sends. */
  payload: string;
  merchantId: string;
  paymentId: string | null;
  invoiceId: string | null;
  createdAt: Date;
}

export interface DeliveryRow {
  id: string;
  eventId: string;
  replayOf: string | null;
  state: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
}

export interface AttemptRow {
  deliveryId: string;
  attemptNumber: number | null;
  attemptedAt: Date;
  url: string | null;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
}

const numberOrNull = (v: number | string | null): number | null => (v === null ? null : Number(v));

/** Events, newest first, with their deliveries (oldest first) and the attempts of those (oldest first). */
export async function eventsWithDeliveries(db: Database, filter: EventFilter & { limit: number }): Promise<{ events: EventRow[]; deliveries: DeliveryRow[]; attempts: AttemptRow[] }> {
  const r = poolReader(db);
  const where = eventWhere(filter);
  const events = await r.all<{ id: string; type: string; payload: string; merchant_id: string; payment_id: string | null; invoice_id: string | null; created_at: unknown }>(
    `select e.id, e.type, e.payload, e.merchant_id, e.payment_id, e.invoice_id, e.created_at from webhook_event e ${where.sql} order by e.created_at desc, e.id desc limit ?`,
    [...where.params, filter.limit],
  );
  if (events.length === 0) return { events: [], deliveries: [], attempts: [] };
  const deliveries = await r.all<{
    id: string;
    event_id: string;
    replay_of: string | null;
    state: DeliveryStatus;
    attempt_count: number | string;
    next_attempt_at: unknown;
    delivered_at: unknown;
    last_status_code: number | string | null;
    last_error: string | null;
    created_at: unknown;
  }>(
    `select id, event_id, replay_of, state, attempt_count, next_attempt_at, delivered_at, last_status_code, last_error, created_at
       from webhook_delivery where event_id in (${events.map(() => '?').join(', ')}) order by created_at, id`,
    events.map((e) => e.id),
  );
  const attempts = deliveries.length
    ? await r.all<{
        delivery_id: string;
        attempt_number: number | string | null;
        attempted_at: unknown;
        url: string | null;
        status_code: number | string | null;
        duration_ms: number | string;
        error: string | null;
        response_body: string | null;
      }>(
        `select delivery_id, attempt_number, attempted_at, url, status_code, duration_ms, error, response_body
           from webhook_attempt where delivery_id in (${deliveries.map(() => '?').join(', ')}) order by attempted_at, id`,
        deliveries.map((d) => d.id),
      )
    : [];
  return {
    events: events.map((e) => ({ id: e.id, type: e.type, payload: e.payload, merchantId: e.merchant_id, paymentId: e.payment_id, invoiceId: e.invoice_id, createdAt: dateOf(e.created_at) })),
    deliveries: deliveries.map((d) => ({
      id: d.id,
      eventId: d.event_id,
      replayOf: d.replay_of,
      state: d.state,
      attemptCount: Number(d.attempt_count),
      nextAttemptAt: nullableDate(d.next_attempt_at),
      deliveredAt: nullableDate(d.delivered_at),
      lastStatusCode: numberOrNull(d.last_status_code),
      lastError: d.last_error,
      createdAt: dateOf(d.created_at),
    })),
    attempts: attempts.map((a) => ({
      deliveryId: a.delivery_id,
      attemptNumber: numberOrNull(a.attempt_number),
      attemptedAt: dateOf(a.attempted_at),
      url: a.url,
      statusCode: numberOrNull(a.status_code),
      durationMs: Number(a.duration_ms),
      error: a.error,
      responseBody: a.response_body,
    })),
  };
}

/** A delivery's event and the merchant point it belongs to; undefined when there is no such delivery. */
export async function deliveryOwner(db: Database, deliveryId: string): Promise<{ eventId: string; merchantId: string } | undefined> {
  const row = await poolReader(db).get<{ event_id: string; merchant_id: string }>(
    'select d.event_id, e.merchant_id from webhook_delivery d join webhook_event e on e.id = d.event_id where d.id = ?',
    [deliveryId],
  );
  return row && { eventId: row.event_id, merchantId: row.merchant_id };
}

export interface EndpointHealth {
  /** The last 2xx answer of this URL to this point's deliveries; null: none on record. */
  lastSuccessAt: Date | null;
  /** The first failed attempt after that success (or ever, without one); null: not failing. */
  failingSince: Date | null;
  /** Failed attempts since then. */
  failedAttempts: number;
}

const ATTEMPTS_OF_POINT = `from webhook_attempt a join webhook_delivery d on d.id = a.delivery_id join webhook_event e on e.id = d.event_id
  where e.merchant_id = ? and a.url = ?`;

/** Whether a point's webhook URL is failing, and since when: its attempts since its last 2xx answer. */
export async function endpointHealth(db: Database, merchantId: string, url: string): Promise<EndpointHealth> {
  const r = poolReader(db);
  const ok = await r.get<{ t: unknown }>(`select max(a.attempted_at) as t ${ATTEMPTS_OF_POINT} and a.status_code >= 200 and a.status_code < 300`, [merchantId, url]);
  const lastSuccessAt = nullableDate(ok?.t);
  const failed = await r.get<{ t: unknown; n: number | string }>(
    `select min(a.attempted_at) as t, count(*) as n ${ATTEMPTS_OF_POINT} and (a.status_code is null or a.status_code < 200 or a.status_code >= 300) and a.attempted_at > ?`,
    [merchantId, url, lastSuccessAt ?? new Date(0)],
  );
  return { lastSuccessAt, failingSince: nullableDate(failed?.t), failedAttempts: Number(failed?.n ?? 0) };
}

/** Attempts since a time that got no 2xx answer, newest first (at most `limit`). */
export async function failedAttemptsSince(db: Database, since: Date, limit: number): Promise<Pick<AttemptRow, 'attemptedAt' | 'url' | 'statusCode' | 'error'>[]> {
  const rows = await poolReader(db).all<{ attempted_at: unknown; url: string | null; status_code: number | string | null; error: string | null }>(
    `select attempted_at, url, status_code, error from webhook_attempt
      where attempted_at >= ? and (status_code is null or status_code < 200 or status_code >= 300)
      order by attempted_at desc limit ?`,
    [since, limit],
  );
  return rows.map((a) => ({ attemptedAt: dateOf(a.attempted_at), url: a.url, statusCode: numberOrNull(a.status_code), error: a.error }));
}

/** When the longest-waiting PENDING delivery was due; null when none is pending. */
export async function oldestPendingDue(db: Database): Promise<Date | null> {
  const row = await poolReader(db).get<{ t: unknown }>(`select min(next_attempt_at) as t from webhook_delivery where state = 'PENDING'`);
  return nullableDate(row?.t);
}
