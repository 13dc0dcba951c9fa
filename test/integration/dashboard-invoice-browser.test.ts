import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DESKTOP, inBrowser, openBrowser, PHONE, skipWithoutChromium, type TestBrowser } from '../helpers/browser.ts';
import { seriousViolations } from '../helpers/dashboard-axe.ts';
import { PASSWORD, signedInUser } from '../helpers/dashboard.ts';
import { totpAt } from '../../src/domain/totp.ts';
import { startMoneyShop, until } from '../helpers/dashboard-money.ts';

// The overview and the invoice detail in Chromium at 390 and 1280 px: axe finds no serious or
// critical violation, buyer- and merchant-supplied strings (order id, customer name, metadata) stay
// text, nothing is loaded from elsewhere. CHAINGATE_UPDATE_DOCS_IMAGES=1 writes the screenshots of
// docs/dashboard.md.

const DOCS_IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const HOSTILE = {
  orderId: '<script>window.__xss=1</script>',
  customerName: '"><img src=x onerror="window.__xss=2">\u202Egnp.exe',
  metadata: { note: '<svg onload=window.__xss=3>', link: 'javascript:window.__xss=4', nested: { html: '</pre><script>window.__xss=5</script>' } },
};

async function axeBothWidths(browser: TestBrowser, label: string): Promise<void> {
  for (const viewport of [PHONE, DESKTOP]) {
    await browser.page.setViewportSize(viewport);
    const found = await seriousViolations(browser.page);
    assert.deepEqual(found, [], `${label} at ${viewport.width} px: ${JSON.stringify(found, null, 1)}`);
    // Nothing wider than the screen but the scrolling regions.
    const overflow = await browser.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    assert.ok(Number(overflow) <= 0, `${label} at ${viewport.width} px overflows by ${String(overflow)} px`);
  }
}

async function docsShots(browser: TestBrowser, name: string): Promise<void> {
  for (const viewport of [PHONE, DESKTOP]) {
    await browser.page.setViewportSize(viewport);
    const path = await browser.screenshot(`${name}-${viewport.width}`);
    if (process.env.CHAINGATE_UPDATE_DOCS_IMAGES === '1') {
      mkdirSync(DOCS_IMAGES, { recursive: true });
      copyFileSync(path, `${DOCS_IMAGES}${name}-${viewport.width}.png`);
    }
  }
}

describe('the overview and the invoice detail in Chromium', { skip: skipWithoutChromium() }, () => {
  test('axe at 390 and 1280 px, supplied strings as text, the timeline and its links', async (t) => {
    const shop = await startMoneyShop(t, 'sqlite', HOSTILE);
    const { totpSecret } = await signedInUser(shop.common, shop.url, { email: 'owner@shop.example', role: 'owner' });
    await shop.failing.waitFor(3);
    await shop.ok.waitFor(3);
    const base = shop.url.replace('127.0.0.1', 'localhost');
    const browser = await openBrowser(t, { allowedOrigins: [base] });
    const { page } = browser;
    await page.addInitScript({ content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective));" });

    await inBrowser(browser, 'dashboard-invoice-detail', async () => {
      // Signing in lands on the overview.
      await page.goto(`${base}/dashboard/`);
      await page.fill('#email', 'owner@shop.example');
      await page.fill('#password', PASSWORD);
      await Promise.all([page.waitForURL(/\/dashboard\/second-factor$/), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      // The next time step: the set-up used this one, and a code is never accepted twice.
      await page.fill('#code', totpAt(totpSecret, Date.now() + 30_000));
      await Promise.all([page.waitForURL(/\/dashboard\/overview$/), page.getByRole('button', { name: 'Continue', exact: true }).click()]);
      await until('the failing endpoint on the page', async () => {
        await page.reload();
        return (await page.locator('[data-kind="webhook_failing"]').count()) > 0 ? true : undefined;
      });
      for (const kind of ['underpaid', 'overpaid', 'late_funds', 'stuck', 'webhook_failing', 'indexer_behind', 'pool_low']) {
        assert.equal(await page.locator(`.attention[data-kind="${kind}"]`).count(), 1, `one ${kind} item`);
      }
      assert.equal((await page.locator('#open-invoices').textContent())?.trim(), '3');
      await axeBothWidths(browser, 'overview');
      await docsShots(browser, 'dashboard-overview');

      // From the underpaid item to its invoice.
      await Promise.all([page.waitForURL(/\/dashboard\/invoices\//), page.locator('.attention[data-kind="underpaid"] a', { hasText: 'Open the invoice' }).click()]);
      assert.ok(page.url().endsWith(`/dashboard/invoices/${shop.cases.under.invoiceId}`));
      assert.equal((await page.locator('.outcome').textContent())?.trim(), 'underpaid');
      const explorer = page.locator('.timeline a', { hasText: 'View the transaction' });
      assert.equal(await explorer.getAttribute('href'), `https://etherscan.io/tx/${shop.txHashes.under}`);
      assert.equal(await page.locator('.timeline > li').count(), 10);
      await axeBothWidths(browser, 'invoice detail');

      // The late-funds invoice for the docs; the reorged one checked too.
      await page.goto(`${base}/dashboard/invoices/${shop.cases.late.invoiceId}`);
      assert.equal(await page.locator('.timeline > li[data-type="payment.late_funds"]').count(), 1);
      await axeBothWidths(browser, 'invoice detail with late funds');
      await docsShots(browser, 'dashboard-invoice');
      await page.goto(`${base}/dashboard/invoices/${shop.cases.reorg.invoiceId}`);
      assert.equal(await page.locator('.timeline > li[data-type="transfer.reorged"]').count(), 1);
      await axeBothWidths(browser, 'invoice detail with a reorg');

      // The invoice holding hostile strings: shown as the very text, no script run, no CSP violation.
      await page.goto(`${base}/dashboard/invoices/${shop.openInvoiceId}`);
      assert.equal(await page.evaluate('window.__xss'), undefined);
      assert.equal((await page.locator('dt:text-is("Order") + dd').textContent())?.trim(), HOSTILE.orderId);
      assert.equal((await page.locator('#customer-name').textContent())?.trim(), HOSTILE.customerName);
      assert.deepEqual(JSON.parse((await page.locator('pre.json').nth(1).textContent()) ?? ''), HOSTILE.metadata);
      assert.equal(await page.locator('.timeline > li').count(), 1);
      assert.equal(await page.locator('.timeline > li').getAttribute('data-type'), 'invoice.created');
      await axeBothWidths(browser, 'invoice detail without a checkout');

      const missing = await page.goto(`${base}/dashboard/invoices/abcdefghijklmnopqrstuvwx`);
      assert.equal(missing?.status(), 404);
      assert.equal(await page.evaluate('window.__xss'), undefined);
      assert.deepEqual(browser.problems.filter((p) => !/status of 404/.test(p)), []);
      assert.deepEqual(browser.blocked, []);
    });
  });
});
