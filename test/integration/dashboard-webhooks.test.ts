import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyWebhook } from '../../src/sdk/verify-webhook.ts';
import type { LogAttempt, LogEvent, WebhookLog } from '../../src/app/dashboard-webhooks.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import type { DashboardClient } from '../helpers/dashboard.ts';
import { cancelledInvoice, HOOKS, startDashboardShop } from '../helpers/dashboard-shop.ts';
import { eventually, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

// A point's webhooks in the dashboard, against a real `serve` (its own webhook sender) on each
// database and a local receiver that fails, then succeeds: the log's attempts with their answers,
// the "failing since" state appearing and clearing, Redeliver (the replay of `webhooks replay`)
// arriving signed, the test event, keyset pages, and a viewer who can only read.

/** A hostile answer: markup the page must show as text, longer than the 2 KB the log keeps. */
const HOSTILE = `<script>alert("hooked")</script><img src=x onerror=alert(1)>${'z'.repeat(3000)}`;

async function logOf(c: DashboardClient, pointId: string, query = ''): Promise<WebhookLog> {
  const res = await c.get(`/dashboard/points/${pointId}/webhooks${query}`, { Accept: 'application/json' });
  assert.equal(res.status, 200, res.text);
  return (JSON.parse(res.text) as { data: WebhookLog }).data;
}

const attemptsOf = (e: LogEvent): LogAttempt[] => e.deliveries.flatMap((d) => d.attempts);

for (const dialect of DIALECTS) {
  describe(`the dashboard's webhook log on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('failed attempts with answer, duration and next retry; failing since appears and clears; redeliver and test event arrive signed; a viewer only reads', async (t) => {
      let failing = true;
      const receiver = await startWebhookReceiver(t, () => (failing ? { status: 503, body: HOSTILE } : { status: 200, body: 'thanks' }));
      const shop = await startDashboardShop(t, dialect, { webhooks: HOOKS });
      const point = await shop.point('Hook Shop', receiver.url);
      const other = await shop.point('Other Shop');
      const owner = await shop.user('owner@shop.example', 'owner');
      const viewer = await shop.user('viewer@shop.example', 'viewer', [point.id]);

      const before = await logOf(owner, point.id);
      assert.equal(before.endpoint.url, receiver.url);
      assert.equal(before.endpoint.failingSince, null);
      assert.deepEqual(before.events, []);

      // The receiver fails twice (at least): the log shows each failed attempt as it happened.
      await cancelledInvoice(shop.url, point);
      await receiver.waitFor(2);
      const failingLog = await eventually(async () => {
        const log = await logOf(owner, point.id);
        return attemptsOf(log.events[0]!).length >= 2 ? log : undefined;
      });
      const event = failingLog.events[0]!;
      assert.equal(event.type, 'invoice.cancelled');
      assert.equal(event.requestBody, receiver.requests[0]!.rawBody.toString('utf8'), 'the request body is the bytes sent');
      const delivery = event.deliveries[0]!;
      assert.equal(delivery.replayOf, null);
      const attempts = delivery.attempts;
      for (const [i, a] of attempts.entries()) {
        assert.equal(a.number, i + 1);
        assert.equal(a.statusCode, 503);
        assert.equal(a.ok, false);
        assert.equal(a.responseBody, HOSTILE.slice(0, 2048), 'the first 2 KB of the answer');
        assert.ok(Number.isInteger(a.durationMs) && a.durationMs >= 0);
        const later = attempts[i + 1];
        if (later) assert.equal(a.nextRetryAt, later.at, 'an earlier attempt: when it was retried');
      }
      if (delivery.state === 'PENDING') {
        assert.equal(attempts.at(-1)!.nextRetryAt, delivery.nextAttemptAt, 'the last attempt: when the next is due');
        assert.ok(Date.parse(delivery.nextAttemptAt!) > Date.parse(attempts.at(-1)!.at));
      }
      assert.equal(failingLog.endpoint.failingSince, attempts[0]!.at, 'failing since the first failure');
      assert.equal(failingLog.endpoint.lastSuccessAt, null);
      assert.ok(failingLog.endpoint.failedAttempts >= 2);

      // The page shows the state and the hostile answer only as text.
      const pageHtml = (await owner.get(`/dashboard/points/${point.id}/webhooks`)).text;
      assert.match(pageHtml, /id="endpoint-state" class="error failing">Failing since <time datetime="[^"]+">/);
      assert.ok(!pageHtml.includes('<script>alert'), 'no markup from the receiver');
      assert.ok(pageHtml.includes('&#60;script&#62;alert(&#34;hooked&#34;)&#60;/script&#62;'));
      assert.ok(pageHtml.includes('>Send test event</button>'));
      // The point page links to the log.
      assert.ok((await owner.get(`/dashboard/points/${point.id}`)).text.includes(`href="/dashboard/points/${point.id}/webhooks"`));

      // The receiver recovers: the next retry is delivered, and the state clears.
      failing = false;
      const recovered = await eventually(async () => {
        const log = await logOf(owner, point.id);
        return log.events[0]!.deliveries[0]!.state === 'DELIVERED' ? log : undefined;
      }, 15_000);
      const done = recovered.events[0]!.deliveries[0]!;
      assert.equal(done.attempts.at(-1)!.statusCode, 200);
      assert.equal(done.attempts.at(-1)!.responseBody, 'thanks');
      assert.equal(done.attempts.at(-1)!.nextRetryAt, null);
      assert.equal(recovered.endpoint.failingSince, null);
      assert.equal(recovered.endpoint.lastSuccessAt, done.attempts.at(-1)!.at);
      assert.match((await owner.get(`/dashboard/points/${point.id}/webhooks`)).text, /id="endpoint-state" class="ok">Working/);

      // A viewer reads the log but has no button, and the endpoints refuse it (coded 403).
      const seen = await viewer.get(`/dashboard/points/${point.id}/webhooks`);
      assert.equal(seen.status, 200);
      assert.ok(seen.text.includes('invoice.cancelled'));
      assert.ok(!seen.text.includes('Redeliver') && !seen.text.includes('Send test event'), 'no button for a viewer');
      const refused = await viewer.postJson(`/dashboard/api/points/${point.id}/webhooks/redeliver`, { delivery: done.id });
      assert.equal(refused.status, 403);
      assert.equal(refused.json.error.code, 'FORBIDDEN');
      const refusedForm = await viewer.post(`/dashboard/api/points/${point.id}/webhooks/redeliver`, { delivery: done.id });
      assert.equal(refusedForm.status, 403);
      assert.equal((await viewer.postJson(`/dashboard/api/points/${point.id}/webhooks/test-event`, {})).json.error.code, 'FORBIDDEN');
      assert.equal((await viewer.get(`/dashboard/points/${other.id}/webhooks`, { Accept: 'application/json' })).status, 404, 'a point not granted does not exist');
      const requestsSoFar = receiver.requests.length;

      // Redeliver: a new delivery of the same event, linked to the original, sent by serve's sender, signed.
      await owner.get(`/dashboard/points/${point.id}/webhooks`);
      const redo = await owner.post(`/dashboard/api/points/${point.id}/webhooks/redeliver`, { delivery: done.id });
      assert.equal(redo.status, 303, redo.text);
      const location = new URL(redo.headers.get('location')!, shop.url);
      assert.equal(location.searchParams.get('event'), event.id);
      const newDelivery = location.searchParams.get('redelivered')!;
      assert.notEqual(newDelivery, done.id);
      const redelivered = (await receiver.waitFor(requestsSoFar + 1))[requestsSoFar]!;
      assert.equal(redelivered.headers['x-webhook-id'], event.id, 'the same event');
      assert.equal(redelivered.rawBody.toString('utf8'), event.requestBody, 'the same bytes');
      assert.equal(verifyWebhook({ apiSecret: point.apiSecret, rawBody: redelivered.rawBody, signature: redelivered.headers['x-webhook-signature'] }).ok, true, 'signed with the point secret');
      const afterRedo = await eventually(async () => {
        const log = await logOf(owner, point.id, `?event=${event.id}`);
        const d = log.events[0]!.deliveries.find((x) => x.id === newDelivery);
        return d?.state === 'DELIVERED' ? log : undefined;
      });
      assert.equal(afterRedo.events.length, 1);
      assert.deepEqual(afterRedo.events[0]!.deliveries.map((d) => [d.id, d.replayOf]), [[done.id, null], [newDelivery, done.id]]);
      const page = (await owner.get(`/dashboard/points/${point.id}/webhooks?event=${event.id}&redelivered=${newDelivery}`)).text;
      assert.ok(page.includes(`Redelivery ${newDelivery} queued`));
      assert.ok(page.includes(`redelivery of <a href="#delivery-${done.id}">`));
      // Through the same use case as the CLI: `webhooks list --json` sees the linked delivery too.
      const listed = JSON.parse((await runCli(['webhooks', 'list', '--merchant', point.id, '--json'], shop.env)).stdout) as { id: string; deliveries: { id: string; replayOf: string | null }[] }[];
      assert.deepEqual(listed.find((e) => e.id === event.id)!.deliveries.map((d) => d.replayOf), [null, done.id]);
      // A delivery of another point, or garbage, is not found; the audit log has the redelivery.
      assert.equal((await owner.postJson(`/dashboard/api/points/${other.id}/webhooks/redeliver`, { delivery: done.id })).status, 404);
      assert.equal((await owner.postJson(`/dashboard/api/points/${point.id}/webhooks/redeliver`, { delivery: '../x' })).status, 404);
      assert.equal((await owner.postJson(`/dashboard/api/points/${point.id}/webhooks/redeliver`, [1])).status, 400);
      const audit = JSON.parse((await runCli(['audit', 'list', '--json'], shop.env)).stdout) as { action: string; pointId: string; details: { of: string; deliveryId: string } }[];
      const row = audit.find((r) => r.action === 'webhook.redeliver')!;
      assert.equal(row.pointId, point.id);
      assert.deepEqual([row.details.of, row.details.deliveryId], [done.id, newDelivery]);

      // The test event: delivered now, and in the log as the newest event.
      const ping = await owner.postJson(`/dashboard/api/points/${point.id}/webhooks/test-event`, {});
      assert.equal(ping.status, 200, JSON.stringify(ping.json));
      assert.equal(ping.json.data.delivered, true);
      assert.equal(ping.json.data.statusCode, 200);
      const pings = receiver.requests.filter((r) => r.headers['x-webhook-event'] === 'ping');
      assert.equal(pings.length, 1);
      assert.equal(verifyWebhook({ apiSecret: point.apiSecret, rawBody: pings[0]!.rawBody, signature: pings[0]!.headers['x-webhook-signature'] }).ok, true);
      const withPing = await logOf(owner, point.id);
      assert.equal(withPing.events[0]!.type, 'ping');
      assert.equal(withPing.events[0]!.deliveries[0]!.id, ping.json.data.deliveryId);
      assert.equal(withPing.events[0]!.deliveries[0]!.attempts[0]!.statusCode, 200);
      const formPing = await owner.post(`/dashboard/api/points/${point.id}/webhooks/test-event`, {});
      assert.equal(formPing.status, 200);
      assert.match(formPing.text, /id="test-result" role="status">[\s\S]*Delivered: HTTP 200/);
    });

    test('keyset pages stay stable while events arrive; a bad cursor is a coded 400', async (t) => {
      const receiver = await startWebhookReceiver(t);
      const shop = await startDashboardShop(t, dialect, { webhooks: HOOKS });
      const point = await shop.point('Busy Shop', receiver.url);
      const owner = await shop.user('owner@shop.example', 'owner');
      for (let i = 0; i < 23; i++) await cancelledInvoice(shop.url, point);
      const first = await logOf(owner, point.id);
      assert.equal(first.events.length, 20);
      assert.ok(first.next);
      const second = await logOf(owner, point.id, `?before=${first.next}`);
      assert.equal(second.events.length, 3);
      assert.equal(second.next, null);
      const ids = [...first.events, ...second.events].map((e) => e.id);
      assert.equal(new Set(ids).size, 23, 'no event twice');
      const times = [...first.events, ...second.events].map((e) => e.createdAt);
      assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
      // New events do not shift the older page.
      await cancelledInvoice(shop.url, point);
      await cancelledInvoice(shop.url, point);
      assert.deepEqual((await logOf(owner, point.id, `?before=${first.next}`)).events.map((e) => e.id), second.events.map((e) => e.id));
      const newest = (await owner.get(`/dashboard/points/${point.id}/webhooks`)).text;
      assert.ok(newest.includes(`?before=${(await logOf(owner, point.id)).next}`), 'the page links the older page');
      assert.ok(!newest.includes('Newest events'));
      assert.ok((await owner.get(`/dashboard/points/${point.id}/webhooks?before=${first.next}`)).text.includes('>Newest events</a>'));
      for (const bad of ['?before=yesterday', '?before=1-..%2F', '?event=%3Cscript%3E']) {
        const res = await owner.get(`/dashboard/points/${point.id}/webhooks${bad}`, { Accept: 'application/json' });
        assert.equal(res.status, 400, bad);
        assert.equal(JSON.parse(res.text).error.code, 'VALIDATION_ERROR');
      }
      assert.equal((await owner.get(`/dashboard/points/${point.id}/webhooks?before=yesterday`)).status, 400, 'a page too');
    });
  });
}
