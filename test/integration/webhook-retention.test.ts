import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { WebhookAttempt } from '../../src/store/entities/webhook-attempt.entity.ts';
import { WebhookDelivery } from '../../src/store/entities/webhook-delivery.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { purgeOldWebhooks } from '../../src/webhooks/retention.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startTestDaemon } from '../helpers/daemon.ts';

for (const dialect of DIALECTS) {
  describe(`webhook retention on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('old events with nothing left to deliver go, with their deliveries and attempts; pending ones stay', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const shop = await d.createMerchant({ name: 'Hooked', webhookUrl: 'http://127.0.0.1:9/hooks' });
      for (let i = 0; i < 3; i++) {
        const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `o${i}`, amount: '1', currency: 'USD' }, { merchant: shop });
        await d.signed('DELETE', `/api/v1/invoices/${inv.json.data.id}`, undefined, { merchant: shop });
      }
      const em = d.common.db.em();
      const events = await em.find(WebhookEvent, { type: 'invoice.cancelled' }, { orderBy: { createdAt: 'asc' } });
      assert.equal(events.length, 3);
      const [oldDone, oldPending, recentDone] = events as [WebhookEvent, WebhookEvent, WebhookEvent];
      const day = 86_400_000;
      await em.nativeUpdate(WebhookEvent, { id: { $in: [oldDone.id, oldPending.id] } }, { createdAt: new Date(Date.now() - 100 * day) });
      await em.nativeUpdate(WebhookDelivery, { event: { $in: [oldDone.id, recentDone.id] } }, { state: 'DELIVERED', deliveredAt: new Date() });
      const delivered = await em.findOneOrFail(WebhookDelivery, { event: oldDone.id });
      em.create(WebhookAttempt, { delivery: delivered, attemptedAt: new Date(), statusCode: 200, durationMs: 5, responseBody: 'ok', error: null });
      await em.flush();

      assert.equal(await purgeOldWebhooks(d.common.db, 90), 1);
      const left = d.common.db.em();
      assert.deepEqual((await left.find(WebhookEvent, {}, { orderBy: { createdAt: 'asc' } })).map((e) => e.id).sort(), [oldPending.id, recentDone.id].sort());
      assert.equal(await left.count(WebhookDelivery, {}), 2);
      assert.equal(await left.count(WebhookAttempt, {}), 0);
      assert.equal(await purgeOldWebhooks(d.common.db, 0), 0, '0 keeps everything');
    });
  });
}
