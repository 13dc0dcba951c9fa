import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { rotateSecret } from '../../src/store/merchants.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type ApiResponse } from '../helpers/daemon.ts';

const HIGH = { max: 100_000, windowMs: 60_000 };
const ROUTES = ['invoiceRead', 'invoiceStatus', 'checkout', 'paymentStatus', 'confirm'] as const;
type RouteName = (typeof ROUTES)[number];
interface Limit {
  max: number;
  windowMs: number;
}

function limits(routes: Partial<Record<RouteName, Limit>> = {}, serviceWide: { burst?: Limit; sustained?: Limit; gateway?: boolean } = {}, extra: Record<string, unknown> = {}) {
  return {
    rateLimit: {
      enabled: true,
      routes: Object.fromEntries(ROUTES.map((r) => [r, routes[r] ?? HIGH])),
      serviceWide: { burst: serviceWide.burst ?? HIGH, sustained: serviceWide.sustained ?? HIGH, gateway: serviceWide.gateway ?? false },
    },
    ...extra,
  };
}

function assertLimited(res: ApiResponse, maxRetryAfter: number, what: string) {
  assert.equal(res.status, 429, `${what}: ${res.text}`);
  assert.equal(res.json.success, false);
  assert.equal(res.json.error.code, 'RATE_LIMITED', what);
  assert.match(res.json.requestId, /^req_/);
  const retry = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= maxRetryAfter, `${what}: Retry-After ${res.headers.get('retry-after')}`);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const UNKNOWN = 'doesnotexist0000000000000';

for (const dialect of DIALECTS) {
  describe(`rate limits per route on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('each checkout route has its own per-IP budget; 429 RATE_LIMITED with Retry-After and the envelope', async (t) => {
      const max = 2;
      const d = await startTestDaemon(t, dialect, limits(Object.fromEntries(ROUTES.map((r) => [r, { max, windowMs: 60_000 }]))));
      await d.seedPool('ethereum', evmAddresses(2));
      const inv = (await d.signed('POST', '/api/v1/invoices', { orderId: 'o', amount: '100', currency: 'USD' })).json.data;
      const first = await d.plain('POST', `/checkout/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(first.status, 201);
      const pid = first.json.data.payment.id;

      const calls: [RouteName, () => Promise<ApiResponse>, number, number][] = [
        ['invoiceRead', () => d.plain('GET', `/checkout/api/v1/invoices/${inv.id}`), 200, max],
        ['invoiceStatus', () => d.plain('GET', `/checkout/api/v1/invoices/${inv.id}/status`), 200, max],
        // The first checkout above used one of its two.
        ['checkout', () => d.plain('POST', `/checkout/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' }), 400, max - 1],
        ['paymentStatus', () => d.plain('GET', `/checkout/api/v1/payments/${pid}/status`), 200, max],
        ['confirm', () => d.plain('POST', `/checkout/api/v1/payments/${pid}/confirm`, { txHash: `0x${'0'.repeat(64)}` }), 401, max],
      ];
      for (const [name, call, okStatus, left] of calls) {
        for (let i = 0; i < left; i++) {
          const res = await call();
          assert.equal(res.status, okStatus, `${name} #${i + 1}: ${res.text}`);
          assert.equal(res.headers.get('x-ratelimit-limit'), String(max), name);
        }
        assertLimited(await call(), 60, name);
      }
      // The gateway and the page have no per-route limit (only the service-wide buckets).
      for (let i = 0; i < 5; i++) assert.equal((await d.signed('GET', `/api/v1/invoices/${inv.id}`)).status, 200);
    });
  });
}

