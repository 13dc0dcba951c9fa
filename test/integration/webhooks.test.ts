import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openCommon } from '../../src/cli/context.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookAttempt } from '../../src/store/entities/webhook-attempt.entity.ts';
import { WebhookDelivery } from '../../src/store/entities/webhook-delivery.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { recordEvent, WEBHOOK_API_VERSION } from '../../src/store/events.ts';
import { invoiceById, paymentById } from '../../src/store/records.ts';
import { sweepExpired } from '../../src/store/expiry.ts';
import { rotateSecret } from '../../src/store/merchants.ts';
import { startDaemon } from '../../src/daemon/serve.ts';
import { claimDueDeliveries, listEvents, replayEvent, replayFailed } from '../../src/webhooks/deliveries.ts';
import { createWebhookSender, type WebhookSender, type WebhookSenderOptions } from '../../src/webhooks/sender.ts';
import { paymentEventData } from '../../src/domain/views.ts';
import { UsageError } from '../../src/domain/errors.ts';
import { verifyWebhook } from '../../src/sdk/verify-webhook.ts';
import { DIALECTS, skipUnless, type DialectName } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type TestDaemon, type TestMerchant } from '../helpers/daemon.ts';
import { closedPort, eventually, startWebhookReceiver, type ReceivedRequest } from '../helpers/webhook-receiver.ts';

type T = { after(fn: () => Promise<void> | void): void };

/** Fast settings for tests: retries due at once unless a test says otherwise. */
const FAST = { allowPrivateNetworks: true, retryScheduleSeconds: [0], retryJitter: 0, pollIntervalMs: 20, timeoutMs: 300, leaseSeconds: 6 };

interface Setup {
  d: TestDaemon;
  sender(options?: Partial<WebhookSenderOptions>): WebhookSender;
}

/** A test daemon (no sender of its own) plus senders that are stopped before its database closes. */
async function setup(t: T, dialect: DialectName, webhooks: Record<string, unknown> = {}): Promise<Setup> {
  const later: (() => Promise<void> | void)[] = [];
  const d = await startTestDaemon({ after: (fn) => later.push(fn) }, dialect, { webhooks: { ...FAST, ...webhooks } });
  const senders: WebhookSender[] = [];
  t.after(async () => {
    for (const s of senders) await s.stop();
    for (const fn of later) await fn();
  });
  return {
    d,
    sender(options = {}) {
      const s = createWebhookSender({ common: d.common, ...options });
      senders.push(s);
      return s;
    },
  };
}

async function merchantWithHook(d: TestDaemon, url: string): Promise<TestMerchant> {
  return d.createMerchant({ name: 'Hooked Shop', webhookUrl: url });
}

async function cancelledInvoice(d: TestDaemon, merchant: TestMerchant): Promise<string> {
  const created = await d.signed('POST', '/api/v1/invoices', { orderId: `o-${Math.random()}`, amount: '2500', currency: 'USD' }, { merchant });
  assert.equal(created.status, 201, created.text);
  const res = await d.signed('DELETE', `/api/v1/invoices/${created.json.data.id}`, undefined, { merchant });
  assert.equal(res.status, 200, res.text);
  return created.json.data.id as string;
}

function signatureOf(req: ReceivedRequest): string {
  return String(req.headers['x-webhook-signature']);
}

