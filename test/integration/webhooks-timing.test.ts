import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebhookDelivery } from '../../src/store/entities/webhook-delivery.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { emitPaymentEvent } from '../../src/store/lifecycle.ts';
import { createWebhookSender } from '../../src/webhooks/sender.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon } from '../helpers/daemon.ts';
import { eventually, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

// A chain's clock is not the server's: a block stamped ahead of it (clock skew, producers that stamp
// early, a local chain that mined a burst) is the event's createdAt, but the first attempt is due
// when the event is recorded, by the server's clock (docs/webhooks.md).

const HOUR = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`webhook timing (${dialect})`, { skip: await skipUnless(dialect) }, () => {
    test('an event whose fact time is an hour ahead of the server is delivered at once, carrying that time', async (t) => {
      const later: (() => Promise<void> | void)[] = [];
      const d = await startTestDaemon({ after: (fn) => later.push(fn) }, dialect, {
        webhooks: { allowPrivateNetworks: true, retryScheduleSeconds: [0], retryJitter: 0, pollIntervalMs: 20, timeoutMs: 2000, leaseSeconds: 8 },
      });
      const latencies: number[] = [];
      const sender = createWebhookSender({ common: d.common, onDelivered: (ms) => latencies.push(ms) });
      t.after(async () => {
        await sender.stop();
        for (const fn of later) await fn();
      });
      const rx = await startWebhookReceiver(t);
      const merchant = await d.createMerchant({ name: 'Hooked Shop', webhookUrl: rx.url });
      await d.seedPool('ethereum', evmAddresses(1));
      const invoice = await d.signed('POST', '/api/v1/invoices', { orderId: 'ahead', amount: '1000', currency: 'USD' }, { merchant });
      const checkout = await d.signed('POST', `/api/v1/invoices/${invoice.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDT' }, { merchant });
      assert.equal(checkout.status, 201, checkout.text);
      const paymentId = checkout.json.data.payment.id as string;
      sender.start();

      // As the ledger settles a payment: COMPLETED at the deciding block's time, its event in the same transaction.
      const blockTime = new Date(Date.now() + HOUR);
      const recordedAt = Date.now();
      await d.common.db.write(async (x) => {
        await x.run(`update payment set status = 'COMPLETED', completed_at = ?, confirmations = 12 where id = ?`, [blockTime, paymentId]);
        await emitPaymentEvent(x, paymentId, 'payment.completed', blockTime);
      });

      const [req] = await rx.waitFor(1, 5000);
      assert.ok(req!.receivedAt - recordedAt < 5000, `delivered ${req!.receivedAt - recordedAt} ms after it was recorded`);
      const event = JSON.parse(req!.rawBody.toString('utf8'));
      assert.equal(event.type, 'payment.completed');
      assert.equal(event.createdAt, blockTime.toISOString(), 'createdAt is the fact time');
      assert.equal(event.data.payment.completedAt, blockTime.toISOString());

      const row = await d.common.db.em().findOneOrFail(WebhookEvent, { id: event.id });
      assert.equal(row.createdAt.toISOString(), blockTime.toISOString());
      const [delivery] = await d.common.db.em().find(WebhookDelivery, { event: event.id });
      assert.ok(delivery!.createdAt.getTime() <= Date.now(), 'the delivery is stamped by the server clock');
      assert.ok(delivery!.createdAt.getTime() >= recordedAt - 1000);
      // The delivered-latency metric counts from the recording, never a negative hour.
      const latency = await eventually(() => latencies[0], 5000);
      assert.ok(latency >= 0 && latency < 5000, `latency ${latency} ms`);
    });
  });
}
