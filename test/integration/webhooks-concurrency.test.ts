import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openCommon } from '../../src/cli/context.ts';
import type { Common } from '../../src/common.ts';
import { WebhookAttempt } from '../../src/store/entities/webhook-attempt.entity.ts';
import { WebhookDelivery } from '../../src/store/entities/webhook-delivery.entity.ts';
import { recordEvent } from '../../src/store/events.ts';
import { createMerchant } from '../../src/store/merchants.ts';
import { migrate } from '../../src/store/migrate.ts';
import { createWebhookSender } from '../../src/webhooks/sender.ts';
import { postWebhook } from '../../src/webhooks/post.ts';
import { createTestDatabase, DIALECTS, skipUnless } from '../helpers/databases.ts';
import { eventually, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

// Several senders on one database, each with its own connection pool (as separate processes
// have): every attempt is made by exactly one of them.

const EVENTS = 40;

for (const dialect of DIALECTS) {
  describe(`webhook senders sharing one ${dialect} database`, { skip: await skipUnless(dialect) }, () => {
    test('two senders deliver each attempt exactly once, and both take part', async (t) => {
      const tdb = await createTestDatabase(dialect);
      const open = (): Promise<Common> =>
        openCommon({
          env: { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'c'.repeat(64), CHAINGATE_LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent' },
          overrides: { webhooks: { allowPrivateNetworks: true, retryScheduleSeconds: [0.02], retryJitter: 0, pollIntervalMs: 10, concurrency: 4, timeoutMs: 2000, leaseSeconds: 10 } },
          skipMigrationCheck: true,
        });
      const a = await open();
      await migrate(a.db);
      const b = await open();
      t.after(async () => {
        await a.close();
        await b.close();
        await tdb.drop();
      });

      // Each event's first attempt gets a 500, its second a 200: two attempts per event in all.
      const seen = new Map<string, string[]>();
      const rx = await startWebhookReceiver(t, (req) => {
        const id = String(req.headers['x-webhook-id']);
        const list = seen.get(id) ?? [];
        list.push(String(req.headers['x-webhook-attempt']));
        seen.set(id, list);
        return { status: list.length === 1 ? 500 : 200, delayMs: 5 };
      });
      const { merchant } = await createMerchant(a.db, a.box, { name: 'Busy Shop', webhookUrl: rx.url });
      for (let i = 0; i < EVENTS; i++) {
        await a.db.write((x) => recordEvent(x, { merchantId: merchant.id, type: 'invoice.cancelled', invoiceId: null, data: { n: i } }));
      }

      const made = { a: 0, b: 0 };
      const senderA = createWebhookSender({ common: a, post: (input) => {
        made.a++;
        return postWebhook(input);
      } });
      const senderB = createWebhookSender({ common: b, post: (input) => {
        made.b++;
        return postWebhook(input);
      } });
      senderA.start();
      senderB.start();
      try {
        await eventually(async () => ((await a.db.em().count(WebhookDelivery, { state: 'DELIVERED' })) === EVENTS ? true : undefined), 30_000);
      } finally {
        await Promise.all([senderA.stop(), senderB.stop()]);
      }

      assert.equal(seen.size, EVENTS);
      for (const [id, attempts] of seen) assert.deepEqual(attempts, ['1', '2'], `event ${id}`);
      assert.equal(rx.requests.length, EVENTS * 2);
      assert.equal(made.a + made.b, EVENTS * 2);
      assert.ok(made.a > 0 && made.b > 0, `both senders worked (a=${made.a}, b=${made.b})`);
      const attempts = await a.db.em().find(WebhookAttempt, {}, { populate: ['delivery'] });
      assert.equal(attempts.length, EVENTS * 2);
      const perDelivery = new Map<string, number[]>();
      for (const at of attempts) perDelivery.set(at.delivery.id, [...(perDelivery.get(at.delivery.id) ?? []), at.attemptNumber ?? 0].sort());
      for (const numbers of perDelivery.values()) assert.deepEqual(numbers, [1, 2]);
    });
  });
}
