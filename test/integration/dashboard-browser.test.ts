import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { createDashboardUser } from '../../src/app/dashboard-users.ts';
import { totpAt } from '../../src/domain/totp.ts';
import { updateMerchant } from '../../src/store/merchants.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { DESKTOP, inBrowser, openBrowser, PHONE, skipWithoutChromium, type TestBrowser } from '../helpers/browser.ts';
import { seriousViolations } from '../helpers/dashboard-axe.ts';
import { createInvoice } from '../helpers/serve-shop.ts';
import { setupTokenOf } from '../helpers/dashboard.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

// The dashboard as a shop owner meets it, in Chromium: first sign-in from the operator's link,
// TOTP, a passkey (Chromium's virtual authenticator), a point with a webhook, a secret rotation,
// and a viewer who can change nothing. Every page is checked with axe at 390 and 1280 px.
// CHAINGATE_UPDATE_DOCS_IMAGES=1 also writes the screenshots of docs/dashboard.md.

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

async function enrolTotp(page: Page): Promise<{ secret: string; codes: string[] }> {
  const secret = (await page.locator('#totp-secret').textContent())!.trim();
  await page.fill('#code', totpAt(secret, Date.now()));
  await submit(page, 'Turn on TOTP');
  const codes = (await page.locator('#recovery-codes li').allTextContents()).map((s) => s.trim());
  return { secret, codes };
}

