import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { constructWebhookEvent, verifyWebhook, WebhookVerificationError } from '../sdk/verify-webhook.ts';
import { webhookHeaders } from './sign.ts';

const SECRET = 'a'.repeat(64);
const BODY = Buffer.from('{"id":"evt1","type":"payment.completed","data":{"payment":{"amount":"1.5"}}}');

function headersAt(t: number, body = BODY, secret = SECRET) {
  return webhookHeaders({ eventId: 'evt1', eventType: 'payment.completed', apiSecret: secret, body, timestamp: t, attemptNumber: 1 });
}

test('the signature is HMAC-SHA256(apiSecret, "<t>.<raw body>") in lowercase hex, with the headers of the spec', () => {
  const h = headersAt(1_800_000_000);
  const expected = createHmac('sha256', SECRET).update(`1800000000.${BODY.toString()}`).digest('hex');
  assert.equal(h['X-Webhook-Signature'], `t=1800000000,v1=${expected}`);
  assert.equal(h['X-Webhook-Timestamp'], '1800000000');
  assert.equal(h['X-Webhook-Id'], 'evt1');
  assert.equal(h['Content-Type'], 'application/json');
});

test('verifyWebhook accepts the exact bytes within 300 s either way and refuses everything else', () => {
  const t = 1_800_000_000;
  const sig = headersAt(t)['X-Webhook-Signature']!;
  const ok = (over: Partial<Parameters<typeof verifyWebhook>[0]>) => verifyWebhook({ apiSecret: SECRET, rawBody: BODY, signature: sig, now: t, ...over });
  assert.deepEqual(ok({}), { ok: true, timestamp: t });
  assert.deepEqual(ok({ rawBody: BODY.toString('utf8') }), { ok: true, timestamp: t });
  assert.equal(ok({ now: t + 300 }).ok, true);
  assert.equal(ok({ now: t - 300 }).ok, true);
  assert.deepEqual(ok({ now: t + 301 }), { ok: false, reason: 'expired' });
  assert.deepEqual(ok({ now: t - 301 }), { ok: false, reason: 'expired' });
  assert.deepEqual(ok({ rawBody: BODY.toString().replace('1.5', '15') }), { ok: false, reason: 'mismatch' });
  assert.deepEqual(ok({ rawBody: `${BODY.toString()} ` }), { ok: false, reason: 'mismatch' });
  assert.deepEqual(ok({ apiSecret: 'b'.repeat(64) }), { ok: false, reason: 'mismatch' });
  assert.deepEqual(ok({ signature: undefined }), { ok: false, reason: 'missing' });
  assert.deepEqual(ok({ signature: 'v1=abc' }), { ok: false, reason: 'malformed' });
  assert.deepEqual(ok({ signature: `t=${t}` }), { ok: false, reason: 'malformed' });
  assert.deepEqual(ok({ signature: sig.toUpperCase().replace('T=', 't=').replace('V1=', 'v1=') }), { ok: false, reason: 'mismatch' });
  assert.deepEqual(ok({ timestamp: String(t + 1) }), { ok: false, reason: 'malformed' });
  assert.equal(ok({ timestamp: String(t) }).ok, true);
  // A replayed old signature on a new timestamp header does not pass either.
  const old = headersAt(t - 3600)['X-Webhook-Signature']!;
  assert.deepEqual(ok({ signature: old }), { ok: false, reason: 'expired' });
  assert.deepEqual(ok({ signature: old.replace(`t=${t - 3600}`, `t=${t}`) }), { ok: false, reason: 'mismatch' });
});

test('constructWebhookEvent returns the parsed event or throws a WebhookVerificationError', () => {
  const t = Math.floor(Date.now() / 1000);
  const sig = headersAt(t)['X-Webhook-Signature']!;
  const event = constructWebhookEvent({ apiSecret: SECRET, rawBody: BODY, signature: sig });
  assert.equal(event.id, 'evt1');
  assert.throws(() => constructWebhookEvent({ apiSecret: SECRET, rawBody: BODY, signature: sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0') }), (err: unknown) => err instanceof WebhookVerificationError && err.reason === 'mismatch');
});
