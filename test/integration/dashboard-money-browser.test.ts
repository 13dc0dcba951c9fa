import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseEther, Wallet } from 'ethers';
import type { Page } from 'playwright-core';
import { createDashboardUser } from '../../src/app/dashboard-users.ts';
import { formatUnits } from '../../src/domain/money.ts';
import { totpAt } from '../../src/domain/totp.ts';
import { DESKTOP, inBrowser, openBrowser, PHONE, skipWithoutChromium, type TestBrowser } from '../helpers/browser.ts';
import { seriousViolations } from '../helpers/dashboard-axe.ts';
import { setupTokenOf } from '../helpers/dashboard.ts';
import { startMoneyWorld } from '../helpers/dashboard-refunds.ts';
import { waitFor } from '../helpers/indexer-process.ts';

// Refunds in Chromium (issue 40's first test, the money part): a manager refunds an over-payment
// through download / the real `chaingate sweep sign` / upload / broadcast until the page shows it
// CONFIRMED, then a full refund of another payment until it shows REFUNDED; a tampered file is
// refused with its reason on the page; a viewer in the same run sees the states and can do none of
// it. axe at 390 and 1280 px on each new page. CHAINGATE_UPDATE_DOCS_IMAGES=1 writes the screenshots.

const PASSWORD = 'a long and private passphrase';
const DOCS_IMAGES = fileURLToPath(new URL('../../docs/images/', import.meta.url));
const OPERATOR = { userId: null, actor: 'cli', ip: null, userAgent: null };

async function axeBothWidths(browser: TestBrowser, label: string, checked: string[]): Promise<void> {
  for (const viewport of [PHONE, DESKTOP]) {
    await browser.page.setViewportSize(viewport);
    const found = await seriousViolations(browser.page);
    assert.deepEqual(found, [], `${label} at ${viewport.width} px: ${JSON.stringify(found, null, 1)}`);
  }
  await browser.page.setViewportSize(DESKTOP);
  checked.push(label);
}

async function docsShot(browser: TestBrowser, name: string, viewport = DESKTOP): Promise<void> {
  await browser.page.setViewportSize(viewport);
  const path = await browser.screenshot(name);
  if (process.env.CHAINGATE_UPDATE_DOCS_IMAGES === '1') {
    mkdirSync(DOCS_IMAGES, { recursive: true });
    copyFileSync(path, `${DOCS_IMAGES}${name}.png`);
  }
  await browser.page.setViewportSize(DESKTOP);
}

async function submit(page: Page, button: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.getByRole('button', { name: button, exact: true }).click()]);
}

async function firstSignIn(page: Page, base: string, link: string): Promise<void> {
  await page.goto(`${base}/dashboard/setup?token=${setupTokenOf(link)}`);
  await page.fill('#password', PASSWORD);
  await page.fill('#confirm', PASSWORD);
  await submit(page, 'Set password');
  const secret = (await page.locator('#totp-secret').textContent())!.trim();
  await page.fill('#code', totpAt(secret, Date.now()));
  await submit(page, 'Turn on TOTP');
}

/** Waits until the text of `selector` matches, through the page's own reloads. */
async function untilShown(page: Page, selector: string, pattern: RegExp, what: string): Promise<void> {
  await waitFor(what, async () => pattern.test((await page.locator(selector).first().textContent({ timeout: 1000 }).catch(() => '')) ?? ''), 45_000);
}

