import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon } from '../helpers/daemon.ts';
import { prng } from '../helpers/prng.ts';

// Generated hostile bodies on every write route of both surfaces: valid requests with one field
// swapped for something hostile, random JSON, and bytes that are not JSON at all. Whatever comes
// in, the answer is a success or a coded error: never a 5xx but the coded 503s that mean "try
// later" (no free address, no rate). Seeded, so a failure can be replayed (CHAINGATE_FUZZ_SEED).

const BODIES_PER_DATABASE = 10_000;

const HOSTILE_STRINGS = [
  '', ' ', 'x'.repeat(300), 'y'.repeat(70_000), '\u202e\u0645\u0631\u062d\u0628\u0627', '😀'.repeat(100), '\ud800', 'null', 'undefined', 'NaN', '-0', '1e400', '0x1f',
  '9'.repeat(80), '00012', '1.5', '-1', ' 12 ', '１２３', '<script>alert(1)</script>', "'; drop table invoice; --", `$${'{'}jndi:ldap://x}`, '../../etc/passwd', '%00', 'a\u0000b',
  'ethereum', 'ETH', 'USDT', 'bitcoin', 'ton', 'TRON', 'direct', 'web3', 'service_wallet', 'USD', 'usd', 'XXX', 'https://shop.example/thanks', 'javascript:alert(1)', 'http://', `0x${'f'.repeat(64)}`,
];

function hostileValue(r: () => number, depth = 0): unknown {
  const pick = Math.floor(r() * 14);
  switch (pick) {
    case 0:
      return HOSTILE_STRINGS[Math.floor(r() * HOSTILE_STRINGS.length)];
    case 1:
      return [0, -1, 1, 1.5, 2 ** 53 + 1, -(2 ** 63), 1e308, Number.MAX_SAFE_INTEGER][Math.floor(r() * 8)];
    case 2:
      return null;
    case 3:
      return r() < 0.5;
    case 4:
      return depth > 40 ? [] : [hostileValue(r, depth + 1), hostileValue(r, depth + 1)];
    case 5:
      return depth > 40 ? {} : { [HOSTILE_STRINGS[Math.floor(r() * HOSTILE_STRINGS.length)]!]: hostileValue(r, depth + 1), __proto__x: 1 };
    case 6: {
      // Deep nesting at a random depth, around the documented limit.
      let v: unknown = 1;
      for (let i = 0, n = 20 + Math.floor(r() * 30); i < n; i++) v = r() < 0.5 ? [v] : { d: v };
      return v;
    }
    default:
      return HOSTILE_STRINGS[Math.floor(r() * HOSTILE_STRINGS.length)];
  }
}

const TEMPLATES: Record<string, Record<string, unknown>> = {
  invoice: { orderId: 'o-1', amount: '2500', currency: 'USD', description: 'd', customerEmail: 'a@b.example', customerName: 'N', customerMetadata: { a: 1 }, metadata: { b: [1] }, returnUrl: 'https://s.example/r', cancelUrl: 'https://s.example/c', expiresInMinutes: 60 },
  gatewayCheckout: { blockchain: 'ethereum', cryptoCurrency: 'USDT', testnet: false },
  publicCheckout: { blockchain: 'ethereum', cryptoCurrency: 'ETH', method: 'direct' },
  confirm: { txHash: `0x${'ab'.repeat(32)}` },
};

function body(r: () => number, template: Record<string, unknown>): string {
  const roll = r();
  if (roll < 0.08) return ['', '{', '[', 'nul', '{"a":1,}', '\u0000', '\ufeff{}', '{"a":1}{"b":2}', '"\\u0000"', '{"a":"\\ud800"}'][Math.floor(r() * 10)]!;
  if (roll < 0.18) return JSON.stringify(hostileValue(r));
  const v: Record<string, unknown> = { ...template };
  const keys = Object.keys(v);
  for (let i = 0, n = 1 + Math.floor(r() * 3); i < n; i++) {
    const action = r();
    if (action < 0.7) v[keys[Math.floor(r() * keys.length)]!] = hostileValue(r);
    else if (action < 0.85) delete v[keys[Math.floor(r() * keys.length)]!];
    else v[HOSTILE_STRINGS[Math.floor(r() * HOSTILE_STRINGS.length)]!.slice(0, 40)] = hostileValue(r);
  }
  return JSON.stringify(v);
}

