import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { DESKTOP, inBrowser, openBrowser, PHONE, skipWithoutChromium, type TestBrowser } from '../helpers/browser.ts';
import { assertAccessible, axeViolations } from '../helpers/axe.ts';

// Every page the server renders under /i/, in every state a buyer can meet, checked with axe-core
// in real Chromium at phone (390 px) and desktop (1280 px) width: no serious or critical
// violation (test/helpers/axe.ts). The deployment is a demo on test networks, so both banners and
// the "Test network" marks are on every view too. States are reached as the indexer would reach
// them (database updates) and the page's clock is moved to its next poll instead of waited for.

const CONTRACT = '0x00000000000000000000000000000000000c0de1';
const TREASURY = '0x0000000000000000000000000000000000007ea5';
const POOL = evmAddresses(8, 77);
const SETTINGS = {
  chains: {
    ...Object.fromEntries(['polygon', 'bsc', 'arbitrum', 'optimism', 'base', 'avalanche', 'bitcoin', 'tron', 'solana', 'ton'].map((c) => [c, { enabled: false }])),
    // Polled every 5 s (the floor) rather than every 12 s block, so that one fast-forward reaches the next poll.
    ethereum: { testnet: { paymentContract: CONTRACT, treasury: TREASURY, blockTimeMs: 1000 } },
  },
  checkout: { offerTestnets: true, demoBanner: true, indexerStaleAfterSeconds: null, availabilityCacheMs: 0 },
};
const SHOP = 'https://shop.example';

// Functions handed to page.waitForFunction run inside Chromium (no DOM types here).
declare const document: any;

async function newInvoice(d: TestDaemon): Promise<string> {
  const res = await d.signed('POST', '/api/v1/invoices', { orderId: `order-${Math.random()}`, amount: '2500', currency: 'USD', description: 'Two mugs', returnUrl: `${SHOP}/return`, cancelUrl: `${SHOP}/cart` });
  assert.equal(res.status, 201, res.text);
  return res.json.data.id as string;
}

