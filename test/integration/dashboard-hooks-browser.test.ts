import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { runCli } from '../helpers/cli.ts';
import { DESKTOP, inBrowser, openBrowser, PHONE, skipWithoutChromium, type TestBrowser } from '../helpers/browser.ts';
import { seriousViolations } from '../helpers/dashboard-axe.ts';
import { PASSWORD } from '../helpers/dashboard.ts';
import { totpAt } from '../../src/domain/totp.ts';
import { cancelledInvoice, HOOKS, seedLedger, startDashboardShop } from '../helpers/dashboard-shop.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

// The Webhooks and Reports pages in Chromium against a real `serve`: a failing receiver whose answer
// tries to run script, the "failing since" state, Redeliver and the test event by click, a viewer
// with no button, the accountant's download by click, axe at 390 and 1280 px on each page.
// CHAINGATE_UPDATE_DOCS_IMAGES=1 also writes the screenshots of docs/dashboard.md.

const DOCS_IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">';

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

async function submit(page: Page, button: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: button, exact: true }).first().click()]);
}

/** A browser signed in as the user: password, then the TOTP code of the next time step (the current one was used). */
async function browserAs(t: { after(fn: () => Promise<void>): void }, base: string, user: { email: string; totpSecret: string }): Promise<TestBrowser> {
  const browser = await openBrowser(t, { allowedOrigins: [base] });
  const { page } = browser;
  await page.goto(`${base}/dashboard/sign-in`);
  await page.fill('#email', user.email);
  await page.fill('#password', PASSWORD);
  await submit(page, 'Sign in');
  await page.fill('#code', totpAt(user.totpSecret, Date.now() + 30_000));
  await submit(page, 'Continue');
  assert.match(page.url(), /\/dashboard\/overview$/);
  return browser;
}