describe('the dashboard in Chromium', { skip: skipWithoutChromium() }, () => {
  test('first owner, TOTP, passkey, a point with a webhook, rotation, and a viewer who can change nothing', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    // WebAuthn needs a host name (not an IP) in a secure context: localhost is one.
    const base = d.url.replace('127.0.0.1', 'localhost');
    const receiver = await startWebhookReceiver(t);
    const hidden = await d.createMerchant({ name: 'Hidden shop' });
    const checked: string[] = [];
    const { setupLink } = await createDashboardUser(d.common, { email: 'owner@shop.example', role: 'owner', pointIds: [] }, OPERATOR);
    const browser = await openBrowser(t, { allowedOrigins: [base] });
    const { page } = browser;

    await inBrowser(browser, 'dashboard-owner', async () => {
      // The operator's link → password → TOTP with recovery codes.
      await page.goto(`${base}/dashboard/setup?token=${setupTokenOf(setupLink)}`);
      await axeBothWidths(browser, 'set-up', checked);
      await page.fill('#password', PASSWORD);
      await page.fill('#confirm', PASSWORD);
      await submit(page, 'Set password');
      assert.match(page.url(), /\/dashboard\/enrol$/);
      await axeBothWidths(browser, 'second-factor enrolment', checked);
      await docsShot(browser, 'dashboard-enrol-390', PHONE);
      const { secret, codes } = await enrolTotp(page);
      assert.equal(codes.length, 10);
      await axeBothWidths(browser, 'recovery codes', checked);

      // Sign out, sign in with the password and a TOTP code.
      await submit(page, 'Sign out');
      assert.match(page.url(), /\/dashboard\/sign-in$/);
      await axeBothWidths(browser, 'sign-in', checked);
      await docsShot(browser, 'dashboard-sign-in-1280');
      await page.fill('#email', 'owner@shop.example');
      await page.fill('#password', PASSWORD);
      await submit(page, 'Sign in');
      assert.match(page.url(), /\/dashboard\/second-factor$/);
      await axeBothWidths(browser, 'second factor', checked);
      await page.fill('#code', totpAt(secret, Date.now() + 30_000));
      await submit(page, 'Continue');
      assert.match(page.url(), /\/dashboard\/overview$/, 'signed in: the overview');

      // A passkey on Chromium's virtual authenticator, then a passkey-only sign-in.
      const cdp = await browser.context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } });
      await page.goto(`${base}/dashboard/enrol`);
      await page.fill('#passkey-name', 'Laptop');
      await Promise.all([page.waitForURL(/\/dashboard\/account$/), page.getByRole('button', { name: 'Add a passkey' }).click()]);
      assert.match(await page.locator('main').textContent() ?? '', /Passkeys: 1/);
      await axeBothWidths(browser, 'account', checked);
      await submit(page, 'Sign out');
      await Promise.all([page.waitForURL(/\/dashboard\/overview$/), page.getByRole('button', { name: 'Sign in with a passkey' }).click()]);
      // The passkey as the second factor after the password, too.
      await submit(page, 'Sign out');
      await page.fill('#email', 'owner@shop.example');
      await page.fill('#password', PASSWORD);
      await submit(page, 'Sign in');
      await Promise.all([page.waitForURL(/\/dashboard\/overview$/), page.getByRole('button', { name: 'Use a passkey' }).click()]);

      // A point with a webhook URL; its secret shown once.
      await page.goto(`${base}/dashboard/points`);
      await axeBothWidths(browser, 'points', checked);
      await page.fill('#name', 'Corner Shop');
      await page.fill('#webhookUrl', receiver.url);
      await submit(page, 'Create point');
      const apiKey = (await page.locator('#api-key').textContent())!.trim();
      const oldSecret = (await page.locator('#api-secret').textContent())!.trim();
      assert.match(oldSecret, /^[0-9a-f]{64}$/);
      await axeBothWidths(browser, 'secret shown once', checked);
      await docsShot(browser, 'dashboard-secret-390', PHONE);
      await Promise.all([page.waitForNavigation(), page.getByRole('link', { name: 'Go to the point' }).click()]);
      const pointUrl = page.url();
      await axeBothWidths(browser, 'point', checked);
      await docsShot(browser, 'dashboard-point-1280');

      // The test event reaches the local receiver, and the page says so.
      await submit(page, 'Send test event');
      const [ping] = await receiver.waitFor(1);
      assert.equal(JSON.parse(ping!.rawBody.toString()).type, 'ping');
      assert.match((await page.locator('#test-result').textContent()) ?? '', /Delivered: HTTP 200/);

      // Rotation after the typed name: the old secret signs nothing, the new one does.
      await page.fill('#confirm-name', 'Corner Shop');
      await submit(page, 'Rotate secret');
      const newSecret = (await page.locator('#api-secret').textContent())!.trim();
      assert.notEqual(newSecret, oldSecret);
      assert.equal((await createInvoice(d.url, { apiKey, apiSecret: oldSecret }, 'order-old')).status, 401);
      assert.equal((await createInvoice(d.url, { apiKey, apiSecret: newSecret }, 'order-new')).status, 201);

      // Invite a viewer of Corner Shop only.
      await page.goto(`${base}/dashboard/users`);
      await page.fill('#email', 'viewer@shop.example');
      await page.selectOption('#role', 'viewer');
      await page.getByLabel('Corner Shop').check();
      await submit(page, 'Invite');
      const viewerLink = (await page.locator('#setup-link').textContent())!.trim();
      await axeBothWidths(browser, 'users', checked);
      await page.goto(`${base}/dashboard/audit`);
      const audit = (await page.locator('main').textContent()) ?? '';
      for (const action of ['point.create', 'point.rotate-secret', 'point.test-event', 'user.create', 'signin', 'passkey.add', 'totp.enrol']) assert.ok(audit.includes(action), `audit shows ${action}`);
      assert.ok(!audit.includes(newSecret) && !audit.includes(oldSecret), 'no secret in the audit log');
      await axeBothWidths(browser, 'audit log', checked);

      // The viewer: sees Corner Shop without a single button to change it, and not Hidden shop at all.
      const viewer = await openBrowser(t, { allowedOrigins: [base] });
      await inBrowser(viewer, 'dashboard-viewer', async () => {
        const v = viewer.page;
        await v.goto(`${base}/dashboard/setup?token=${setupTokenOf(viewerLink)}`);
        await v.fill('#password', PASSWORD);
        await v.fill('#confirm', PASSWORD);
        await submit(v, 'Set password');
        await enrolTotp(v);
        await v.goto(`${base}/dashboard/points`);
        const list = (await v.locator('main').textContent()) ?? '';
        assert.ok(list.includes('Corner Shop') && !list.includes('Hidden shop'));
        await v.goto(pointUrl);
        assert.equal(await v.getByRole('button').filter({ hasNotText: 'Sign out' }).count(), 0, 'no buttons but sign-out');
        const apiUrl = pointUrl.replace('/dashboard/points/', '/dashboard/api/points/');
        // From the viewer's own page, with its CSRF token: the use case refuses, not only the page.
        const refused = await v.evaluate(`(async () => {
          const csrf = document.querySelector('meta[name="csrf-token"]').getAttribute('content');
          const res = await fetch(${JSON.stringify(apiUrl)}, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: '_csrf=' + csrf + '&name=Taken' });
          return res.status;
        })()`);
        assert.equal(refused, 403);
        const notGranted = await v.goto(`${base}/dashboard/points/${hidden.id}`);
        assert.equal(notGranted?.status(), 404);
        // The two refusals just asked for are the only errors the console saw.
        assert.deepEqual(viewer.problems.filter((p) => !/status of (403|404) .*\/dashboard\/(api\/)?points\//.test(p)), []);
        assert.equal(viewer.problems.length, 2);
      });
      assert.deepEqual(browser.problems, []);
      assert.deepEqual(browser.blocked, []);
    });
    assert.equal(checked.length, 11, `axe ran on: ${checked.join(', ')}`);
  });

  test('merchant- and user-supplied strings render as text: no script runs, no CSP violation', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const base = d.url.replace('127.0.0.1', 'localhost');
    const payloads = ['<script>window.__xss=1</script>', '"><img src=x onerror="window.__xss=2">', '\u202Egnp.exe', "'><svg onload=window.__xss=3>"];
    const name = payloads.join(' ');
    const m = await d.createMerchant({ name });
    // Past the input checks, as a tampered row would be: a javascript: URL never becomes a live link.
    await updateMerchant(d.common.db, m.id, { webhookUrl: 'javascript:window.__xss=4' });
    await createDashboardUser(d.common, { email: '"><script>window.__xss=5</script>@x.example', role: 'viewer', pointIds: [m.id] }, { ...OPERATOR, userAgent: '<img src=x onerror="window.__xss=6">' });
    const { setupLink } = await createDashboardUser(d.common, { email: 'owner@shop.example', role: 'owner', pointIds: [] }, OPERATOR);
    const browser = await openBrowser(t, { allowedOrigins: [base] });
    const { page } = browser;
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.addInitScript({ content: "document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective));" });
    await inBrowser(browser, 'dashboard-escaping', async () => {
      await page.goto(`${base}/dashboard/setup?token=${setupTokenOf(setupLink)}`);
      await page.fill('#password', PASSWORD);
      await page.fill('#confirm', PASSWORD);
      await submit(page, 'Set password');
      await enrolTotp(page);
      for (const path of ['/dashboard/points', `/dashboard/points/${m.id}`, '/dashboard/users', '/dashboard/audit']) {
        await page.goto(base + path);
        assert.equal(await page.evaluate('window.__xss'), undefined, `no script ran on ${path}`);
      }
      await page.goto(`${base}/dashboard/points/${m.id}`);
      assert.equal((await page.locator('#point-name').textContent())?.trim(), name, 'shown as the very text');
      const href = await page.locator('dd a[rel="noreferrer"]').getAttribute('href');
      assert.equal(href, '#', 'the javascript: URL is not a link');
      await page.goto(`${base}/dashboard/users`);
      assert.ok(((await page.locator('main').textContent()) ?? '').includes('"><script>window.__xss=5</script>@x.example'));
      assert.deepEqual(dialogs, []);
      assert.deepEqual(browser.problems, []);
    });
  });
});