async function deliveriesOf(d: TestDaemon, eventId: string) {
  return d.common.db.em().find(WebhookDelivery, { event: eventId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
}

async function attemptsOf(d: TestDaemon, deliveryId: string) {
  return d.common.db.em().find(WebhookAttempt, { delivery: deliveryId }, { orderBy: { attemptedAt: 'asc', id: 'asc' } });
}

for (const dialect of DIALECTS) {
  describe(`webhook deliveries on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('an event is POSTed with the headers of the spec, signed over the exact bytes; the SDK verifier accepts it and refuses tampering', async (t) => {
      const { d, sender } = await setup(t, dialect);
      const rx = await startWebhookReceiver(t, () => ({ status: 200, body: 'thanks' }));
      const m = await merchantWithHook(d, rx.url);
      const invoiceId = await cancelledInvoice(d, m);
      sender().start();
      const [req] = await rx.waitFor(1);
      assert.ok(req);
      assert.equal(req.method, 'POST');
      assert.equal(req.path, '/hooks');
      assert.equal(req.headers['content-type'], 'application/json');
      const body = JSON.parse(req.rawBody.toString('utf8'));
      assert.deepEqual(Object.keys(body), ['id', 'type', 'apiVersion', 'createdAt', 'data']);
      assert.equal(body.type, 'invoice.cancelled');
      assert.equal(body.apiVersion, WEBHOOK_API_VERSION);
      assert.equal(body.data.invoice.id, invoiceId);
      assert.equal(body.data.invoice.status, 'CANCELLED');
      assert.equal(req.headers['x-webhook-id'], body.id);
      const t0 = Number(req.headers['x-webhook-timestamp']);
      assert.ok(Math.abs(t0 - Date.now() / 1000) < 5);
      assert.match(signatureOf(req), new RegExp(`^t=${t0},v1=[0-9a-f]{64}$`));

      const verify = (over: Partial<Parameters<typeof verifyWebhook>[0]> = {}) =>
        verifyWebhook({ apiSecret: m.apiSecret, rawBody: req.rawBody, signature: req.headers['x-webhook-signature'], timestamp: req.headers['x-webhook-timestamp'], ...over });
      assert.deepEqual(verify(), { ok: true, timestamp: t0 });
      const tampered = Buffer.from(req.rawBody.toString('utf8').replace('"CANCELLED"', '"PAID"'));
      assert.deepEqual(verify({ rawBody: tampered }), { ok: false, reason: 'mismatch' });
      assert.deepEqual(verify({ now: t0 + 301 }), { ok: false, reason: 'expired' });
      assert.deepEqual(verify({ now: t0 - 301 }), { ok: false, reason: 'expired' });
      assert.deepEqual(verify({ apiSecret: d.merchant.apiSecret }), { ok: false, reason: 'mismatch' });

      // Stored: the delivery is DELIVERED after one attempt, and the attempt is recorded in full.
      const [delivery] = await eventually(async () => {
        const ds = await deliveriesOf(d, body.id);
        return ds[0]?.state === 'DELIVERED' ? ds : undefined;
      });
      assert.equal(delivery!.attemptCount, 1);
      assert.equal(delivery!.lastStatusCode, 200);
      assert.ok(delivery!.deliveredAt);
      assert.equal(delivery!.leaseOwner, null);
      const [attempt] = await attemptsOf(d, delivery!.id);
      assert.equal(attempt!.attemptNumber, 1);
      assert.equal(attempt!.statusCode, 200);
      assert.equal(attempt!.responseBody, 'thanks');
      assert.equal(attempt!.error, null);
      assert.equal(attempt!.url, rx.url);
      assert.ok(attempt!.durationMs >= 0);
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(rx.requests.length, 1, 'a 2xx ends the delivery');
    });

    test('retries on 500, timeout and connection refused, and stops at the first 2xx; every attempt is stored', async (t) => {
      const { d, sender } = await setup(t, dialect, { responseBodyLimit: 16 });
      const replies = [{ status: 500, body: 'x'.repeat(100) }, { hang: true }, { status: 204 }];
      const rx = await startWebhookReceiver(t, (req) => replies[req.n - 1] ?? { status: 200 });
      const m = await merchantWithHook(d, rx.url);
      await cancelledInvoice(d, m);
      const s = sender();

      const [first] = await s.runOnce();
      assert.deepEqual([first?.ok, first?.statusCode, first?.state, first?.error], [false, 500, 'PENDING', 'HTTP 500 is not a 2xx answer']);
      const [second] = await s.runOnce();
      assert.equal(second?.error, 'timed out after 300 ms');
      assert.equal(second?.state, 'PENDING');
      assert.ok(second!.durationMs >= 290 && second!.durationMs < 2000, String(second!.durationMs));
      const refusedUrl = `http://127.0.0.1:${await closedPort()}/hooks`;
      await d.common.db.em().nativeUpdate(MerchantPoint, { id: m.id }, { webhookUrl: refusedUrl });
      const [third] = await s.runOnce();
      assert.equal(third?.error, 'connection refused (ECONNREFUSED)');
      await d.common.db.em().nativeUpdate(MerchantPoint, { id: m.id }, { webhookUrl: rx.url });
      const [fourth] = await s.runOnce();
      assert.deepEqual([fourth?.ok, fourth?.statusCode, fourth?.state, fourth?.attemptNumber], [true, 204, 'DELIVERED', 4]);
      assert.deepEqual(await s.runOnce(), [], 'nothing left to send');

      // The receiver saw three requests of the same event, each freshly signed over identical bytes.
      assert.equal(rx.requests.length, 3);
      const ids = new Set(rx.requests.map((r) => r.headers['x-webhook-id']));
      assert.equal(ids.size, 1);
      assert.deepEqual(rx.requests.map((r) => r.headers['x-webhook-attempt']), ['1', '2', '4']);
      for (const r of rx.requests) {
        assert.ok(r.rawBody.equals(rx.requests[0]!.rawBody));
        assert.equal(verifyWebhook({ apiSecret: m.apiSecret, rawBody: r.rawBody, signature: signatureOf(r) }).ok, true);
      }
      const attempts = await attemptsOf(d, fourth!.deliveryId);
      assert.deepEqual(attempts.map((a) => [a.attemptNumber, a.statusCode]), [[1, 500], [2, null], [3, null], [4, 204]]);
      assert.equal(attempts[0]!.responseBody, 'x'.repeat(16), 'the response body is truncated to responseBodyLimit');
      assert.equal(attempts[2]!.url, refusedUrl);
      assert.match(attempts[1]!.error ?? '', /timed out/);
    });

    test('the retry schedule is persisted with jitter; maxAttempts 1 restores the single attempt of the spec', async (t) => {
      const { d, sender } = await setup(t, dialect, { retryScheduleSeconds: [10, 60], retryJitter: 0.1 });
      const rx = await startWebhookReceiver(t, () => ({ status: 503 }));
      const m = await merchantWithHook(d, rx.url);
      await cancelledInvoice(d, m);
      const s = sender();
      const before = Date.now();
      const [first] = await s.runOnce();
      const wait = first!.nextAttemptAt!.getTime() - before;
      assert.ok(wait >= 9_000 && wait <= 11_500, `next attempt in ${wait} ms`);
      const stored = (await d.common.db.em().findOneOrFail(WebhookDelivery, { id: first!.deliveryId })).nextAttemptAt!;
      assert.equal(stored.getTime(), first!.nextAttemptAt!.getTime());
      assert.deepEqual(await s.runOnce(), [], 'not due yet');

      const single = await setup(t, dialect, { maxAttempts: 1 });
      const rx1 = await startWebhookReceiver(t, () => ({ status: 500 }));
      const m1 = await merchantWithHook(single.d, rx1.url);
      await cancelledInvoice(single.d, m1);
      const s1 = single.sender();
      const [only] = await s1.runOnce();
      assert.deepEqual([only?.state, only?.nextAttemptAt], ['FAILED', null]);
      assert.deepEqual(await s1.runOnce(), []);
      assert.equal(rx1.requests.length, 1);
    });

    test('redirects are not followed and do not count as delivered', async (t) => {
      const { d, sender } = await setup(t, dialect, { maxAttempts: 1 });
      const rx = await startWebhookReceiver(t, (req) => (req.path === '/hooks' ? { status: 302, headers: { Location: '/elsewhere' } } : { status: 200 }));
      const m = await merchantWithHook(d, rx.url);
      await cancelledInvoice(d, m);
      const [outcome] = await sender().runOnce();
      assert.equal(outcome?.ok, false);
      assert.equal(outcome?.statusCode, 302);
      assert.equal(outcome?.error, 'redirect not followed (HTTP 302 to /elsewhere)');
      assert.deepEqual(rx.requests.map((r) => r.path), ['/hooks']);
    });

    test('a rotated secret signs the very next attempt (no overlap window)', async (t) => {
      const { d, sender } = await setup(t, dialect);
      const rx = await startWebhookReceiver(t, (req) => ({ status: req.n === 1 ? 500 : 200 }));
      const m = await merchantWithHook(d, rx.url);
      await cancelledInvoice(d, m);
      const s = sender();
      await s.runOnce();
      const { apiSecret: fresh } = await rotateSecret(d.common.db, d.common.box, m.id);
      await s.runOnce();
      const [a, b] = rx.requests;
      assert.equal(verifyWebhook({ apiSecret: m.apiSecret, rawBody: a!.rawBody, signature: signatureOf(a!) }).ok, true);
      assert.equal(verifyWebhook({ apiSecret: fresh, rawBody: b!.rawBody, signature: signatureOf(b!) }).ok, true);
      assert.deepEqual(verifyWebhook({ apiSecret: m.apiSecret, rawBody: b!.rawBody, signature: signatureOf(b!) }), { ok: false, reason: 'mismatch' });
    });

    test('a daemon restarted mid-schedule still delivers: the schedule lives in the database', async (t) => {
      const { d } = await setup(t, dialect, { retryScheduleSeconds: [1.5] });
      const rx = await startWebhookReceiver(t, (req) => ({ status: req.n === 1 ? 500 : 200 }));
      const m = await merchantWithHook(d, rx.url);
      await cancelledInvoice(d, m);
      const open = () =>
        openCommon({
          env: { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent', CHAINGATE_PORT: '0', CHAINGATE_METRICS_PORT: '0' },
          overrides: { rateLimit: { enabled: false }, webhooks: { ...FAST, retryScheduleSeconds: [1.5] } },
        });
      const first = await startDaemon(await open(), { schedule: false, webhooks: true });
      assert.ok(first.webhooks);
      await rx.waitFor(1);
      await eventually(async () => ((await d.common.db.em().find(WebhookAttempt, {})).length === 1 ? true : undefined));
      await first.stop();
      assert.equal(rx.requests.length, 1);
      const [pending] = await d.common.db.em().find(WebhookDelivery, {});
      assert.equal(pending!.state, 'PENDING');
      assert.ok(pending!.nextAttemptAt! > new Date(), 'the retry is scheduled in the future');

      const second = await startDaemon(await open(), { schedule: false, webhooks: true });
      t.after(() => second.stop());
      await rx.waitFor(2, 10_000);
      assert.ok(rx.requests[1]!.receivedAt - rx.requests[0]!.receivedAt >= 1300, 'the retry waited for its time');
      const done = await eventually(async () => {
        const row = await d.common.db.em().findOneOrFail(WebhookDelivery, { id: pending!.id });
        return row.state === 'DELIVERED' ? row : undefined;
      });
      assert.equal(done.attemptCount, 2);
      assert.equal(rx.requests[0]!.headers['x-webhook-id'], rx.requests[1]!.headers['x-webhook-id']);
      await second.stop();
    });

    test('a delivery leased by a sender that died is taken over when the lease runs out', async (t) => {
      const { d, sender } = await setup(t, dialect);
      const rx = await startWebhookReceiver(t);
      const m = await merchantWithHook(d, rx.url);
      await cancelledInvoice(d, m);
      const [taken] = await claimDueDeliveries(d.common.db, { owner: 'dead-sender', limit: 10, leaseMs: 60_000 });
      assert.ok(taken);
      const s = sender();
      assert.deepEqual(await s.runOnce(), [], 'a live lease is respected');
      await d.common.db.em().nativeUpdate(WebhookDelivery, { id: taken }, { leaseUntil: new Date(Date.now() - 1) });
      const [outcome] = await s.runOnce();
      assert.equal(outcome?.ok, true);
      assert.equal(rx.requests.length, 1);
    });

    test('replay: a new delivery linked to the original, same event id and bytes; --failed replays what gave up', async (t) => {
      const { d, sender } = await setup(t, dialect, { maxAttempts: 1 });
      let status = 200;
      const rx = await startWebhookReceiver(t, () => ({ status }));
      const m = await merchantWithHook(d, rx.url);
      await cancelledInvoice(d, m);
      const s = sender();
      const [first] = await s.runOnce();
      assert.equal(first?.ok, true);
      const replay = await replayEvent(d.common.db, first!.eventId);
      assert.deepEqual(replay, { eventId: first!.eventId, deliveryId: replay.deliveryId, replayOf: first!.deliveryId });
      await assert.rejects(replayEvent(d.common.db, first!.eventId), (err: Error) => err instanceof UsageError && /already has a delivery in progress/.test(err.message));
      const [again] = await s.runOnce();
      assert.equal(again?.deliveryId, replay.deliveryId);
      assert.equal(again?.ok, true);
      assert.equal(rx.requests.length, 2);
      assert.equal(rx.requests[0]!.headers['x-webhook-id'], rx.requests[1]!.headers['x-webhook-id']);
      assert.ok(rx.requests[0]!.rawBody.equals(rx.requests[1]!.rawBody));
      const ds = await deliveriesOf(d, first!.eventId);
      assert.deepEqual(ds.map((x) => [x.id, x.replayOf ?? null, x.state]), [[first!.deliveryId, null, 'DELIVERED'], [replay.deliveryId, first!.deliveryId, 'DELIVERED']]);
      await assert.rejects(replayEvent(d.common.db, 'no-such-event'), /no webhook event with id "no-such-event"/);

      // Two more events fail for good; --failed replays exactly those, once.
      status = 500;
      const since = new Date();
      await cancelledInvoice(d, m);
      await cancelledInvoice(d, m);
      assert.equal((await s.runOnce()).filter((o) => o.state === 'FAILED').length, 2);
      assert.equal((await listEvents(d.common.db, { failed: true, limit: 10 })).length, 2);
      assert.equal((await replayFailed(d.common.db, { since: new Date(Date.now() + 60_000) })).replayed.length, 0, '--since filters by event time');
      const res = await replayFailed(d.common.db, { since });
      assert.equal(res.replayed.length, 2);
      assert.equal((await replayFailed(d.common.db, { since })).replayed.length, 0, 'replays in progress are not replayed twice');
      status = 200;
      assert.deepEqual((await s.runOnce()).map((o) => o.state), ['DELIVERED', 'DELIVERED']);
      assert.equal((await listEvents(d.common.db, { failed: true, limit: 10 })).length, 0);
      const listed = await listEvents(d.common.db, { merchantId: m.id, limit: 10 });
      assert.equal(listed.length, 3);
      assert.ok(listed.every((e) => e.state === 'DELIVERED'));
      assert.deepEqual(listed[0]!.deliveries.map((x) => x.attempts.length), [1, 1]);
    });

    test('SSRF guard at delivery: a private destination is a failed attempt and nothing is sent', async (t) => {
      const { d, sender } = await setup(t, dialect, { allowPrivateNetworks: false, maxAttempts: 1 });
      const rx = await startWebhookReceiver(t);
      const urls = [rx.url, `http://localhost:${rx.port}/hooks`, `http://[::1]:${rx.port}/hooks`, `http://[::ffff:127.0.0.1]:${rx.port}/hooks`];
      for (const url of urls) await cancelledInvoice(d, await merchantWithHook(d, url));
      const outcomes = await sender().runOnce();
      assert.equal(outcomes.length, urls.length);
      for (const o of outcomes) {
        assert.equal(o.ok, false);
        assert.equal(o.state, 'FAILED');
        assert.match(o.error ?? '', /^refused: .*loopback address; webhooks are only sent to public addresses/);
      }
      assert.equal(rx.requests.length, 0, 'the receiver got nothing');
      const failed = await listEvents(d.common.db, { failed: true, limit: 10 });
      assert.equal(failed.length, urls.length);
      assert.match(failed[0]!.deliveries[0]!.attempts[0]!.error ?? '', /^refused/);
    });

    test('events for each state change: cancel, payment expiry, invoice expiry; subscriptions choose what is sent', async (t) => {
      const { d, sender } = await setup(t, dialect);
      const rx = await startWebhookReceiver(t);
      const all = await merchantWithHook(d, rx.url);
      const picky = await merchantWithHook(d, rx.url.replace('/hooks', '/picky'));
      await d.common.db.em().nativeUpdate(MerchantPoint, { id: picky.id }, { webhookEvents: ['invoice.cancelled'] });
      await d.seedPool('ethereum', evmAddresses(4));

      for (const m of [all, picky]) {
        await cancelledInvoice(d, m);
        const inv = await d.signed('POST', '/api/v1/invoices', { orderId: 'exp', amount: '1000', currency: 'USD' }, { merchant: m });
        const co = await d.signed('POST', `/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDT' }, { merchant: m });
        assert.equal(co.status, 201, co.text);
        const past = new Date(Date.now() - 1000);
        await d.common.db.em().nativeUpdate(Payment, { id: co.json.data.payment.id }, { expiresAt: past });
        await d.common.db.em().nativeUpdate(Invoice, { id: inv.json.data.id }, { expiresAt: past });
      }
      await sweepExpired(d.common.db);
      const s = sender();
      s.start();
      await rx.waitFor(4);
      await new Promise((r) => setTimeout(r, 200));
      const byPath = (p: string) => rx.requests.filter((r) => r.path === p).map((r) => JSON.parse(r.rawBody.toString('utf8')));
      const toAll = byPath('/hooks');
      assert.deepEqual(toAll.map((e) => e.type).sort(), ['invoice.cancelled', 'invoice.expired', 'payment.expired']);
      const expired = toAll.find((e) => e.type === 'payment.expired');
      assert.equal(expired.data.payment.status, 'EXPIRED');
      for (const key of ['amount', 'received_amount', 'expected_amount', 'amount_difference', 'receivedAmount', 'expectedAmount', 'referenceId', 'invoice']) {
        assert.ok(key in expired.data.payment, key);
      }
      assert.equal(expired.data.payment.received_amount, '0');
      assert.equal(toAll.find((e) => e.type === 'invoice.expired').data.invoice.status, 'EXPIRED');
      assert.deepEqual(byPath('/picky').map((e) => e.type), ['invoice.cancelled']);
      // The picky point's other events are recorded (replayable) but had no delivery.
      const pickyEvents = await listEvents(d.common.db, { merchantId: picky.id, limit: 10 });
      assert.deepEqual(pickyEvents.map((e) => [e.type, e.state]).sort(), [['invoice.cancelled', 'DELIVERED'], ['invoice.expired', 'NONE'], ['payment.expired', 'NONE']]);
    });

    test('payment.completed recorded the way the indexer does (recordEvent + paymentEventData in its transaction) is delivered', async (t) => {
      const { d, sender } = await setup(t, dialect);
      const rx = await startWebhookReceiver(t);
      const m = await merchantWithHook(d, rx.url);
      await d.seedPool('ethereum', evmAddresses(1, 3));
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: 'paid', amount: '1000', currency: 'USD' }, { merchant: m });
      const co = await d.signed('POST', `/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDT' }, { merchant: m });
      const paymentId = co.json.data.payment.id as string;
      await d.common.db.write(async (x) => {
        await x.run(`update payment set status = 'COMPLETED', received_amount = expected_amount, completed_at = ? where id = ?`, [new Date(), paymentId]);
        const payment = await paymentById(x, paymentId);
        const invoice = await invoiceById(x, payment.invoiceId);
        await recordEvent(x, { merchantId: m.id, type: 'payment.completed', paymentId, invoiceId: invoice.id, data: paymentEventData(payment, invoice, '0') });
      });
      sender().start();
      const [req] = await rx.waitFor(1);
      const event = JSON.parse(req!.rawBody.toString('utf8'));
      assert.equal(event.type, 'payment.completed');
      assert.equal(event.data.payment.id, paymentId);
      assert.equal(event.data.payment.status, 'COMPLETED');
      assert.equal(event.data.payment.amount, event.data.payment.received_amount);
      const row = await d.common.db.em().findOneOrFail(WebhookEvent, { id: event.id });
      assert.equal(row.paymentId, paymentId);
      assert.equal(row.payload, req!.rawBody.toString('utf8'), 'the stored payload is the exact body sent');
    });
  });
}