describe('rate limits: windows, client IPs and switches', () => {
  test('a route budget comes back when its window has passed', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', limits({ invoiceStatus: { max: 2, windowMs: 600 } }));
    const path = `/checkout/api/v1/invoices/${UNKNOWN}/status`;
    assert.equal((await d.plain('GET', path)).status, 404);
    assert.equal((await d.plain('GET', path)).status, 404);
    assertLimited(await d.plain('GET', path), 1, 'third in the window');
    await sleep(650);
    assert.equal((await d.plain('GET', path)).status, 404);
  });

  test('service-wide burst bucket: N per window per IP across all routes, sliding', async (t) => {
    // A 3 s window (the shipped one is 1 s): room for six requests on a loaded machine.
    const d = await startTestDaemon(t, 'sqlite', limits({}, { burst: { max: 5, windowMs: 3000 } }));
    const mixed = [
      () => d.plain('GET', `/checkout/api/v1/invoices/${UNKNOWN}`),
      () => d.plain('GET', '/nothing-here'),
      () => d.plain('GET', `/checkout/api/v1/invoices/${UNKNOWN}/status`),
      () => d.plain('GET', `/i/${UNKNOWN}`),
      () => d.plain('GET', `/checkout/api/v1/payments/${UNKNOWN}/status`),
    ];
    const started = Date.now();
    for (const call of mixed) assert.notEqual((await call()).status, 429);
    const limited = await d.plain('GET', `/checkout/api/v1/invoices/${UNKNOWN}/status`, undefined, { Origin: 'https://shop.example' });
    assert.ok(Date.now() - started < 3000, 'the test itself must stay inside the window');
    assertLimited(limited, 3, 'sixth request within the window');
    assert.equal(limited.headers.get('access-control-allow-origin'), '*', 'a cross-origin page can read the 429');
    assert.equal(limited.headers.get('x-request-id'), limited.json.requestId);
    // Once a whole window has passed since the last request, every one of them has slid out.
    await sleep(3050);
    assert.equal((await d.plain('GET', '/nothing-here')).status, 404, 'allowed again once the window slid past');
  });

  test('signed gateway calls are outside the service-wide buckets unless serviceWide.gateway is on', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', limits({}, { burst: { max: 3, windowMs: 5000 } }));
    // The first call of a key this process has not verified yet counts; the verified ones after it do not.
    for (let i = 0; i < 8; i++) assert.equal((await d.signed('GET', '/api/v1/payments')).status, 200, `merchant call ${i + 1}`);
    for (let i = 0; i < 2; i++) assert.notEqual((await d.plain('GET', '/nothing-here')).status, 429);
    assertLimited(await d.plain('GET', '/nothing-here'), 5, 'buyer-facing bucket still applies');

    const strict = await startTestDaemon(t, 'sqlite', limits({}, { burst: { max: 3, windowMs: 5000 }, gateway: true }));
    for (let i = 0; i < 3; i++) assert.equal((await strict.signed('GET', '/api/v1/payments')).status, 200);
    assertLimited(await strict.signed('GET', '/api/v1/payments'), 5, 'gateway counted when configured');
  });

  test('a known key with a bad signature is counted: learning a key does not bypass the buckets', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', limits({}, { burst: { max: 3, windowMs: 5000 } }));
    assert.equal((await d.signed('GET', '/api/v1/payments')).status, 200); // counted (first), now verified and cached
    for (let i = 0; i < 5; i++) assert.equal((await d.signed('GET', '/api/v1/payments')).status, 200, 'verified calls stay exempt');
    const forged = { merchant: { ...d.merchant, apiSecret: 'f'.repeat(64) } };
    assert.equal((await d.signed('GET', '/api/v1/payments', undefined, forged)).status, 401);
    assert.equal((await d.signed('GET', '/api/v1/payments', undefined, forged)).status, 401);
    assertLimited(await d.signed('GET', '/api/v1/payments', undefined, forged), 5, 'forged signatures count');
    // Unknown routes under /api/v1 with the known key never verify a signature: counted too.
    assertLimited(await d.signed('GET', '/api/v1/nothing-here'), 5, 'no signature check, no exemption');
  });

  test('a disabled point loses the exemption at its next request, not 30 s later', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', limits({}, { burst: { max: 3, windowMs: 5000 } }));
    for (let i = 0; i < 4; i++) assert.equal((await d.signed('GET', '/api/v1/payments')).status, 200); // first counted
    // Disabled the way `chaingate merchant disable` does it (another process: this daemon is not told).
    const em = d.common.db.em();
    const point = await em.findOneOrFail(MerchantPoint, { id: d.merchant.id });
    point.active = false;
    await em.flush();
    assert.equal((await d.signed('GET', '/api/v1/payments')).status, 401, 'refused at once');
    assert.equal((await d.signed('POST', '/api/v1/invoices', { orderId: 'o', amount: '1', currency: 'USD' })).status, 401, 'writes too');
    assertLimited(await d.signed('GET', '/api/v1/payments'), 5, 'and counted: the bucket is full');
  });

  test('a rotated secret stops signing writes and reads at once; the new one works without a restart', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    assert.equal((await d.signed('POST', '/api/v1/invoices', { orderId: 'a', amount: '1', currency: 'USD' })).status, 201); // cached
    const { apiSecret } = await rotateSecret(d.common.db, d.common.box, d.merchant.id);
    const old = d.merchant;
    const rotated = { merchant: { ...old, apiSecret } };
    assert.equal((await d.signed('POST', '/api/v1/invoices', { orderId: 'b', amount: '1', currency: 'USD' })).status, 401, 'old secret, write');
    assert.equal((await d.signed('GET', '/api/v1/payments')).status, 401, 'old secret, read');
    assert.equal((await d.signed('POST', '/api/v1/invoices', { orderId: 'c', amount: '1', currency: 'USD' }, rotated)).status, 201, 'new secret, write');
    assert.equal((await d.signed('GET', '/api/v1/payments', undefined, rotated)).status, 200, 'new secret, read');
  });

  test('unknown keys are counted before any lookup: a flood of random keys costs no query once the bucket is full', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', limits({}, { burst: { max: 3, windowMs: 5000 } }));
    const native = (await (d.common.db.orm.em.getConnection() as unknown as { getNativeClient(): Promise<{ prepare(sql: string): unknown }> }).getNativeClient());
    const prepare = native.prepare;
    let statements = 0;
    native.prepare = (sql: string) => {
      statements++;
      return prepare.call(native, sql);
    };
    t.after(() => {
      native.prepare = prepare;
    });
    const random = () => ({ merchant: { id: 'x', apiKey: randomBytes(32).toString('hex'), apiSecret: 'a'.repeat(64) } });
    for (let i = 0; i < 3; i++) assert.equal((await d.signed('GET', '/api/v1/payments', undefined, random())).status, 401);
    const before = statements;
    for (let i = 0; i < 20; i++) assertLimited(await d.signed('GET', '/api/v1/payments', undefined, random()), 5, `random key ${i + 1}`);
    assert.equal(statements - before, 0, 'no database statement for a refused unknown key');
  });

  test('service-wide sustained bucket: N per ten seconds per IP', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', limits({}, { sustained: { max: 8, windowMs: 10_000 } }));
    for (let i = 0; i < 8; i++) assert.equal((await d.plain('GET', '/nothing-here')).status, 404, `#${i + 1}`);
    const limited = await d.plain('GET', '/nothing-here');
    assertLimited(limited, 10, 'ninth request within ten seconds');
    assert.ok(Number(limited.headers.get('retry-after')) >= 9, 'the oldest request leaves the window in about ten seconds');
  });

  test('trustProxy off: X-Forwarded-For is ignored, every request counts against the socket address', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', limits({ invoiceRead: { max: 2, windowMs: 60_000 } }, { burst: { max: 4, windowMs: 60_000 } }));
    const path = `/checkout/api/v1/invoices/${UNKNOWN}`;
    assert.equal((await d.plain('GET', path, undefined, { 'X-Forwarded-For': '203.0.113.1' })).status, 404);
    assert.equal((await d.plain('GET', path, undefined, { 'X-Forwarded-For': '203.0.113.2' })).status, 404);
    assertLimited(await d.plain('GET', path, undefined, { 'X-Forwarded-For': '203.0.113.3' }), 60, 'route limit, spoofed XFF');
    assert.equal((await d.plain('GET', '/x', undefined, { 'X-Forwarded-For': '203.0.113.4' })).status, 404);
    assertLimited(await d.plain('GET', '/x', undefined, { 'X-Forwarded-For': '203.0.113.5' }), 60, 'service-wide, spoofed XFF');
  });

  test('trustProxy on: each X-Forwarded-For client has its own budgets', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', limits({ invoiceRead: { max: 2, windowMs: 60_000 } }, { burst: { max: 4, windowMs: 60_000 } }, { server: { trustProxy: true } }));
    const path = `/checkout/api/v1/invoices/${UNKNOWN}`;
    const as = (ip: string) => ({ 'X-Forwarded-For': ip });
    assert.equal((await d.plain('GET', path, undefined, as('203.0.113.1'))).status, 404);
    assert.equal((await d.plain('GET', path, undefined, as('203.0.113.1'))).status, 404);
    assertLimited(await d.plain('GET', path, undefined, as('203.0.113.1')), 60, 'route limit for .1');
    assert.equal((await d.plain('GET', path, undefined, as('203.0.113.2'))).status, 404, '.2 has its own route budget');
    // .1 has used 3 of its 4 service-wide requests (the refused one counted there).
    assert.equal((await d.plain('GET', '/x', undefined, as('203.0.113.1'))).status, 404);
    assertLimited(await d.plain('GET', '/x', undefined, as('203.0.113.1')), 60, 'service-wide for .1');
    assert.equal((await d.plain('GET', '/x', undefined, as('198.51.100.7'))).status, 404, 'another client is unaffected');
    // IPv6 clients are grouped by /64, so rotating the interface id does not reset a budget.
    for (const ip of ['2001:db8::1', '2001:db8::2']) assert.equal((await d.plain('GET', path, undefined, as(ip))).status, 404);
    assertLimited(await d.plain('GET', path, undefined, as('2001:db8::3')), 60, 'same /64');
  });

  test('rateLimit.enabled false turns every limit off', async (t) => {
    const tiny = { max: 1, windowMs: 60_000 };
    const config = limits(Object.fromEntries(ROUTES.map((r) => [r, tiny])), { burst: tiny, sustained: tiny });
    const d = await startTestDaemon(t, 'sqlite', { rateLimit: { ...config.rateLimit, enabled: false } });
    for (let i = 0; i < 15; i++) {
      const res = await d.plain('GET', `/checkout/api/v1/invoices/${UNKNOWN}`);
      assert.equal(res.status, 404);
      assert.equal(res.headers.get('x-ratelimit-limit'), null);
    }
  });
});
