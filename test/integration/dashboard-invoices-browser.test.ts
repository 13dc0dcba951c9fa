import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { applyInvoiceFact, applyPaymentFact } from '../../src/store/lifecycle.ts';
import { DESKTOP, inBrowser, openBrowser, PHONE, skipWithoutChromium, type TestBrowser } from '../helpers/browser.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { seriousViolations } from '../helpers/dashboard-axe.ts';
import { PASSWORD, signedInUser } from '../helpers/dashboard.ts';
import { seedInvoices } from '../helpers/invoice-rows.ts';

// The invoice list in Chromium: axe at 390 and 1280 px, the filter form, and the live list: a
// payment that completes changes its row, and a new paid invoice appears on top, without a reload
// (waiting on the DOM). CHAINGATE_UPDATE_DOCS_IMAGES=1 writes the screenshots of docs/dashboard.md.

const DOCS_IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));

async function axeBothWidths(browser: TestBrowser, label: string): Promise<void> {
  for (const viewport of [PHONE, DESKTOP]) {
    await browser.page.setViewportSize(viewport);
    const found = await seriousViolations(browser.page);
    assert.deepEqual(found, [], `${label} at ${viewport.width} px: ${JSON.stringify(found, null, 1)}`);
  }
  await browser.page.setViewportSize(DESKTOP);
}

async function docsShot(browser: TestBrowser, name: string, viewport: { width: number; height: number }): Promise<void> {
  await browser.page.setViewportSize(viewport);
  const path = await browser.screenshot(name);
  if (process.env.CHAINGATE_UPDATE_DOCS_IMAGES === '1') {
    mkdirSync(DOCS_IMAGES, { recursive: true });
    copyFileSync(path, `${DOCS_IMAGES}${name}.png`);
  }
  await browser.page.setViewportSize(DESKTOP);
}

describe('the invoice list in Chromium', { skip: skipWithoutChromium() }, () => {
  test('axe at 390 and 1280 px, the filters, and rows that change and appear live', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const base = d.url.replace('127.0.0.1', 'localhost');
    const a = d.merchant.id;
    const b = (await d.createMerchant({ name: 'Second shop' })).id;
    const now = Date.now();
    const statuses = ['PAID', 'OPEN', 'EXPIRED', 'PAID', 'CANCELLED'] as const;
    await seedInvoices(
      d.common.db,
      Array.from({ length: 30 }, (_, n) => ({
        merchantId: n % 4 === 0 ? b : a,
        orderId: `order-${1000 + n}`,
        email: `buyer${n}@example.com`,
        status: statuses[n % 5]!,
        createdAt: new Date(now - (40 - n) * 60_000),
        expiresAt: new Date(now + 86_400_000),
        payments: statuses[n % 5] === 'PAID' ? [{ status: 'COMPLETED' as const, chain: n % 2 ? 'polygon' : 'ethereum', coin: n % 2 ? 'USDT' : 'ETH', decimals: n % 2 ? 6 : 18, expected: '12.5', received: n % 3 ? '12.5' : '12' }] : [],
      })),
    );
    // The row that will complete while the page is open: an invoice whose payment is confirming.
    const pending = await seedInvoices(d.common.db, [
      { merchantId: a, orderId: 'order-live', email: 'live@example.com', status: 'PAYMENT_PENDING', createdAt: new Date(now - 60_000), expiresAt: new Date(now + 86_400_000), payments: [{ status: 'CONFIRMING', chain: 'ethereum', coin: 'ETH', expected: '0.25', received: '0.25' }] },
    ]);
    const { recoveryCodes } = await signedInUser(d.common, base, { email: 'owner@shop.example', role: 'owner' });
    const browser = await openBrowser(t, { allowedOrigins: [base] });
    const { page } = browser;

    await inBrowser(browser, 'dashboard-invoices', async () => {
      // Signed in as a person would be: password, then a recovery code as the second factor.
      await page.goto(`${base}/dashboard/sign-in`);
      await page.fill('#email', 'owner@shop.example');
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      await page.fill('#code', recoveryCodes[0]!);
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Continue', exact: true }).click()]);
      await page.goto(`${base}/dashboard/invoices`);
      assert.equal(await page.locator('#invoice-table tbody tr').count(), 31);
      await axeBothWidths(browser, 'invoice list');
      await docsShot(browser, 'dashboard-invoices-390', PHONE);
      await docsShot(browser, 'dashboard-invoices-1280', DESKTOP);

      // Live: the payment completes (the store's one writer, as the indexer does it) → its row changes.
      const row = page.locator(`#invoice-table tr[data-id="${pending.ids[0]}"]`);
      assert.equal(await row.locator('.status-confirming').count(), 1);
      const started = Date.now();
      await d.common.db.write(async (x) => {
        await applyPaymentFact(x, pending.paymentIds[0]![0]!, 'settled', new Date());
        await applyInvoiceFact(x, pending.ids[0]!, 'paid', new Date(), { paidAt: new Date() });
      });
      await row.locator('.status-completed').waitFor({ timeout: 5000 });
      const changedIn = Date.now() - started;
      assert.ok(changedIn <= 2000, `the row changed within 2 s (${changedIn} ms)`);
      assert.equal(await row.locator('.status-paid').count(), 1);

      // A new invoice paid meanwhile appears on top.
      const startedNew = Date.now();
      const fresh = await seedInvoices(d.common.db, [
        { merchantId: a, orderId: 'order-new', status: 'PAID', createdAt: new Date(), expiresAt: new Date(Date.now() + 86_400_000), payments: [{ status: 'COMPLETED', expected: '1', received: '1' }] },
      ]);
      await page.locator(`#invoice-table tbody tr[data-id="${fresh.ids[0]}"]`).waitFor({ timeout: 5000 });
      const appearedIn = Date.now() - startedNew;
      assert.ok(appearedIn <= 2000, `the new row appeared within 2 s (${appearedIn} ms)`);
      assert.equal(await page.locator('#invoice-table tbody tr').first().getAttribute('data-id'), fresh.ids[0]);
      assert.match((await page.locator('#live-status').textContent()) ?? '', /Updated/);

      // The filter form: a search by order id, then an unusual filter, each a plain GET.
      await page.fill('#q', 'order-1003');
      await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: 'Show', exact: true }).click()]);
      assert.match(page.url(), /q=order-1003/);
      assert.equal(await page.locator('#invoice-table tbody tr').count(), 1);
      await page.goto(`${base}/dashboard/invoices?unusual=underpaid&limit=2`);
      const underpaid = await page.locator('#invoice-table tbody tr').count();
      assert.equal(underpaid, 2);
      assert.equal(await page.locator('#invoice-table tbody tr .flag-underpaid').count(), underpaid);
      await axeBothWidths(browser, 'invoice list, filtered');
      await Promise.all([page.waitForNavigation(), page.locator('a[rel="next"]').click()]);
      assert.match(page.url(), /after=/);
      // Each row links to its invoice's page.
      const href = await page.locator('#invoice-table tbody tr a').first().getAttribute('href');
      assert.match(href ?? '', /^\/dashboard\/invoices\/[a-z0-9]+$/);
      assert.deepEqual(browser.problems, []);
      assert.deepEqual(browser.blocked, []);
    });
  });
});
