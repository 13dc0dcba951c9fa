import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Webhook } from 'standardwebhooks';
import { canonicalString, sha256Hex, signRequest } from '../../src/sdk/sign-request.ts';
import { standardWebhookSecret, verifyWebhook } from '../../src/sdk/verify-webhook.ts';
import { subtractDecimals } from '../../src/domain/money.ts';

// The shared table of cases (sdk/cases/*.json) on the TypeScript SDK: the Python and PHP libraries
// run the same files (sdk-python.test.ts, sdk-php.test.ts), so all three sign and verify alike.
// The Standard Webhooks cases run on the `standardwebhooks` package (its reference
// implementation), the settlements on the server's own decimal arithmetic.

const CASES = fileURLToPath(new URL('../../sdk/cases/', import.meta.url));
const load = <T>(name: string): T => JSON.parse(readFileSync(`${CASES}${name}.json`, 'utf8')) as T;

interface SigningCase {
  name: string;
  apiKey: string;
  apiSecret: string;
  method: string;
  path: string;
  idempotencyKey: string | null;
  timestamp: number;
  body: string;
  expect: { canonical: string; bodySha256: string; signature: string; idempotencyKey: string | null };
}

interface WebhookCase {
  name: string;
  secret: string;
  now: number;
  tolerance: number;
  headers: Record<string, string>;
  body: string;
  expect: { ok: true; eventId: string } | { ok: false; reason: string };
}

test('signing cases: the canonical string and X-Signature of sign-request.ts, and the worked examples of docs/api.md', () => {
  const { cases } = load<{ cases: SigningCase[] }>('signing');
  assert.ok(cases.length >= 10);
  for (const c of cases) {
    assert.equal(sha256Hex(c.body), c.expect.bodySha256, c.name);
    const isWrite = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(c.method.toUpperCase());
    assert.equal(canonicalString(String(c.timestamp), c.method, c.path, isWrite ? (c.idempotencyKey ?? '') : undefined, sha256Hex(c.body)), c.expect.canonical, c.name);
    const headers = signRequest({ apiKey: c.apiKey, apiSecret: c.apiSecret, method: c.method, path: c.path, body: c.body, idempotencyKey: c.idempotencyKey ?? undefined, timestamp: c.timestamp });
    assert.equal(headers['X-Signature'], c.expect.signature, c.name);
    assert.equal(headers['Idempotency-Key'] ?? null, c.expect.idempotencyKey, c.name);
  }
  // The table holds the documented examples, so a change of scheme cannot pass unnoticed.
  const api = readFileSync(fileURLToPath(new URL('../../docs/api.md', import.meta.url)), 'utf8');
  for (const c of cases.filter((x) => x.name.includes('docs/api.md'))) assert.ok(api.includes(c.expect.signature.split('v1=')[1]!), c.name);
  assert.equal(cases.filter((x) => x.name.includes('docs/api.md')).length, 2);
});

test('webhook cases: verify-webhook.ts (chaingate scheme) and the standardwebhooks package (Standard Webhooks headers)', (t) => {
  const { cases } = load<{ cases: WebhookCase[] }>('webhooks');
  assert.ok(cases.length >= 20);
  let standard = 0;
  for (const c of cases) {
    const lower = Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k.toLowerCase(), v]));
    if (lower['x-webhook-signature'] !== undefined || lower['webhook-signature'] === undefined) {
      const result = verifyWebhook({ apiSecret: c.secret, rawBody: c.body, signature: lower['x-webhook-signature'], timestamp: lower['x-webhook-timestamp'], now: c.now, toleranceSeconds: c.tolerance });
      assert.deepEqual(result.ok ? { ok: true } : { ok: false, reason: result.reason }, c.expect.ok ? { ok: true } : c.expect, c.name);
      if (c.expect.ok) assert.equal((JSON.parse(c.body) as { id: string }).id, c.expect.eventId, c.name);
    } else {
      standard++;
      assert.equal(c.tolerance, 300, 'the package has a fixed tolerance');
      t.mock.method(Date, 'now', () => c.now * 1000);
      let verdict: string;
      try {
        verdict = `ok ${(new Webhook(standardWebhookSecret(c.secret)).verify(c.body, lower) as { id: string }).id}`;
      } catch {
        verdict = 'refused';
      }
      t.mock.restoreAll();
      assert.equal(verdict, c.expect.ok ? `ok ${c.expect.eventId}` : 'refused', c.name);
    }
  }
  assert.ok(standard >= 5, 'Standard Webhooks cases ran');
});

test('settlement cases: the differences are what the server computes (subtractDecimals)', () => {
  const { cases } = load<{ cases: { name: string; payment: Record<string, string>; expect: { status: string; difference: string } }[] }>('settlement');
  for (const c of cases) {
    const p = c.payment;
    const expected = p.expectedAmount ?? p.expected_amount ?? p.amount!;
    const received = p.receivedAmount ?? p.received_amount!;
    const scale = Math.max(...[expected, received].map((v) => v.split('.')[1]?.length ?? 0));
    const difference = subtractDecimals(received, expected, scale);
    assert.equal(difference, c.expect.difference, c.name);
    assert.equal(difference === '0' ? 'exact' : difference.startsWith('-') ? 'underpaid' : 'overpaid', c.expect.status, c.name);
  }
});
