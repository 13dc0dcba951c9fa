import type { Common } from '../common.ts';
import { can } from '../domain/dashboard-roles.ts';
import type { DeliveryStatus } from '../domain/lifecycle.ts';
import { GatewayError, UsageError } from '../domain/errors.ts';
import { merchantView } from '../store/merchants.ts';
import { deliveryOwner, endpointHealth, eventsWithDeliveries, type AttemptRow, type DeliveryRow } from '../store/webhook-deliveries.ts';
import { replayEvent, type ReplayResult } from '../webhooks/deliveries.ts';
import { grantedPoint, type DashboardPoint } from './dashboard-points.ts';
import type { DashboardPrincipal } from './dashboard-session.ts';
import type { Client } from './dashboard-tokens.ts';

// A point's webhooks as its users see them (docs/dashboard.md#webhooks): the endpoint and whether it
// is failing, the log of events with each delivery and attempt, and "Redeliver", which is the very
// replay `chaingate webhooks replay` makes (src/webhooks/deliveries.ts replayEvent). Reading needs
// the point's 'read'; redelivering (like the test event) its 'settings' (managers and owners).

/** What the log shows of a response body: its first 2 KB (the sender may keep more when configured to). */
export const RESPONSE_BODY_SHOWN = 2048;

export interface LogAttempt {
  number: number | null;
  at: string;
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  /** The first 2 KB of what the receiver answered: its text, never markup to render. */
  responseBody: string | null;
  durationMs: number;
  /** When the next attempt was made (an earlier attempt) or is due (the last one of a pending delivery). */
  nextRetryAt: string | null;
}

export interface LogDelivery {
  id: string;
  /** The original delivery this one replays (Redeliver, `webhooks replay`). */
  replayOf: string | null;
  state: DeliveryStatus;
  createdAt: string;
  /** A pending delivery's next attempt. */
  nextAttemptAt: string | null;
  attempts: LogAttempt[];
}

export interface LogEvent {
  id: string;
  type: string;
  createdAt: string;
  paymentId: string | null;
  invoiceId: string | null;
  /** The exact JSON body every attempt sends (signed per attempt over these bytes). */
  requestBody: string;
  deliveries: LogDelivery[];
}

export interface WebhookLog {
  point: DashboardPoint;
  endpoint: { url: string | null; failingSince: string | null; lastSuccessAt: string | null; failedAttempts: number };
  events: LogEvent[];
  /** The cursor of the next (older) page; null on the last. */
  next: string | null;
  /** Only this event (a link from a redelivery or elsewhere). */
  eventId: string | null;
  /** The user may redeliver and send test events. */
  canAct: boolean;
}

const CURSOR = /^(\d{1,15})-([a-z0-9]{1,32})$/;
const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

function firstBytes(text: string | null): string | null {
  if (text === null) return null;
  const bytes = Buffer.from(text, 'utf8');
  return bytes.length <= RESPONSE_BODY_SHOWN ? text : bytes.subarray(0, RESPONSE_BODY_SHOWN).toString('utf8');
}

function deliveryOf(d: DeliveryRow, attempts: AttemptRow[]): LogDelivery {
  return {
    id: d.id,
    replayOf: d.replayOf,
    state: d.state,
    createdAt: d.createdAt.toISOString(),
    nextAttemptAt: d.state === 'PENDING' ? iso(d.nextAttemptAt) : null,
    attempts: attempts.map((a, i) => {
      const later = attempts[i + 1];
      const ok = a.statusCode !== null && a.statusCode >= 200 && a.statusCode < 300;
      return {
        number: a.attemptNumber,
        at: a.attemptedAt.toISOString(),
        ok,
        statusCode: a.statusCode,
        error: a.error,
        responseBody: firstBytes(a.responseBody),
        durationMs: a.durationMs,
        nextRetryAt: later ? later.attemptedAt.toISOString() : !ok && d.state === 'PENDING' ? iso(d.nextAttemptAt) : null,
      };
    }),
  };
}

/** One page of a point's webhook log, newest event first (keyset: stable while new events arrive). */
export async function webhookLogFor(
  common: Common,
  principal: DashboardPrincipal,
  pointId: string,
  query: { cursor?: string | undefined; eventId?: string | undefined },
  limit = 20,
): Promise<WebhookLog> {
  const { merchant, role } = await grantedPoint(common, principal, pointId, 'read');
  let before: { createdAt: Date; id: string } | undefined;
  if (query.cursor) {
    const m = CURSOR.exec(query.cursor);
    if (!m) throw new UsageError('before: not a cursor of this log (use the "Older" link)');
    before = { createdAt: new Date(Number(m[1])), id: m[2]! };
  }
  if (query.eventId !== undefined && !/^[a-z0-9]{1,32}$/.test(query.eventId)) throw new UsageError('event: not an event id');
  const { events, deliveries, attempts } = await eventsWithDeliveries(common.db, { merchantId: pointId, before, eventId: query.eventId, limit: limit + 1 });
  const page = events.slice(0, limit);
  const attemptsOf = new Map<string, AttemptRow[]>();
  for (const a of attempts) attemptsOf.set(a.deliveryId, [...(attemptsOf.get(a.deliveryId) ?? []), a]);
  const deliveriesOf = new Map<string, LogDelivery[]>();
  for (const d of deliveries) deliveriesOf.set(d.eventId, [...(deliveriesOf.get(d.eventId) ?? []), deliveryOf(d, attemptsOf.get(d.id) ?? [])]);
  const last = page.at(-1);
  const health = merchant.webhookUrl ? await endpointHealth(common.db, pointId, merchant.webhookUrl) : null;
  return {
    point: { ...merchantView(merchant), role },
    endpoint: { url: merchant.webhookUrl, failingSince: iso(health?.failingSince ?? null), lastSuccessAt: iso(health?.lastSuccessAt ?? null), failedAttempts: health?.failedAttempts ?? 0 },
    events: page.map((e) => ({
      id: e.id,
      type: e.type,
      createdAt: e.createdAt.toISOString(),
      paymentId: e.paymentId,
      invoiceId: e.invoiceId,
      requestBody: e.payload,
      deliveries: deliveriesOf.get(e.id) ?? [],
    })),
    next: events.length > limit && last ? `${last.createdAt.getTime()}-${last.id}` : null,
    eventId: query.eventId ?? null,
    canAct: can(role, 'settings'),
  };
}

/**
 * Delivers a delivery's event again, as a new delivery linked to the event's original one, through
 * the same replay as `chaingate webhooks replay`; the next running sender (serve's) makes the attempt.
 */
export async function redeliverFromDashboard(common: Common, principal: DashboardPrincipal, pointId: string, deliveryId: string, client: Client): Promise<ReplayResult> {
  await grantedPoint(common, principal, pointId, 'settings');
  const owner = /^[a-z0-9]{1,32}$/.test(deliveryId) ? await deliveryOwner(common.db, deliveryId) : undefined;
  if (!owner || owner.merchantId !== pointId) throw new GatewayError('NOT_FOUND', 'No such webhook delivery on this point');
  return replayEvent(common.db, owner.eventId, new Date(), {
    userId: principal.userId,
    actor: principal.email,
    ...client,
    action: 'webhook.redeliver',
    pointId,
    details: { of: deliveryId },
  });
}
