import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { IdempotencyRecord } from '../../src/store/entities/idempotency-record.entity.ts';
import { purgeExpiredKeys } from '../../src/store/idempotency.ts';
import { rotateSecret } from '../../src/store/merchants.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

const INVOICE = { orderId: 'order-1', amount: '2500', currency: 'USD' };
const now = () => Math.floor(Date.now() / 1000);
const hex = (s: string) => createHash('sha256').update(s).digest('hex');
const hmac = (secret: string, msg: string) => createHmac('sha256', secret).update(msg).digest('hex');

/** Hand-built request, to pin the canonical string independently of the SDK. */
async function manual(d: TestDaemon, method: string, pathWithQuery: string, lines: string[], headers: Record<string, string>, body?: string) {
  const sig = hmac(d.merchant.apiSecret, lines.join('\n'));
  const res = await fetch(d.url + pathWithQuery, {
    method,
    body,
    headers: { 'X-API-Key': d.merchant.apiKey, 'X-Signature': `t=${lines[0]},v1=${sig}`, ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers },
  });
  return { status: res.status, json: (await res.json()) as { success: boolean; data: any; error: { code: string } } };
}

for (const dialect of DIALECTS) {
  describe(`gateway authentication on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('the seven checks run in the spec order with their codes', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const body = JSON.stringify(INVOICE);
      const code = async (headers: Record<string, string>, method = 'POST') => {
        const res = await d.plain(method, '/api/v1/invoices', method === 'POST' ? body : undefined, headers);
        return [res.status, res.json?.error?.code];
      };
      const good = (await d.signed('POST', '/api/v1/invoices', INVOICE)).status;
      assert.equal(good, 201);
      // 1. no API key (even with every other header wrong)
      assert.deepEqual(await code({ 'X-Signature': 'garbage' }), [401, 'API_KEY_INVALID']);
      // 2. no signature (even with an unknown key: the key is only looked up at step 6)
      assert.deepEqual(await code({ 'X-API-Key': 'unknown' }), [401, 'SIGNATURE_MISSING']);
      // 3. malformed signature, including uppercase hex and a millisecond-free but short digest
      assert.deepEqual(await code({ 'X-API-Key': 'unknown', 'X-Signature': `t=${now()},v1=${'A'.repeat(64)}` }), [401, 'SIGNATURE_INVALID']);
      assert.deepEqual(await code({ 'X-API-Key': 'unknown', 'X-Signature': `t=${now()},v1=${'a'.repeat(63)}` }), [401, 'SIGNATURE_INVALID']);
      assert.deepEqual(await code({ 'X-API-Key': 'unknown', 'X-Signature': `v1=${'a'.repeat(64)},t=${now()}` }), [401, 'SIGNATURE_INVALID']);
      // 4. expired before the idempotency key and the key lookup; a millisecond timestamp is expired
      assert.deepEqual(await code({ 'X-API-Key': 'unknown', 'X-Signature': `t=${now() - 301},v1=${'a'.repeat(64)}` }), [401, 'SIGNATURE_EXPIRED']);
      assert.deepEqual(await code({ 'X-API-Key': 'unknown', 'X-Signature': `t=${Date.now()},v1=${'a'.repeat(64)}` }), [401, 'SIGNATURE_EXPIRED']);
      // 5. write without Idempotency-Key, before the key lookup
      assert.deepEqual(await code({ 'X-API-Key': 'unknown', 'X-Signature': `t=${now()},v1=${'a'.repeat(64)}` }), [400, 'IDEMPOTENCY_KEY_REQUIRED']);
      // a GET needs none
      assert.deepEqual(await code({ 'X-API-Key': 'unknown', 'X-Signature': `t=${now()},v1=${'a'.repeat(64)}` }, 'GET'), [401, 'API_KEY_INVALID']);
      // 6. unknown key, then an inactive point
      assert.deepEqual(await code({ 'X-API-Key': 'f'.repeat(64), 'X-Signature': `t=${now()},v1=${'a'.repeat(64)}`, 'Idempotency-Key': 'k' }), [401, 'API_KEY_INVALID']);
      const em = d.common.db.em();
      const m = await em.findOneOrFail(MerchantPoint, { id: d.merchant.id });
      m.active = false;
      await em.flush();
      const inactive = await d.signed('POST', '/api/v1/invoices', INVOICE);
      assert.deepEqual([inactive.status, inactive.json.error.code], [401, 'API_KEY_INVALID']);
      m.active = true;
      await em.flush();
      // 7. digest mismatch
      assert.deepEqual(await code({ 'X-API-Key': d.merchant.apiKey, 'X-Signature': `t=${now()},v1=${'a'.repeat(64)}`, 'Idempotency-Key': 'k' }), [401, 'SIGNATURE_INVALID']);
    });

    test('GET signs four lines, a write five; the query string is not signed', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const t0 = String(now());
      const body = JSON.stringify(INVOICE);
      const write = await manual(d, 'POST', '/api/v1/invoices', [t0, 'POST', '/api/v1/invoices', 'idem-5', hex(body)], { 'Idempotency-Key': 'idem-5' }, body);
      assert.equal(write.status, 201);
      const fourLineWrite = await manual(d, 'POST', '/api/v1/invoices', [t0, 'POST', '/api/v1/invoices', hex(body)], { 'Idempotency-Key': 'idem-4' }, body);
      assert.equal(fourLineWrite.json.error.code, 'SIGNATURE_INVALID');

      const get = await manual(d, 'GET', '/api/v1/payments?status=PENDING&take=5', [t0, 'GET', '/api/v1/payments', hex('')], {});
      assert.equal(get.status, 200, JSON.stringify(get.json));
      const getWithKeyLine = await manual(d, 'GET', '/api/v1/payments', [t0, 'GET', '/api/v1/payments', 'idem', hex('')], { 'Idempotency-Key': 'idem' });
      assert.equal(getWithKeyLine.json.error.code, 'SIGNATURE_INVALID');
      const signedWithQuery = await manual(d, 'GET', '/api/v1/payments?take=5', [t0, 'GET', '/api/v1/payments?take=5', hex('')], {});
      assert.equal(signedWithQuery.json.error.code, 'SIGNATURE_INVALID');
    });

    test('the raw body bytes are what is hashed: re-serialised JSON fails', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const spaced = '{ "orderId": "o", "amount": "1", "currency": "USD" }';
      const ok = await d.signed('POST', '/api/v1/invoices', undefined, { raw: spaced });
      assert.equal(ok.status, 201);
      const t0 = String(now());
      const sig = hmac(d.merchant.apiSecret, [t0, 'POST', '/api/v1/invoices', 'k2', hex(JSON.stringify(JSON.parse(spaced)))].join('\n'));
      const res = await fetch(`${d.url}/api/v1/invoices`, {
        method: 'POST',
        body: spaced,
        headers: { 'X-API-Key': d.merchant.apiKey, 'X-Signature': `t=${t0},v1=${sig}`, 'Idempotency-Key': 'k2', 'Content-Type': 'application/json' },
      });
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'SIGNATURE_INVALID');
    });

    test('the timestamp tolerance is 300 s in both directions', async (t) => {
      const d = await startTestDaemon(t, dialect);
      for (const [offset, ok] of [[-295, true], [295, true], [-305, false], [305, false]] as const) {
        const res = await d.signed('GET', '/api/v1/payments', undefined, { timestamp: now() + offset });
        assert.equal(res.status === 200, ok, `offset ${offset}: ${res.text}`);
        if (!ok) assert.equal(res.json.error.code, 'SIGNATURE_EXPIRED');
      }
    });

    test('rotating the secret stops the old one at once', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const { apiSecret } = await rotateSecret(d.common.db, d.common.box, d.merchant.id);
      const old = await d.signed('GET', '/api/v1/payments');
      assert.equal(old.json.error.code, 'SIGNATURE_INVALID');
      const fresh = await d.signed('GET', '/api/v1/payments', undefined, { merchant: { ...d.merchant, apiSecret } });
      assert.equal(fresh.status, 200);
    });
  });

  describe(`gateway idempotency on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('a completed request is replayed byte for byte', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const first = await d.signed('POST', '/api/v1/invoices', INVOICE, { idempotencyKey: 'same' });
      const second = await d.signed('POST', '/api/v1/invoices', INVOICE, { idempotencyKey: 'same' });
      assert.equal(first.status, 201);
      assert.equal(second.status, 201);
      assert.equal(second.text, first.text);
      assert.equal(second.headers.get('idempotent-replayed'), 'true');
      assert.equal(await d.common.db.em().count(Invoice, {}), 1);
    });

    test('the same key with another body or path is a 409 conflict; keys are per merchant point', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.signed('POST', '/api/v1/invoices', INVOICE, { idempotencyKey: 'k' });
      const other = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, amount: '2501' }, { idempotencyKey: 'k' });
      assert.deepEqual([other.status, other.json.error.code], [409, 'IDEMPOTENCY_KEY_CONFLICT']);
      const second = await d.createMerchant({ name: 'Other' });
      const elsewhere = await d.signed('POST', '/api/v1/invoices', INVOICE, { idempotencyKey: 'k', merchant: second });
      assert.equal(elsewhere.status, 201);
    });

    test('a failed handler frees the key for reuse', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const bad = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, amount: 'ten' }, { idempotencyKey: 'retry-me' });
      assert.equal(bad.status, 400);
      const fixed = await d.signed('POST', '/api/v1/invoices', INVOICE, { idempotencyKey: 'retry-me' });
      assert.equal(fixed.status, 201);
    });

    test('after 24 hours a key is forgotten: purged on schedule, and reusable for a new request', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const first = await d.signed('POST', '/api/v1/invoices', INVOICE, { idempotencyKey: 'day-old' });
      const em = d.common.db.em();
      await em.nativeUpdate(IdempotencyRecord, { key: 'day-old' }, { expiresAt: new Date(Date.now() - 1000) });
      const again = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, amount: '1' }, { idempotencyKey: 'day-old' });
      assert.equal(again.status, 201, 'an expired key is not a conflict');
      assert.notEqual(again.json.data.id, first.json.data.id);
      await em.nativeUpdate(IdempotencyRecord, { key: 'day-old' }, { expiresAt: new Date(Date.now() - 1000) });
      const record = await d.common.db.em().findOneOrFail(IdempotencyRecord, { key: 'day-old' });
      assert.ok(record.expiresAt < new Date());
      assert.equal(await purgeExpiredKeys(d.common.db), 1);
      assert.equal(await d.common.db.em().count(IdempotencyRecord, {}), 0);
      const fresh = await d.signed('POST', '/api/v1/invoices', INVOICE, { idempotencyKey: 'fresh' });
      const stored = await d.common.db.em().findOneOrFail(IdempotencyRecord, { key: 'fresh' });
      const hours = (stored.expiresAt.getTime() - stored.createdAt.getTime()) / 3_600_000;
      assert.equal(hours, 24);
      assert.equal(fresh.status, 201);
    });

    test('20 concurrent identical requests run the handler once', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const results = await Promise.all(Array.from({ length: 20 }, () => d.signed('POST', '/api/v1/invoices', INVOICE, { idempotencyKey: 'burst' })));
      const created = results.filter((r) => r.status === 201);
      const conflicts = results.filter((r) => r.status === 409);
      assert.equal(created.length + conflicts.length, 20, results.map((r) => r.status).join(','));
      assert.ok(created.length >= 1);
      for (const c of conflicts) assert.match(c.json.error.message, /still being processed/);
      assert.equal(new Set(created.map((r) => r.json.data.id)).size, 1);
      assert.equal(await d.common.db.em().count(Invoice, {}), 1);
    });
  });
}
