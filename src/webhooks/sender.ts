import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Common } from '../common.ts';
import type { DeliveryStatus } from '../domain/lifecycle.ts';
import type { LeasedDelivery } from '../store/webhook-deliveries.ts';
import { openSecret } from '../store/merchants.ts';
import { claimDueDeliveries, loadLeasedDelivery, recordAttempt, releaseLease } from './deliveries.ts';
import { postWebhook, type PostInput, type PostResult } from './post.ts';
import { retryDelayMs, retryPolicyFromConfig } from './retry-policy.ts';
import { webhookHeaders } from './sign.ts';

// The sender: leases due deliveries from the database, makes one HTTP attempt each, records it and
// schedules the next. Any number of senders (`serve`, `chaingate webhooks work`) may run on one
// database; the lease makes each attempt theirs alone. All state lives in the database, so a
// restarted sender carries on with the schedule where the last one stopped.

export interface AttemptOutcome {
  deliveryId: string;
  eventId: string;
  eventType: string;
  attemptNumber: number;
  url: string | null;
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseBody: string | null;
  /** The delivery's state after this attempt. */
  state: DeliveryStatus;
  nextAttemptAt: Date | null;
}

export interface WebhookSender {
  /** The lease owner name of this sender (host:pid:random). */
  readonly owner: string;
  /** Starts polling; idempotent. */
  start(): void;
  /**
   * Stops claiming at once and waits for the attempts in flight to be recorded; those still waiting
   * for their receiver after `graceMs` are cut off and their deliveries left due for the next sender.
   */
  stop(graceMs?: number): Promise<void>;
  /** One claim-and-attempt round, awaited to the end (tests, scripts). */
  runOnce(): Promise<AttemptOutcome[]>;
  /** Makes the next attempt of a delivery this sender holds the lease of; null if it does not, or stop() cut it off. */
  attempt(deliveryId: string): Promise<AttemptOutcome | null>;
}

export interface WebhookSenderOptions {
  common: Pick<Common, 'config' | 'log' | 'db' | 'box'>;
  owner?: string;
  /** Tests: replaces the HTTP attempt. */
  post?: (input: PostInput) => Promise<PostResult>;
  /** Tests: the jitter's random source. */
  random?: () => number;
  /** Called with the time from a delivery's creation to its success (metrics). */
  onDelivered?: (latencyMs: number) => void;
}

