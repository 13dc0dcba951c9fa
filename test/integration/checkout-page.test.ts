import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { PAGE_CSP } from '../../src/http/page/plugin.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type ApiResponse, type TestDaemon, type TestMerchant } from '../helpers/daemon.ts';

const INVOICE = { orderId: 'order-1', amount: '2500', currency: 'USD', returnUrl: 'https://shop.example/thanks', cancelUrl: 'https://shop.example/cart' };
const UNKNOWN = 'doesnotexist0000000000000';

async function newInvoice(d: TestDaemon, extra: Record<string, unknown> = {}, merchant?: TestMerchant) {
  const res = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, ...extra }, merchant ? { merchant } : {});
  assert.equal(res.status, 201, res.text);
  return res.json.data as { id: string; referenceId: string; [k: string]: unknown };
}

function assertHtmlPage(res: ApiResponse, status: number, what: string) {
  assert.equal(res.status, status, `${what}: ${res.text.slice(0, 300)}`);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/, what);
  assert.equal(res.headers.get('content-security-policy'), PAGE_CSP, what);
  assert.equal(res.headers.get('referrer-policy'), 'no-referrer', what);
  assert.equal(res.headers.get('x-frame-options'), 'DENY', what);
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff', what);
  assert.equal(res.headers.get('cache-control'), 'no-store', what);
  assert.match(res.text, /^<!doctype html>/, what);
  // Strict CSP: no inline script (only src= or a JSON data block) and no inline style.
  for (const tag of res.text.match(/<script[^>]*>/g) ?? []) assert.match(tag, /src="|type="application\/json"/, `${what}: ${tag}`);
  assert.doesNotMatch(res.text, /<[a-z][^>]*\s(style|on[a-z]+)=|<style/i, what);
}

function bootOf(html: string) {
  const m = /<script type="application\/json" id="cg-boot">([^<]*)<\/script>/.exec(html);
  assert.ok(m, 'boot data block');
  return JSON.parse(m[1]!);
}

