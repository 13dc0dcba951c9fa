import { describe, test } from 'node:test';
import { createServer } from 'node:http';
import { listenLocal } from '../helpers/local-server.ts';
import assert from 'node:assert/strict';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { sweepExpired } from '../../src/store/expiry.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

const INVOICE = { orderId: 'order-1', amount: '2500', currency: 'USD' };
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function newInvoice(d: TestDaemon, extra: Record<string, unknown> = {}) {
  const res = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, ...extra });
  assert.equal(res.status, 201, res.text);
  return res.json.data as { id: string; [k: string]: unknown };
}

async function backdate(d: TestDaemon, entity: typeof Invoice | typeof Payment, id: string, msAgo = 1000) {
  await d.common.db.em().nativeUpdate(entity as typeof Invoice, { id }, { expiresAt: new Date(Date.now() - msAgo) });
}

for (const dialect of DIALECTS) {
  describe(`gateway invoices on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('POST /api/v1/invoices creates an OPEN invoice with the spec defaults', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const before = Date.now();
      const res = await d.signed('POST', '/api/v1/invoices', INVOICE);
      assert.equal(res.status, 201);
      assert.equal(res.json.success, true);
      assert.match(res.json.requestId, /^req_/);
      assert.equal(res.headers.get('x-request-id'), res.json.requestId);
      assert.match(res.json.timestamp, ISO_MS);
      const inv = res.json.data;
      assert.deepEqual(Object.keys(inv), ['id', 'referenceId', 'orderId', 'description', 'amount', 'currency', 'status', 'customerEmail', 'customerName', 'customerMetadata', 'metadata', 'returnUrl', 'cancelUrl', 'expiresAt', 'viewedAt', 'paidAt', 'cancelledAt', 'createdAt']);
      assert.match(inv.referenceId, /^INV-\d{6}-\d{3,}[A-Z]$/);
      assert.equal(inv.status, 'OPEN');
      assert.equal(inv.description, '');
      assert.equal(inv.amount, '2500');
      assert.deepEqual([inv.customerEmail, inv.customerName, inv.viewedAt, inv.paidAt, inv.cancelledAt], [null, null, null, null, null]);
      assert.deepEqual([inv.customerMetadata, inv.metadata], [{}, {}]);
      assert.match(inv.expiresAt, ISO_MS);
      const minutes = (Date.parse(inv.expiresAt) - Date.parse(inv.createdAt)) / 60_000;
      assert.equal(minutes, 60);
      assert.ok(Date.parse(inv.createdAt) >= before - 1000);
    });

    test('every field is validated and echoed; metadata with __proto__ is plain data', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const raw = '{"orderId":"o-2","amount":"1","currency":"eur","description":"Two mugs","customerEmail":"jane@example.com","customerName":"Jane Doe","customerMetadata":{"vip":true},"metadata":{"__proto__":{"polluted":1},"cart":[1,2]},"returnUrl":"https://shop.example/ok","cancelUrl":"https://shop.example/cancel","expiresInMinutes":15}';
      const res = await d.signed('POST', '/api/v1/invoices', undefined, { raw });
      assert.equal(res.status, 201, res.text);
      const inv = res.json.data;
      assert.equal(inv.currency, 'EUR');
      assert.equal(inv.customerEmail, 'jane@example.com');
      assert.deepEqual(inv.customerMetadata, { vip: true });
      assert.ok(res.text.includes('"metadata":{"__proto__":{"polluted":1},"cart":[1,2]}'), res.text);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
      const read = await d.signed('GET', `/api/v1/invoices/${inv.id}`);
      assert.ok(read.text.includes('"metadata":{"__proto__":{"polluted":1},"cart":[1,2]}'), 'stored and echoed unchanged, keys in order');
      const ordered = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, metadata: { zeta: 1, alpha: { b: 2, a: 1 } } });
      const again = await d.signed('GET', `/api/v1/invoices/${ordered.json.data.id}`);
      assert.ok(again.text.includes('"metadata":{"zeta":1,"alpha":{"b":2,"a":1}}'), again.text);
      assert.equal((Date.parse(inv.expiresAt) - Date.parse(inv.createdAt)) / 60_000, 15);

      const cases: [Record<string, unknown>, string][] = [
        [{ amount: '25.00' }, 'body.amount'],
        [{ amount: 2500 }, 'body.amount'],
        [{ amount: '-1' }, 'body.amount'],
        [{ orderId: 'x'.repeat(256) }, 'body.orderId'],
        [{ description: 'x'.repeat(501) }, 'body.description'],
        [{ currency: 'DOLLARSDOLL' }, 'body.currency'],
        [{ currency: 'XYZ' }, 'body.currency'],
        [{ customerEmail: 'not-an-email' }, 'body.customerEmail'],
        [{ customerName: 'x'.repeat(256) }, 'body.customerName'],
        [{ metadata: [1] }, 'body.metadata'],
        [{ customerMetadata: 'x' }, 'body.customerMetadata'],
        [{ returnUrl: '/relative' }, 'body.returnUrl'],
        [{ cancelUrl: 'javascript:alert(1)' }, 'body.cancelUrl'],
        [{ expiresInMinutes: 14 }, 'body.expiresInMinutes'],
        [{ expiresInMinutes: 1441 }, 'body.expiresInMinutes'],
        [{ expiresInMinutes: 20.5 }, 'body.expiresInMinutes'],
        [{ surprise: true }, 'body'],
      ];
      for (const [extra, path] of cases) {
        const bad = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, ...extra });
        assert.equal(bad.status, 400, JSON.stringify(extra));
        assert.equal(bad.json.error.code, 'VALIDATION_ERROR');
        assert.ok(bad.json.error.details.some((x: { path: string }) => x.path === path), `${JSON.stringify(extra)} -> ${JSON.stringify(bad.json.error.details)}`);
      }
      const missing = await d.signed('POST', '/api/v1/invoices', {});
      assert.deepEqual(missing.json.error.details.map((x: { path: string }) => x.path).sort(), ['body.amount', 'body.currency', 'body.orderId']);
    });

    test('GET, status and DELETE are scoped to the key; another point gets 404', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const inv = await newInvoice(d);
      const other = await d.createMerchant({ name: 'Other' });
      for (const [method, path] of [['GET', `/api/v1/invoices/${inv.id}`], ['GET', `/api/v1/invoices/${inv.id}/status`], ['DELETE', `/api/v1/invoices/${inv.id}`], ['POST', `/api/v1/invoices/${inv.id}/checkout`]] as const) {
        const res = await d.signed(method, path, method === 'POST' ? { blockchain: 'ethereum', cryptoCurrency: 'USDT' } : undefined, { merchant: other });
        assert.deepEqual([res.status, res.json.error.code], [404, 'INVOICE_NOT_FOUND'], `${method} ${path}`);
      }
      const got = await d.signed('GET', `/api/v1/invoices/${inv.id}`);
      assert.deepEqual(got.json.data.payments, []);
      const status = await d.signed('GET', `/api/v1/invoices/${inv.id}/status`);
      assert.deepEqual(status.json.data, { id: inv.id, referenceId: inv.referenceId, status: 'OPEN', paymentId: null, paidAt: null, expiresAt: inv.expiresAt });
      const unknown = await d.signed('GET', '/api/v1/invoices/doesnotexist0000000000000');
      assert.deepEqual([unknown.status, unknown.json.error.code], [404, 'INVOICE_NOT_FOUND']);
      const byRef = await d.signed('GET', `/api/v1/invoices/${inv.referenceId}`);
      assert.equal(byRef.status, 404, 'a referenceId is not a lookup key');
    });

    test('DELETE cancels OPEN invoices only', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const inv = await newInvoice(d);
      const del = await d.signed('DELETE', `/api/v1/invoices/${inv.id}`);
      assert.equal(del.status, 200);
      assert.equal(del.json.data.status, 'CANCELLED');
      assert.match(del.json.data.cancelledAt, ISO_MS);
      assert.equal('payments' in del.json.data, false);
      const again = await d.signed('DELETE', `/api/v1/invoices/${inv.id}`);
      assert.deepEqual([again.status, again.json.error.code], [400, 'INVOICE_CANNOT_BE_CANCELLED']);

      await d.seedPool('ethereum', evmAddresses(1));
      const busy = await newInvoice(d);
      await d.signed('POST', `/api/v1/invoices/${busy.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDT' });
      const pending = await d.signed('DELETE', `/api/v1/invoices/${busy.id}`);
      assert.equal(pending.json.error.code, 'INVOICE_CANNOT_BE_CANCELLED');
    });
  });

  describe(`gateway checkout on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('checkout leases a one-time address, prices the payment and fixes its window', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const pool = evmAddresses(3);
      await d.seedPool('ethereum', pool);
      const inv = await newInvoice(d, { expiresInMinutes: 20 });
      const res = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDT' });
      assert.equal(res.status, 201, res.text);
      const { invoice, payment } = res.json.data;
      assert.deepEqual(invoice, { id: inv.id, referenceId: inv.referenceId, status: 'PAYMENT_PENDING', amount: '2500', currency: 'USD', expiresAt: inv.expiresAt });
      assert.equal(payment.status, 'PENDING');
      assert.equal(payment.blockchain, 'ethereum');
      assert.equal(payment.cryptoCurrency, 'USDT');
      assert.equal(payment.amount, '25', 'convert mode: 2500 cents = 25 USDT');
      assert.equal(payment.paymentAddress, pool[0]);
      assert.match(payment.referenceId, /^PAY-\d{6}-\d{3,}[A-Z]$/);
      assert.equal(payment.expiresAt, inv.expiresAt, 'window = min(now + 30 min, invoice.expiresAt)');

      const p = await d.signed('GET', `/api/v1/payments/${payment.id}`);
      assert.equal(p.json.data.requiredConfirmations, 12);
      assert.equal(p.json.data.network, 'MAINNET');
      assert.equal(p.json.data.isTestnet, false);
      assert.equal(p.json.data.receivedAmount, '0');
      assert.equal(p.json.data.expectedAmount, '25');
      assert.equal(p.json.data.metadata.pricing.mode, 'convert');
      const lease = await d.common.db.em().findOneOrFail(WalletAddress, { address: pool[0] });
      assert.equal(lease.status, 'LEASED');
      assert.equal(lease.paymentId, payment.id);

      const again = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDT' });
      assert.deepEqual([again.status, again.json.error.code], [400, 'PAYMENT_ALREADY_IN_PROGRESS']);
      const got = await d.signed('GET', `/api/v1/invoices/${inv.id}`);
      assert.deepEqual(Object.keys(got.json.data.payments[0]), ['id', 'referenceId', 'status', 'blockchain', 'currency', 'amount', 'receivedAmount', 'address', 'createdAt']);
      assert.equal(got.json.data.payments[0].currency, 'USDT');
      const st = await d.signed('GET', `/api/v1/invoices/${inv.id}/status`);
      assert.equal(st.json.data.paymentId, payment.id);
    });

    test('verbatim pricing copies invoice.amount as the spec describes', async (t) => {
      const d = await startTestDaemon(t, dialect, { pricing: { mode: 'verbatim' } });
      await d.seedPool('ethereum', evmAddresses(1));
      const inv = await newInvoice(d);
      const res = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(res.json.data.payment.amount, '2500');
    });

    test('testnet: true uses the testnet pool, network name and confirmations', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(1, 7), true);
      const inv = await newInvoice(d);
      const res = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH', testnet: true });
      assert.equal(res.status, 201, res.text);
      const p = await d.signed('GET', `/api/v1/payments/${res.json.data.payment.id}`);
      assert.equal(p.json.data.isTestnet, true);
      assert.equal(p.json.data.network, 'SEPOLIA');
      assert.equal(p.json.data.address, evmAddresses(1, 7)[0]);
    });

    test('checkout errors: currency pair, empty pool, expired, not available', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const inv = await newInvoice(d);
      for (const body of [{ blockchain: 'bitcoin', cryptoCurrency: 'USDT' }, { blockchain: 'dogecoin', cryptoCurrency: 'DOGE' }, { blockchain: 'ethereum', cryptoCurrency: 'usdt' }]) {
        const res = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, body);
        assert.deepEqual([res.status, res.json.error.code], [400, 'INVALID_CURRENCY'], JSON.stringify(body));
      }
      const empty = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'tron', cryptoCurrency: 'USDT' });
      assert.deepEqual([empty.status, empty.json.error.code], [503, 'NO_AVAILABLE_WALLET']);
      const after = await d.signed('GET', `/api/v1/invoices/${inv.id}`);
      assert.equal(after.json.data.status, 'OPEN', 'nothing else changed');
      assert.deepEqual(after.json.data.payments, []);
      assert.equal(await d.common.db.em().count(Payment, {}), 0);

      const bad = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum' });
      assert.equal(bad.json.error.code, 'VALIDATION_ERROR');

      await d.seedPool('ethereum', evmAddresses(2));
      const expired = await newInvoice(d);
      await backdate(d, Invoice, expired.id);
      const late = await d.signed('POST', `/api/v1/invoices/${expired.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.deepEqual([late.status, late.json.error.code], [400, 'INVOICE_EXPIRED']);

      const cancelled = await newInvoice(d);
      await d.signed('DELETE', `/api/v1/invoices/${cancelled.id}`);
      const na = await d.signed('POST', `/api/v1/invoices/${cancelled.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.deepEqual([na.status, na.json.error.code], [400, 'INVOICE_NOT_AVAILABLE']);
    });

    test('no exchange rate: 503 RATE_UNAVAILABLE and the invoice stays OPEN with nothing leased', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(1));
      const inv = await newInvoice(d, { currency: 'GBP' }); // the static table prices USD and EUR only
      const res = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.deepEqual([res.status, res.json.error.code], [503, 'RATE_UNAVAILABLE']);
      assert.equal((await d.signed('GET', `/api/v1/invoices/${inv.id}`)).json.data.status, 'OPEN');
      assert.equal(await d.common.db.em().count(WalletAddress, { status: 'LEASED' }), 0);
    });

    test('merchant restrictions narrow the accepted chains', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const tronOnly = await d.createMerchant({ name: 'Tron shop', acceptedChains: ['tron'] });
      await d.seedPool('ethereum', evmAddresses(1));
      const res = await d.signed('POST', '/api/v1/invoices', INVOICE, { merchant: tronOnly });
      const co = await d.signed('POST', `/api/v1/invoices/${res.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' }, { merchant: tronOnly });
      assert.equal(co.json.error.code, 'INVALID_CURRENCY');
    });

    test('concurrent checkouts on one invoice leave exactly one live payment', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(20));
      const inv = await newInvoice(d);
      const results = await Promise.all(Array.from({ length: 10 }, () => d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC' })));
      const ok = results.filter((r) => r.status === 201);
      assert.equal(ok.length, 1, results.map((r) => r.text).join('\n'));
      for (const r of results.filter((x) => x.status !== 201)) {
        assert.ok(['INVOICE_NOT_AVAILABLE', 'PAYMENT_ALREADY_IN_PROGRESS'].includes(r.json.error.code), r.text);
      }
      assert.equal(await d.common.db.em().count(Payment, { invoice: inv.id }), 1);
      assert.equal(await d.common.db.em().count(WalletAddress, { status: 'LEASED' }), 1);
    });

    test('expiry is lazy on reads and swept on a schedule; the invoice reopens for another attempt', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(3));
      const inv = await newInvoice(d);
      const first = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      const pid = first.json.data.payment.id;
      await backdate(d, Payment, pid);
      // lazy: the status poll itself shows the truth
      const st = await d.signed('GET', `/api/v1/payments/${pid}/status`);
      assert.equal(st.json.data.status, 'EXPIRED');
      assert.deepEqual(Object.keys(st.json.data), ['id', 'referenceId', 'status', 'confirmations', 'requiredConfirmations', 'expiresAt', 'completedAt']);
      const invNow = await d.signed('GET', `/api/v1/invoices/${inv.id}/status`);
      assert.equal(invNow.json.data.status, 'OPEN');
      // a second attempt gets a new address: addresses are never reused
      const second = await d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(second.status, 201);
      assert.notEqual(second.json.data.payment.paymentAddress, first.json.data.payment.paymentAddress);

      // swept: nobody reads, the sweep expires payment and invoice (the invoice window is over too)
      const pid2 = second.json.data.payment.id;
      await backdate(d, Payment, pid2);
      await backdate(d, Invoice, inv.id);
      assert.equal(await sweepExpired(d.common.db), 1);
      const em = d.common.db.em();
      assert.equal((await em.findOneOrFail(Payment, { id: pid2 })).status, 'EXPIRED');
      assert.equal((await em.findOneOrFail(Invoice, { id: inv.id })).status, 'EXPIRED');
      const open = await newInvoice(d);
      await backdate(d, Invoice, open.id);
      await sweepExpired(d.common.db);
      assert.equal((await d.common.db.em().findOneOrFail(Invoice, { id: open.id })).status, 'EXPIRED');
    });
  });
}