for (const dialect of DIALECTS) {
  describe(`generated hostile bodies on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test(`${BODIES_PER_DATABASE} bodies over every write route of both surfaces: no 5xx but coded 503s, always the envelope`, async (t) => {
      const seed = Number(process.env.CHAINGATE_FUZZ_SEED ?? 20261123);
      const r = prng(seed + (dialect === 'postgresql' ? 1 : 0));
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(20_000));
      const invoices: string[] = [];
      for (let i = 0; i < 30; i++) invoices.push((await d.signed('POST', '/api/v1/invoices', { orderId: `f${i}`, amount: '2500', currency: 'USD' })).json.data.id);
      const payments: string[] = [];
      for (let i = 0; i < 5; i++) {
        const co = await d.plain('POST', `/checkout/api/v1/invoices/${invoices[i]}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
        payments.push(co.json.data.payment.id);
      }
      const id = (list: string[]) => (r() < 0.9 ? list[Math.floor(r() * list.length)]! : ['nosuch', 'a'.repeat(40), '%00', '..'][Math.floor(r() * 4)]!);
      const routes: { method: string; path: () => string; template: string | null; signed: boolean }[] = [
        { method: 'POST', path: () => '/api/v1/invoices', template: 'invoice', signed: true },
        { method: 'POST', path: () => `/api/v1/invoices/${id(invoices)}/checkout`, template: 'gatewayCheckout', signed: true },
        { method: 'DELETE', path: () => `/api/v1/invoices/${id(invoices)}`, template: null, signed: true },
        { method: 'POST', path: () => `/checkout/api/v1/invoices/${id(invoices)}/checkout`, template: 'publicCheckout', signed: false },
        { method: 'POST', path: () => `/checkout/api/v1/payments/${id(payments)}/confirm`, template: 'confirm', signed: false },
      ];
      const byStatus = new Map<number, number>();
      for (let i = 0; i < BODIES_PER_DATABASE; i++) {
        const route = routes[i % routes.length]!;
        const path = route.path();
        const payload = route.template ? body(r, TEMPLATES[route.template]!) : '';
        const headers: Record<string, string> = route.signed
          ? signRequest({ apiKey: d.merchant.apiKey, apiSecret: d.merchant.apiSecret, method: route.method, path, body: payload, idempotencyKey: `fz-${i}` })
          : { 'content-type': 'application/json', authorization: 'Bearer a.b.c' };
        const res = await d.daemon.app.inject({ method: route.method as 'POST', url: path, headers, payload: payload || undefined });
        byStatus.set(res.statusCode, (byStatus.get(res.statusCode) ?? 0) + 1);
        const json = res.json() as { success?: boolean; error?: { code?: string } };
        const where = `#${i} ${route.method} ${path} ${payload.slice(0, 120)} -> ${res.statusCode} ${res.body.slice(0, 200)}`;
        assert.ok(res.statusCode < 500 || (res.statusCode === 503 && /^(NO_AVAILABLE_WALLET|RATE_UNAVAILABLE|SERVICE_UNAVAILABLE)$/.test(json.error?.code ?? '')), where);
        if (res.statusCode >= 400) assert.match(json.error?.code ?? '', /^[A-Z_]+$/, where);
      }
      t.diagnostic(`answers by status: ${JSON.stringify(Object.fromEntries(byStatus))}`);
      assert.ok((byStatus.get(201) ?? 0) > 100, 'plenty of the generated requests were valid enough to succeed');
    });
  });
}
