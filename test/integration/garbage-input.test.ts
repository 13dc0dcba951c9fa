import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evmAddresses, startTestDaemon } from '../helpers/daemon.ts';

// "Never a 500 for anything a client can send": a fixed battery of hostile inputs on every route.
const BODIES: (string | undefined)[] = [
  undefined,
  '',
  'null',
  'true',
  '42',
  '"string"',
  '[]',
  '[{}]',
  '{}',
  '{"a":',
  '\u0000\u0001',
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"orderId":{"$ne":null},"amount":"1","currency":"USD"}',
  '{"orderId":"o","amount":"99999999999999999999999999999999999999999999999999999999999999999999999999999999999","currency":"USD"}',
  '{"orderId":"o","amount":"1","currency":"USD","expiresInMinutes":1e309}',
  `{"orderId":"o","amount":"1","currency":"USD","metadata":{"deep":${'['.repeat(2000)}${']'.repeat(2000)}}}`,
  '{"blockchain":"ethereum","cryptoCurrency":"ETH","method":"web3"}',
  '{"blockchain":["ethereum"],"cryptoCurrency":{"x":1}}',
  '{"blockchain":"__proto__","cryptoCurrency":"constructor"}',
  '{"blockchain":"toString","cryptoCurrency":"valueOf"}',
  `{"txHash":"0x${'f'.repeat(64)}"}`,
  JSON.stringify({ orderId: 'o'.repeat(10_000), amount: '1', currency: 'USD' }),
];

test('hostile inputs on every route answer with a coded 4xx (or success), never a 500', async (t) => {
  const d = await startTestDaemon(t, 'sqlite');
  await d.seedPool('ethereum', evmAddresses(40));
  const inv = (await d.signed('POST', '/api/v1/invoices', { orderId: 'o', amount: '2500', currency: 'USD' })).json.data.id as string;
  const ids = [inv, 'nosuch', '..', '%2e%2e', 'a'.repeat(300), 'constructor', '__proto__', '0', '-1', 'INV-261121-001A'];
  const routes: [string, (id: string) => string][] = [
    ['POST', () => '/api/v1/invoices'],
    ['GET', (id) => `/api/v1/invoices/${id}`],
    ['GET', (id) => `/api/v1/invoices/${id}/status`],
    ['DELETE', (id) => `/api/v1/invoices/${id}`],
    ['POST', (id) => `/api/v1/invoices/${id}/checkout`],
    ['GET', () => '/api/v1/payments?take=__proto__&skip=1e3&status[]=x'],
    ['GET', (id) => `/api/v1/payments/${id}`],
    ['GET', (id) => `/checkout/api/v1/invoices/${id}`],
    ['GET', (id) => `/checkout/api/v1/invoices/${id}/status`],
    ['POST', (id) => `/checkout/api/v1/invoices/${id}/checkout`],
    ['GET', (id) => `/checkout/api/v1/payments/${id}/status`],
    ['POST', (id) => `/checkout/api/v1/payments/${id}/confirm`],
    ['GET', (id) => `/i/${id}`],
  ];
  let requests = 0;
  for (const [method, path] of routes) {
    for (const id of ids) {
      for (const body of method === 'GET' || method === 'DELETE' ? [undefined] : BODIES) {
        const p = path(id);
        const res = p.startsWith('/api/') ? await d.signed(method, p, undefined, { raw: body }) : await d.plain(method, p, body, { Authorization: 'Bearer x.y.z' });
        requests++;
        assert.ok(res.status < 500 || res.status === 503, `${method} ${p} ${String(body).slice(0, 60)} -> ${res.status} ${res.text.slice(0, 200)}`);
        if (!p.startsWith('/i/') && res.status >= 400) {
          assert.equal(res.json?.success, false, `${method} ${p}: envelope`);
          assert.match(res.json.error.code, /^[A-Z_]+$/);
        }
      }
    }
  }
  assert.ok(requests > 500);
});