describe('gateway checkout pricing and the write lock', () => {
  test('a slow rate source is asked before the idempotency transaction: other writes are not held behind it', async (t) => {
    let release: () => void = () => {};
    let asked: () => void = () => {};
    const wasAsked = new Promise<void>((r) => (asked = r));
    const rates = await listenLocal(
      createServer((_req, res) => {
        asked();
        release = () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ethereum: { usd: 3000, last_updated_at: Math.floor(Date.now() / 1000) } }));
      }),
    );
    t.after(() => rates.close());
    const d = await startTestDaemon(t, 'sqlite', { pricing: { source: 'http', http: { baseUrl: rates.url, ttlSeconds: 0, timeoutMs: 10_000 } } });
    await d.seedPool('ethereum', evmAddresses(2));
    const inv = await newInvoice(d);
    let checkoutDone = false;
    const checkout = d.signed('POST', `/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' }).then((r) => {
      checkoutDone = true;
      return r;
    });
    await wasAsked; // the checkout now waits on the rate source
    const other = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, orderId: 'meanwhile' });
    assert.equal(other.status, 201, other.text);
    assert.equal(checkoutDone, false, 'the creation did not wait for the checkout to finish pricing');
    release();
    const co = await checkout;
    assert.equal(co.status, 201, co.text);
    assert.equal(co.json.data.payment.cryptoCurrency, 'ETH');
  });
});