for (const dialect of DIALECTS) {
  describe(`hosted page on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('an open invoice gets the app shell: escaped details, boot data, strict headers, no view stamped', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const shop = await d.createMerchant({ name: '<img src=x onerror=alert(1)> & "Sons"', acceptedChains: ['ethereum', 'bitcoin', 'polygon'] });
      await d.seedPool('ethereum', evmAddresses(1));
      await d.seedPool('bitcoin', ['bc1qexampledepositaddress0000000000000001']);
      // polygon is accepted but its pool is empty: not offered, so not in `chains` (but a payment
      // already on it would still be shown on its network, from `networks`).
      const inv = await newInvoice(d, { description: '</script><script>alert(2)</script>' }, shop);
      const res = await d.plain('GET', `/i/${inv.id}`, undefined, { Accept: 'text/html' });
      assertHtmlPage(res, 200, 'shell');
      assert.ok(res.text.includes('<h1 class="merchant" id="merchant-name">&#60;img src=x onerror=alert(1)&#62; &#38; &#34;Sons&#34;</h1>'), 'merchant name escaped');
      assert.ok(res.text.includes('<title>Pay &#60;img src=x onerror=alert(1)&#62; &#38; &#34;Sons&#34;</title>'), 'title escaped once');
      assert.ok(!res.text.includes('<img src=x'));
      assert.ok(res.text.includes('&#60;/script&#62;&#60;script&#62;alert(2)'), 'description escaped');
      assert.ok(res.text.includes('$25.00'), 'fiat amount formatted');
      assert.ok(res.text.includes(inv.referenceId));
      assert.ok(res.text.includes('href="https://shop.example/cart"'), 'cancel link');
      const boot = bootOf(res.text);
      assert.equal(boot.invoiceId, inv.id);
      assert.equal(boot.apiBase, '/checkout/api/v1');
      assert.deepEqual(boot.liveStatuses, ['PENDING', 'PROCESSING', 'CONFIRMING'], 'the page polls while the lifecycle calls a payment live');
      assert.deepEqual(Object.keys(boot.chains), ['ethereum', 'bitcoin']);
      assert.deepEqual(boot.chains.ethereum, { name: 'Ethereum', label: 'Ethereum mainnet', testnet: false, family: 'evm', chainId: 1, pollMs: 12_000, confirmPollMs: 12_000, web3: false });
      assert.equal(boot.chains.bitcoin.pollMs, 15_000);
      // Every network a payment may be on, testnets with their own label and chain id.
      assert.deepEqual(Object.keys(boot.networks), ['ethereum:MAINNET', 'ethereum:SEPOLIA', 'polygon:MAINNET', 'polygon:AMOY', 'bitcoin:MAINNET', 'bitcoin:TESTNET4']);
      assert.deepEqual(boot.networks['ethereum:SEPOLIA'], { name: 'Ethereum', label: 'Ethereum Sepolia testnet', testnet: true, family: 'evm', chainId: 11_155_111, pollMs: 12_000, confirmPollMs: 12_000, web3: false });
      assert.deepEqual(boot.networks['ethereum:MAINNET'], boot.chains.ethereum);
      assert.equal(boot.strings.confirmations, '{count} / {required} confirmations');
      assert.match(boot.ethersUrl, /^\/assets\/ethers\.min\.js\?v=[0-9a-f]{16}$/);
      // Every URL in the page is local, except the merchant's own cancel link.
      const urls = [...res.text.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
      for (const url of urls) assert.ok(url.startsWith('/') || url === '#' || url === 'https://shop.example/cart', url);
      assert.equal((await d.signed('GET', `/api/v1/invoices/${inv.id}`, undefined, { merchant: shop })).json.data.viewedAt, null, 'the page read stamps nothing; the API read does');
    });

    test('unknown, expired, cancelled and paid invoices get clear pages, not JSON', async (t) => {
      const d = await startTestDaemon(t, dialect);
      for (const id of [UNKNOWN, 'INV-250101-001A', 'a'.repeat(40)]) {
        const res = await d.plain('GET', `/i/${id}`);
        assertHtmlPage(res, 404, id);
        assert.ok(res.text.includes('Payment request not found'));
      }
      const expired = await newInvoice(d);
      await d.common.db.em().nativeUpdate(Invoice, { id: expired.id }, { expiresAt: new Date(Date.now() - 1000) });
      const e = await d.plain('GET', `/i/${expired.id}`);
      assertHtmlPage(e, 200, 'expired');
      assert.ok(e.text.includes('This payment request has expired'));
      assert.ok(e.text.includes('href="https://shop.example/cart"'), 'back to the merchant');
      assert.ok(!e.text.includes('cg-boot') && !e.text.includes('page.js'), 'no script needed');

      const cancelled = await newInvoice(d, { cancelUrl: undefined });
      await d.signed('DELETE', `/api/v1/invoices/${cancelled.id}`);
      const c = await d.plain('GET', `/i/${cancelled.id}`);
      assertHtmlPage(c, 200, 'cancelled');
      assert.ok(c.text.includes('This payment request was cancelled'));

      const paid = await newInvoice(d);
      await d.common.db.em().nativeUpdate(Invoice, { id: paid.id }, { status: 'PAID', paidAt: new Date() });
      const p = await d.plain('GET', `/i/${paid.id}`);
      assertHtmlPage(p, 200, 'paid');
      assert.ok(p.text.includes('This invoice is already paid'));
      assert.ok(p.text.includes('href="https://shop.example/thanks"'));

      const post = await d.plain('POST', `/i/${paid.id}`, {});
      assert.equal(post.status, 405);
    });

    test('the QR code is an SVG of the payment URI, only for its invoice and only until expiresAt', async (t) => {
      const d = await startTestDaemon(t, dialect, { chains: { ethereum: { mainnet: { paymentContract: '0x00000000000000000000000000000000000c0de1', treasury: '0x0000000000000000000000000000000000007ea5' } } } });
      await d.seedPool('ethereum', evmAddresses(2));
      const inv = await newInvoice(d);
      const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      const pid = co.json.data.payment.id;
      const qr = await d.plain('GET', `/i/${inv.id}/payments/${pid}/qr.svg`);
      assert.equal(qr.status, 200);
      assert.equal(qr.headers.get('content-type'), 'image/svg+xml');
      assert.equal(qr.headers.get('cache-control'), 'no-store');
      assert.equal(qr.headers.get('content-security-policy'), "default-src 'none'");
      assert.match(qr.text, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]*viewBox="0 0 \d+ \d+"/);

      const other = await newInvoice(d);
      assert.equal((await d.plain('GET', `/i/${other.id}/payments/${pid}/qr.svg`)).status, 404, 'another invoice');
      assert.equal((await d.plain('GET', `/i/${inv.id}/payments/${UNKNOWN}/qr.svg`)).status, 404);
      const web3 = await d.plain('POST', `/checkout/api/v1/invoices/${other.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH', method: 'web3' });
      assert.equal((await d.plain('GET', `/i/${other.id}/payments/${web3.json.data.payment.id}/qr.svg`)).status, 404, 'contract payments have no QR');

      await d.common.db.em().nativeUpdate(Payment, { id: pid }, { expiresAt: new Date(Date.now() - 1) });
      const late = await d.plain('GET', `/i/${inv.id}/payments/${pid}/qr.svg`);
      assert.equal(late.status, 410);
      assert.ok(!late.text.includes('<svg xmlns="http://www.w3.org/2000/svg" viewBox'), 'no QR after expiresAt');
    });
  });
}