/** A payment opened as the page would open it; returns its id. */
async function openPayment(d: TestDaemon, invoiceId: string, method: 'direct' | 'web3' = 'direct'): Promise<string> {
  const res = await d.plain('POST', `/checkout/api/v1/invoices/${invoiceId}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC', method });
  assert.equal(res.status, 201, res.text);
  return res.json.data.payment.id as string;
}

const visible = (b: TestBrowser, view: string) => b.page.waitForSelector(`[data-view="${view}"]:not([hidden])`, { timeout: 15_000 });

async function settle(d: TestDaemon, invoiceId: string, paymentId: string, received: string) {
  const now = new Date();
  await d.common.db.em().nativeUpdate(Payment, { id: paymentId }, { status: 'COMPLETED', confirmations: 3, requiredConfirmations: 3, transactionHash: `0x${'5e'.repeat(32)}`, receivedAmount: received, completedAt: now });
  await d.common.db.em().nativeUpdate(Invoice, { id: invoiceId }, { status: 'PAID', paidAt: now });
}

for (const [width, viewport] of [['390', PHONE], ['1280', DESKTOP]] as const) {
  describe(`hosted page accessibility at ${width} px, axe-core in Chromium on sqlite`, { skip: skipWithoutChromium() || (await skipUnless('sqlite')) }, () => {
    test(`${width} px: choice, pay, confirming, short, over and exact results, their PAID pages`, async (t) => {
      const d = await startTestDaemon(t, 'sqlite', SETTINGS);
      await d.seedPool('ethereum', POOL, true);
      const b = await openBrowser(t, { allowedOrigins: [d.url], viewport, isMobile: viewport === PHONE });
      const { page } = b;
      await page.clock.install();
      const checked: string[] = [];
      const check = async (label: string) => {
        const all = await assertAccessible(page, `${label} at ${width} px`);
        // The bar is "no serious or critical"; the page has no minor or moderate finding either, and keeps it so.
        assert.deepEqual(all, [], `${label} at ${width} px`);
        checked.push(label);
      };
      await inBrowser(b, `a11y-flow-${width}`, async () => {
        const short = await newInvoice(d);
        await page.goto(`${d.url}/i/${short}`);
        await visible(b, 'choose');
        await page.getByRole('radio', { name: /^Ethereum/ }).check();
        await page.getByRole('radio', { name: 'USDC', exact: true }).check();
        await check('coin choice');

        await page.getByRole('button', { name: 'Show payment address' }).click();
        await visible(b, 'pay');
        await page.waitForSelector('[data-slot="price"]:not([hidden])');
        await page.waitForSelector('[data-slot="token"]:not([hidden])');
        await page.waitForFunction(() => document.querySelector('[data-slot="qr"]').naturalWidth > 0);
        await check('pay view (token, price, QR)');

        const paymentId = (await d.common.db.em().findOneOrFail(Payment, { invoice: short })).id;
        await d.common.db.em().nativeUpdate(Payment, { id: paymentId }, { status: 'CONFIRMING', confirmations: 1, transactionHash: `0x${'5e'.repeat(32)}`, receivedAmount: '24.5' });
        await page.clock.fastForward(5_000);
        await visible(b, 'confirming');
        await check('confirming');

        await settle(d, short, paymentId, '24.5');
        await page.clock.fastForward(5_000);
        await page.waitForFunction(() => document.querySelector('[data-slot="success-title"]')?.textContent.includes('short'), undefined, { timeout: 15_000 });
        await check('completed short');
        await page.goto(`${d.url}/i/${short}`);
        assert.equal(await page.locator('h1').textContent(), 'Payment received, but the amount is short');
        await check('PAID page, short');

        for (const [kind, received, title] of [['over', '30', 'Payment complete, with more than was asked'], ['exact', '25', 'Payment complete']] as const) {
          const id = await newInvoice(d);
          const pid = await openPayment(d, id);
          await page.goto(`${d.url}/i/${id}`);
          await visible(b, 'pay');
          await settle(d, id, pid, received);
          await page.clock.fastForward(5_000);
          await visible(b, 'confirming');
          await page.clock.fastForward(1_500);
          await visible(b, 'success');
          assert.equal(await page.locator('[data-slot="success-title"]').textContent(), title);
          await check(`completed ${kind}`);
          await page.goto(`${d.url}/i/${id}`);
          assert.equal(await page.locator('h1').textContent(), kind === 'exact' ? 'This invoice is already paid' : title);
          await check(`PAID page, ${kind}`);
        }
        assert.equal(checked.length, 9);
      });
    });

    test(`${width} px: wallet, payment expired, failed, invoice gone, error, and the server's end pages`, async (t) => {
      const d = await startTestDaemon(t, 'sqlite', SETTINGS);
      await d.seedPool('ethereum', POOL, true);
      const b = await openBrowser(t, { allowedOrigins: [d.url], viewport, isMobile: viewport === PHONE });
      const { page } = b;
      await page.clock.install();
      const checked: string[] = [];
      const check = async (label: string) => {
        const all = await assertAccessible(page, `${label} at ${width} px`);
        // The bar is "no serious or critical"; the page has no minor or moderate finding either, and keeps it so.
        assert.deepEqual(all, [], `${label} at ${width} px`);
        checked.push(label);
      };
      await inBrowser(b, `a11y-states-${width}`, async () => {
        // A browser-wallet payment opened on a device without a wallet: the view says so.
        const web3 = await newInvoice(d);
        await openPayment(d, web3, 'web3');
        await page.goto(`${d.url}/i/${web3}`);
        await visible(b, 'wallet');
        await page.waitForSelector('[data-slot="wallet-error"]:not([hidden])');
        await check('wallet view');

        for (const [status, view] of [['EXPIRED', 'expired-payment'], ['FAILED', 'failed']] as const) {
          const id = await newInvoice(d);
          const pid = await openPayment(d, id);
          await page.goto(`${d.url}/i/${id}`);
          await visible(b, 'pay');
          await d.common.db.em().nativeUpdate(Payment, { id: pid }, { status });
          await page.clock.fastForward(5_000);
          await visible(b, view);
          await check(`payment ${status.toLowerCase()}`);
        }

        // The invoice runs out while the buyer is still choosing.
        const gone = await newInvoice(d);
        await page.goto(`${d.url}/i/${gone}`);
        await visible(b, 'choose');
        await page.clock.fastForward('01:00:01');
        await visible(b, 'gone');
        await check('invoice expired while choosing');

        // The checkout API cannot be reached.
        await page.route('**/checkout/api/v1/**', (route) => route.abort());
        await page.goto(`${d.url}/i/${await newInvoice(d)}`);
        await visible(b, 'error');
        await check('error view');
        await page.unroute('**/checkout/api/v1/**');

        // Whole pages the server renders without script.
        const expired = await newInvoice(d);
        await d.common.db.em().nativeUpdate(Invoice, { id: expired }, { expiresAt: new Date(Date.now() - 1000) });
        await page.goto(`${d.url}/i/${expired}`);
        await page.waitForSelector('[data-view="expired"]');
        await check('expired invoice page');

        const cancelled = await newInvoice(d);
        assert.equal((await d.signed('DELETE', `/api/v1/invoices/${cancelled}`)).status, 200);
        await page.goto(`${d.url}/i/${cancelled}`);
        await page.waitForSelector('[data-view="cancelled"]');
        await check('cancelled invoice page');

        for (const path of ['/i/inv_doesnotexist000000000000', '/i/not-an-id', '/assets/nothing.js']) {
          const res = await page.goto(`${d.url}${path}`);
          assert.equal(res?.status(), 404);
          await page.waitForSelector('[data-view="not-found"]');
          await check(`not found ${path}`);
        }
        assert.equal(checked.length, 10);
      });
    });
  });
}

describe('the axe check itself', { skip: skipWithoutChromium() }, () => {
  test('a page with an unlabelled button, an image without alt and no lang fails it', async (t) => {
    const b = await openBrowser(t, { allowedOrigins: [] });
    await inBrowser(b, 'a11y-negative', async () => {
      await b.page.setContent('<!doctype html><html><head><title>x</title></head><body><main><h1>Bad</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw="><button></button></main></body></html>');
      const ids = (await axeViolations(b.page)).map((f) => `${f.impact} ${f.id}`).sort();
      assert.deepEqual(ids, ['critical button-name', 'critical image-alt', 'serious html-has-lang']);
      await assert.rejects(assertAccessible(b.page, 'the bad page'), /3 serious or critical violation\(s\) on the bad page/);
    });
  });
});