export function newSenderOwner(): string {
  return `${hostname().slice(0, 32)}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  const { config, log, db, box } = options.common;
  const settings = config.webhooks;
  const owner = options.owner ?? newSenderOwner();
  const post = options.post ?? postWebhook;
  const policy = retryPolicyFromConfig(settings);
  const leaseMs = Math.round(settings.leaseSeconds * 1000);

  const failure = (error: string): PostResult => ({ ok: false, statusCode: null, durationMs: 0, responseBody: null, error });
  // Aborted by stop() once its grace is over; a fresh one for each start().
  let abort = new AbortController();

  /** One HTTP attempt; `final` when retrying cannot help (no URL any more). */
  async function send(event: LeasedDelivery['event'], merchant: LeasedDelivery['merchant'], url: string | null, attemptNumber: number): Promise<{ result: PostResult; final: boolean }> {
    // Removed since the event was recorded: nothing to retry towards.
    if (!url) return { result: failure('the merchant point has no webhook URL'), final: true };
    let secret: string;
    try {
      // Read now, not when the event was recorded: a rotated secret signs the very next attempt.
      secret = openSecret(box, merchant);
    } catch {
      return { result: failure('the merchant point secret cannot be decrypted (check the master key)'), final: false };
    }
    const body = Buffer.from(event.payload, 'utf8');
    const headers = webhookHeaders({ eventId: event.id, eventType: event.type, apiSecret: secret, body, timestamp: Math.floor(Date.now() / 1000), attemptNumber });
    const result = await post({
      url,
      headers,
      body,
      timeoutMs: settings.timeoutMs,
      responseBodyLimit: settings.responseBodyLimit,
      allowPrivateNetworks: settings.allowPrivateNetworks,
      signal: abort.signal,
    });
    return { result, final: false };
  }

  async function attempt(deliveryId: string): Promise<AttemptOutcome | null> {
    const delivery = await loadLeasedDelivery(db, deliveryId, owner);
    if (!delivery) return null;
    const event = delivery.event;
    const merchant = delivery.merchant;
    const attemptNumber = delivery.attemptCount + 1;
    const attemptedAt = new Date();
    const url = merchant.webhookUrl ?? null;
    const { result, final } = await send(event, merchant, url, attemptNumber);
    if (result.aborted) {
      await releaseLease(db, { deliveryIds: [deliveryId], owner });
      log.warn({ deliveryId, eventId: event.id, type: event.type, attempt: attemptNumber, durationMs: result.durationMs }, 'webhook attempt cut off by the shutdown; the delivery stays due');
      return null;
    }

    // A ping is a one-off check of the integration, never retried.
    const attemptsAllowed = event.type === 'ping' ? { ...policy, maxAttempts: 1 } : policy;
    const delay = result.ok || final ? null : retryDelayMs(attemptsAllowed, attemptNumber, options.random);
    const state: DeliveryStatus = result.ok ? 'DELIVERED' : delay === null ? 'FAILED' : 'PENDING';
    const nextAttemptAt = state === 'PENDING' && delay !== null ? new Date(Date.now() + delay) : null;
    const held = await recordAttempt(db, { deliveryId, owner, attemptNumber, url, attemptedAt, result, state, nextAttemptAt });

    const fields = { deliveryId, eventId: event.id, type: event.type, merchantId: merchant.id, attempt: attemptNumber, statusCode: result.statusCode, durationMs: result.durationMs };
    if (!held) log.warn(fields, 'webhook delivery lease ran out during the attempt; its state was left to the new holder');
    if (result.ok) {
      log.info(fields, 'webhook delivered');
      options.onDelivered?.(Date.now() - delivery.createdAt.getTime());
    }
    else log.warn({ ...fields, error: result.error, state, nextAttemptAt }, state === 'FAILED' ? 'webhook delivery failed for good' : 'webhook attempt failed; will retry');

    return {
      deliveryId,
      eventId: event.id,
      eventType: event.type,
      attemptNumber,
      url,
      ok: result.ok,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      responseBody: result.responseBody,
      state,
      nextAttemptAt,
    };
  }

  async function runOnce(): Promise<AttemptOutcome[]> {
    const ids = await claimDueDeliveries(db, { owner, limit: settings.concurrency, leaseMs });
    const outcomes = await Promise.all(ids.map((id) => attempt(id)));
    return outcomes.filter((o): o is AttemptOutcome => o !== null);
  }

  // Polling loop: keeps up to `concurrency` attempts in flight, claiming more as slots free up.
  let running: Promise<void> | null = null;
  let stopping = false;
  let wake: (() => void) | null = null;
  const inFlight = new Set<Promise<unknown>>();

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = null;
        resolve();
      }
      wake = done;
    });

  async function loop(): Promise<void> {
    while (!stopping) {
      const free = settings.concurrency - inFlight.size;
      let claimed = 0;
      if (free > 0) {
        try {
          const ids = await claimDueDeliveries(db, { owner, limit: free, leaseMs });
          // Stopped while claiming: no new attempt, the rows go back as they were.
          if (stopping) {
            await releaseLease(db, { deliveryIds: ids, owner });
            break;
          }
          claimed = ids.length;
          for (const id of ids) {
            const p: Promise<unknown> = attempt(id)
              .catch((err: unknown) => log.error({ err, deliveryId: id }, 'webhook attempt crashed; the lease will expire and it will be retried'))
              .finally(() => {
                inFlight.delete(p);
                wake?.();
              });
            inFlight.add(p);
          }
        } catch (err) {
          log.error({ err }, 'claiming webhook deliveries failed');
        }
      }
      if (stopping) break;
      // All free slots filled: there may be more due at once, look again as soon as a slot frees.
      if (free > 0 && claimed === free && inFlight.size < settings.concurrency) continue;
      await pause(settings.pollIntervalMs);
    }
    await Promise.allSettled([...inFlight]);
  }

  return {
    owner,
    start() {
      if (running) return;
      stopping = false;
      if (abort.signal.aborted) abort = new AbortController();
      log.info({ owner, maxAttempts: settings.maxAttempts }, 'webhook sender started');
      running = loop();
    },
    async stop(graceMs = Infinity) {
      if (!running) return;
      stopping = true;
      wake?.();
      const deadline = Number.isFinite(graceMs) ? setTimeout(() => abort.abort(), graceMs) : null;
      await running;
      if (deadline) clearTimeout(deadline);
      running = null;
    },
    runOnce,
    attempt,
  };
}