describe('hosted page assets and paths', () => {
  test('assets are local, typed, versioned and revalidated', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const inv = await newInvoice(d);
    const html = (await d.plain('GET', `/i/${inv.id}`)).text;
    const js = /src="(\/assets\/page\.js\?v=([0-9a-f]{16}))"/.exec(html);
    assert.ok(js);
    const versioned = await d.plain('GET', js[1]!);
    assert.equal(versioned.status, 200);
    assert.equal(versioned.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(versioned.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(versioned.headers.get('etag'), `"${js[2]}"`);
    const bare = await d.plain('GET', '/assets/page.js');
    assert.equal(bare.headers.get('cache-control'), 'no-cache');
    const revalidated = await d.plain('GET', '/assets/page.js', undefined, { 'If-None-Match': `"${js[2]}"` });
    assert.equal(revalidated.status, 304);
    for (const [name, type] of [['page.css', 'text/css; charset=utf-8'], ['icon.svg', 'image/svg+xml'], ['ethers.min.js', 'text/javascript; charset=utf-8']] as const) {
      const res = await d.plain('GET', `/assets/${name}`);
      assert.deepEqual([res.status, res.headers.get('content-type')], [200, type], name);
    }
    assert.ok((await d.plain('GET', '/assets/ethers.min.js')).text.includes('BrowserProvider'));
    for (const name of ['nope.js', '..%2F..%2Fpackage.json', '%2E%2E%2Fplugin.ts']) assert.equal((await d.plain('GET', `/assets/${name}`)).status, 404, name);
    // The page and its assets never need anything but this origin.
    const css = (await d.plain('GET', '/assets/page.css')).text;
    assert.doesNotMatch(css, /@import|url\(\s*["']?https?:/);
    assert.doesNotMatch((await d.plain('GET', '/assets/page.js')).text, /https?:\/\//);
  });

  test('the page lives under the path of server.checkoutPageUrl', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', { server: { checkoutPageUrl: 'https://pay.example.com/pay/' } });
    const inv = await newInvoice(d);
    const res = await d.plain('GET', `/pay/i/${inv.id}`);
    assertHtmlPage(res, 200, 'prefixed');
    assert.ok(res.text.includes('href="/pay/assets/page.css?v='));
    assert.equal(bootOf(res.text).qrBase, `/pay/i/${inv.id}/payments/`);
    assert.equal((await d.plain('GET', '/pay/assets/page.css')).status, 200);
    assert.equal((await d.plain('GET', `/i/${inv.id}`)).status, 404);
  });

  test('a rate-limited buyer gets a page with Retry-After, not JSON', async (t) => {
    const high = { max: 1000, windowMs: 60_000 };
    const d = await startTestDaemon(t, 'sqlite', {
      rateLimit: { enabled: true, routes: { invoiceRead: high, invoiceStatus: high, checkout: high, paymentStatus: high, confirm: high }, serviceWide: { burst: { max: 2, windowMs: 60_000 }, sustained: high } },
    });
    assert.equal((await d.plain('GET', `/i/${UNKNOWN}`)).status, 404);
    assert.equal((await d.plain('GET', `/i/${UNKNOWN}`)).status, 404);
    const limited = await d.plain('GET', `/i/${UNKNOWN}`);
    assertHtmlPage(limited, 429, 'rate limited');
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    assert.match(limited.text, /Too many requests\. Please wait \d+ seconds/);
  });
});