describe('the webhooks and reports pages in Chromium', { skip: skipWithoutChromium() }, () => {
  test('failing since, a hostile answer as text, redeliver and test event by click, a viewer without buttons; the report downloaded by click', async (t) => {
    let failing = true;
    const receiver = await startWebhookReceiver(t, () => (failing ? { status: 500, body: `${XSS} upstream down` } : { status: 200, body: 'ok' }));
    // Two attempts a delivery: both events' deliveries give up while the receiver is down.
    const shop = await startDashboardShop(t, 'sqlite', { webhooks: { ...HOOKS, maxAttempts: 2 } });
    const base = shop.url.replace('127.0.0.1', 'localhost');
    const point = await shop.point('Corner Shop', receiver.url);
    const other = await shop.point('Market Stall');
    await seedLedger(shop.env.CHAINGATE_DATABASE_URL!, point.id, other.id);
    const owner = await shop.user('owner@shop.example', 'owner');
    const accountant = await shop.user('books@shop.example', 'accountant');
    const viewer = await shop.user('viewer@shop.example', 'viewer', [point.id]);
    await cancelledInvoice(shop.url, point);
    await cancelledInvoice(shop.url, point);
    await receiver.waitFor(4);

    const browser = await browserAs(t, base, owner);
    const { page } = browser;
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.addInitScript({ content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective));" });
    const hooksUrl = `${base}/dashboard/points/${point.id}/webhooks`;
    await inBrowser(browser, 'dashboard-webhooks-owner', async () => {
      // From the point page to its log.
      await page.goto(`${base}/dashboard/points/${point.id}`);
      await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Delivery log' }).click()]);
      assert.equal(page.url(), hooksUrl);
      assert.match((await page.locator('#endpoint-state').textContent()) ?? '', /^Failing since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: \d+ failed attempts?; last 2xx answer never\.$/);
      // The receiver's answer is text in a <pre>, never markup.
      await page.locator('.delivery details summary').first().click();
      const shown = (await page.locator('.delivery pre.body').first().textContent()) ?? '';
      assert.ok(shown.startsWith(XSS), shown);
      assert.equal(await page.evaluate('window.__xss'), undefined);
      assert.equal(await page.locator('main img').count(), 0);
      await axeBothWidths(browser, 'webhooks, failing');
      await docsShot(browser, 'dashboard-webhooks-1280', DESKTOP);
      await docsShot(browser, 'dashboard-webhooks-390', PHONE);

      // Both deliveries gave up; the receiver recovers; Redeliver of the newest event: a new delivery,
      // linked to the original, delivered, and the endpoint is no longer failing.
      for (;;) {
        await page.goto(hooksUrl);
        if ((await page.locator('.state-failed').count()) === 2) break;
        await page.waitForTimeout(250);
      }
      failing = false;
      const before = receiver.requests.length;
      const firstEvent = page.locator('.hook-event').first();
      const original = ((await firstEvent.locator('.delivery').first().getAttribute('id')) ?? '').replace('delivery-', '');
      await Promise.all([page.waitForNavigation(), firstEvent.getByRole('button', { name: /^Redeliver/ }).click()]);
      assert.match((await page.locator('main p[role="status"]').first().textContent()) ?? '', /^Redelivery [a-z0-9]+ queued/);
      await receiver.waitFor(before + 1);
      for (;;) {
        await page.reload();
        if ((await page.locator('.state-delivered').count()) === 1) break;
        await page.waitForTimeout(250);
      }
      const replay = page.locator('.delivery').nth(1);
      assert.match((await replay.textContent()) ?? '', new RegExp(`redelivery of ${original}`));
      assert.match((await page.locator('#endpoint-state').textContent()) ?? '', /^Working: last 2xx answer/);
      await axeBothWidths(browser, 'webhooks, one event after a redelivery');

      // The test event, shown with its result and in the log.
      await page.goto(hooksUrl);
      await submit(page, 'Send test event');
      assert.match((await page.locator('#test-result').textContent()) ?? '', /Delivered: HTTP 200 in \d+ ms/);
      assert.equal(await page.locator('.hook-event').first().locator('h3 code').textContent(), 'ping');
      assert.equal(receiver.requests.at(-1)!.headers['x-webhook-event'], 'ping');
      assert.deepEqual(dialogs, []);
      assert.deepEqual(browser.problems, []);
      assert.deepEqual(browser.blocked, []);
    });

    // A viewer: the same log, no button but sign-out; no Reports link; the Reports page refuses.
    const seen = await browserAs(t, base, viewer);
    await inBrowser(seen, 'dashboard-webhooks-viewer', async () => {
      await seen.page.goto(hooksUrl);
      assert.ok((await seen.page.locator('.hook-event').count()) >= 3);
      assert.equal(await seen.page.getByRole('button').filter({ hasNotText: 'Sign out' }).count(), 0, 'no buttons but sign-out');
      assert.equal(await seen.page.getByRole('link', { name: 'Reports' }).count(), 0);
      await axeBothWidths(seen, 'webhooks, viewer');
      const refused = await seen.page.goto(`${base}/dashboard/reports`);
      assert.equal(refused?.status(), 403);
      assert.match((await seen.page.locator('main').textContent()) ?? '', /does not allow exports/);
    });

    // The accountant downloads the report by click: the file is `chaingate report`'s.
    const books = await browserAs(t, base, accountant);
    await inBrowser(books, 'dashboard-reports', async () => {
      const p = books.page;
      await p.goto(`${base}/dashboard/points`);
      await Promise.all([p.waitForNavigation(), p.getByRole('link', { name: 'Reports' }).click()]);
      await axeBothWidths(books, 'reports');
      await docsShot(books, 'dashboard-reports-1280', DESKTOP);
      await docsShot(books, 'dashboard-reports-390', PHONE);
      const day = new Date().toISOString().slice(0, 10);
      await p.fill('#from', day);
      await p.fill('#to', day);
      await p.selectOption('#point', point.id);
      const [file] = await Promise.all([p.waitForEvent('download'), p.getByRole('button', { name: 'Download' }).click()]);
      assert.equal(file.suggestedFilename(), `chaingate-report-${day}-${day}-${point.id}.csv`);
      const cli = await runCli(['report', '--from', day, '--to', day, '--merchant', point.id], shop.env);
      assert.equal(readFileSync((await file.path())!, 'utf8'), cli.stdout);
      assert.deepEqual(books.problems, []);
    });
  });
});