describe('refunds in Chromium', { skip: skipWithoutChromium() }, () => {
  test('a manager refunds an over-payment and a whole payment through download, offline signing and upload; a viewer cannot', async (t) => {
    const m = await startMoneyWorld(t, 'sqlite');
    const { d } = m.w;
    const base = d.url.replace('127.0.0.1', 'localhost');
    const checked: string[] = [];
    const over = parseEther('0.1');
    const first = await m.paidEth('browser-1', over);
    const second = await m.paidEth('browser-2', 0n);
    const buyer = Wallet.createRandom().address;
    const { setupLink: managerLink } = await createDashboardUser(d.common, { email: 'manager@shop.example', role: 'manager', pointIds: [] }, OPERATOR);
    const { setupLink: viewerLink } = await createDashboardUser(d.common, { email: 'viewer@shop.example', role: 'viewer', pointIds: [] }, OPERATOR);
    const browser = await openBrowser(t, { allowedOrigins: [base] });
    const { page } = browser;

    /** Plans a refund on the payment's page; answers the plan page's URL. */
    const planRefund = async (paymentId: string, amount: string) => {
      await page.goto(`${base}/dashboard/payments/${paymentId}/refund`);
      await page.fill('#to', buyer);
      await page.fill('#amount', amount);
      await submit(page, 'Plan refund');
      assert.match(page.url(), /\/dashboard\/plans\/[0-9a-f]{64}\?planned=1$/);
      return page.url().replace(/\?.*$/, '');
    };
    /** Downloads the plan from its page and signs it with the real binary, offline. */
    const downloadAndSign = async (name: string) => {
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: /^Download / }).click()]);
      const planFile = join(m.dir, download.suggestedFilename());
      await download.saveAs(planFile);
      assert.equal(download.suggestedFilename(), (await page.locator('#sign-command').textContent())!.split(' ')[4], 'the command names the downloaded file');
      const signedFile = join(m.dir, `${name}.signed.json`);
      await m.sign(planFile, signedFile, buyer);
      return signedFile;
    };

    let planUrl = '';
    await inBrowser(browser, 'dashboard-money-manager', async () => {
      await firstSignIn(page, base, managerLink);

      // The over-payment: the form offers it by default.
      await page.goto(`${base}/dashboard/payments/${first.id}/refund`);
      assert.match((await page.locator('label[for="amount"]').textContent()) ?? '', new RegExp(`the over-payment, ${formatUnits(over, 18)} ETH`));
      await axeBothWidths(browser, 'refund form', checked);
      await docsShot(browser, 'dashboard-refund-390', PHONE);
      planUrl = await planRefund(first.id, '');
      await axeBothWidths(browser, 'plan (planned)', checked);
      await docsShot(browser, 'dashboard-plan-1280');
      const signedFile = await downloadAndSign('over');

      // A tampered file: refused, its reason on the page, nothing sent.
      const signed = JSON.parse(readFileSync(signedFile, 'utf8')) as { transactions: { raw: string }[] };
      const raw = signed.transactions[0]!.raw;
      signed.transactions[0]!.raw = `${raw.slice(0, 20)}${raw[20] === 'a' ? 'b' : 'a'}${raw.slice(21)}`;
      await page.setInputFiles('#signed', { name: 'signed.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(signed)) });
      await submit(page, 'Upload and broadcast');
      assert.match((await page.locator('[role="alert"]').textContent()) ?? '', /^Refused, nothing sent: .+/);
      assert.match((await page.locator('#plan-state').textContent()) ?? '', /PLANNED/);
      await axeBothWidths(browser, 'plan (refused upload)', checked);

      // The real file: broadcast, then serve follows it; the page reloads itself until CONFIRMED.
      await page.setInputFiles('#signed', signedFile);
      await submit(page, 'Upload and broadcast');
      assert.match(page.url(), /\?sent=1$/);
      await untilShown(page, '#plan-state', /CONFIRMED/, 'the refund CONFIRMED on its page');
      await axeBothWidths(browser, 'plan (confirmed)', checked);
      await page.goto(`${base}/dashboard/payments/${first.id}/refund`);
      assert.match((await page.locator('table').textContent()) ?? '', /CONFIRMED/);

      // A full refund of the second payment: the payment shows REFUNDED.
      await planRefund(second.id, formatUnits(second.paid, 18));
      await page.setInputFiles('#signed', await downloadAndSign('full'));
      await submit(page, 'Upload and broadcast');
      await untilShown(page, '#plan-state', /CONFIRMED/, 'the full refund CONFIRMED');
      await page.goto(`${base}/dashboard/payments/${second.id}/refund`);
      await waitFor('payment REFUNDED on its page', async () => {
        await page.reload();
        return /REFUNDED/.test((await page.locator('dl').first().textContent()) ?? '');
      }, 30_000);
      assert.equal(await page.getByRole('button', { name: 'Plan refund' }).count(), 0, 'nothing left to refund');
      await axeBothWidths(browser, 'refund page (refunded)', checked);

      await page.goto(`${base}/dashboard/sweeps`);
      assert.equal(await page.locator('tbody tr').count(), 2);
      await axeBothWidths(browser, 'refunds and sweeps', checked);
      await docsShot(browser, 'dashboard-sweeps-1280');
      await docsShot(browser, 'dashboard-sweeps-390', PHONE);
      assert.deepEqual(browser.blocked, []);
      assert.deepEqual(browser.problems.filter((p) => !/status of 400/.test(p)), []);
    });

    // The viewer: the same pages, the states, no button but sign-out; the endpoints refuse with 403.
    const viewer = await openBrowser(t, { allowedOrigins: [base] });
    await inBrowser(viewer, 'dashboard-money-viewer', async () => {
      const v = viewer.page;
      await firstSignIn(v, base, viewerLink);
      const planId = planUrl.split('/').at(-1)!;
      for (const path of [`/dashboard/payments/${first.id}/refund`, `/dashboard/plans/${planId}`, '/dashboard/sweeps']) {
        await v.goto(base + path);
        assert.equal(await v.getByRole('button').filter({ hasNotText: 'Sign out' }).count(), 0, `no buttons on ${path}`);
        assert.equal(await v.getByRole('link', { name: /^Download / }).count(), 0);
      }
      await v.goto(`${base}/dashboard/plans/${planId}`);
      assert.match((await v.locator('#plan-state').textContent()) ?? '', /CONFIRMED/);
      const statuses = await v.evaluate(`(async () => {
        const csrf = document.querySelector('meta[name="csrf-token"]').getAttribute('content');
        const post = (path, body) => fetch(path, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' }, body: '_csrf=' + csrf + '&' + body }).then(async (r) => r.status + ' ' + (await r.json()).error.code);
        return [
          await post('/dashboard/api/payments/${first.id}/refund', 'to=${buyer}'),
          await post('/dashboard/api/plans/${planId}/cancel', ''),
          await post('/dashboard/api/plans/${planId}/signed', 'signed=%7B%7D'),
          await post('/dashboard/api/sweeps', 'chain=ethereum&to=${buyer}'),
          await fetch('/dashboard/api/plans/${planId}/file', { headers: { Accept: 'application/json' } }).then((r) => r.status + ''),
        ];
      })()`);
      assert.deepEqual(statuses, ['403 FORBIDDEN', '403 FORBIDDEN', '403 FORBIDDEN', '403 FORBIDDEN', '403']);
      assert.equal(viewer.problems.filter((p) => !/status of 403/.test(p)).length, 0, viewer.problems.join('\n'));
    });
    assert.equal(checked.length, 6, `axe ran on: ${checked.join(', ')}`);
  });
});
