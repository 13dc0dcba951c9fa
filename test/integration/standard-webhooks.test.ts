import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { createWebhookSender } from '../../src/webhooks/sender.ts';
import { rotateSecret } from '../../src/store/merchants.ts';
import { standardWebhookSecret, verifyWebhook } from '../../src/sdk/verify-webhook.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { eventually, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

// Merchants verify deliveries with a library they already use: the `standardwebhooks` package (the
// Standard Webhooks reference implementation) checks the webhook-id / webhook-timestamp /
// webhook-signature headers of real deliveries, keyed with the documented form of the apiSecret;
// the X-Webhook-Signature of chaingate's own SDK verifier keeps working beside it.

test('real deliveries verify with the standardwebhooks package and with the SDK verifier; a retry keeps its webhook-id; tampering and a rotated secret fail', async (t) => {
  const receiver = await startWebhookReceiver(t);
  const d = await startTestDaemon(t, 'sqlite', { webhooks: { allowPrivateNetworks: true, retryScheduleSeconds: [0], retryJitter: 0, timeoutMs: 500, leaseSeconds: 6 } });
  const merchant = await d.createMerchant({ name: 'Std Shop', webhookUrl: receiver.url });
  const sender = createWebhookSender({ common: d.common });
  t.after(() => sender.stop());
  // First attempt refused, the retry accepted: two deliveries of one event.
  receiver.behave((req) => ({ status: req.n === 1 ? 500 : 200 }));
  const inv = await d.signed('POST', '/api/v1/invoices', { orderId: 'std-1', amount: '2500', currency: 'USD' }, { merchant });
  await d.signed('DELETE', `/api/v1/invoices/${inv.json.data.id}`, undefined, { merchant });
  await eventually(async () => {
    await sender.runOnce();
    return receiver.requests.length >= 2 ? true : undefined;
  });
  const [first, second] = receiver.requests;
  const headersOf = (r: typeof first) => Object.fromEntries(Object.entries(r!.headers).map(([k, v]) => [k, String(v)]));
  assert.equal(first!.headers['webhook-id'], second!.headers['webhook-id'], 'the same message id on every attempt');

  const wh = new Webhook(standardWebhookSecret(merchant.apiSecret));
  const event = wh.verify(second!.rawBody.toString(), headersOf(second)) as { type: string; data: { invoice: { id: string } } };
  assert.equal(event.type, 'invoice.cancelled');
  assert.equal(event.data.invoice.id, inv.json.data.id);
  assert.equal(verifyWebhook({ apiSecret: merchant.apiSecret, rawBody: second!.rawBody, signature: String(second!.headers['x-webhook-signature']) }).ok, true);

  const tampered = Buffer.from(second!.rawBody.toString().replace('invoice.cancelled', 'invoice.paid'));
  assert.throws(() => wh.verify(tampered.toString(), headersOf(second)), WebhookVerificationError);
  const { apiSecret: rotated } = await rotateSecret(d.common.db, d.common.box, merchant.id);
  assert.throws(() => new Webhook(standardWebhookSecret(rotated)).verify(second!.rawBody.toString(), headersOf(second)), WebhookVerificationError);
});
