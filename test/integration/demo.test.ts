import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inBrowser, openBrowser, skipWithoutChromium } from '../helpers/browser.ts';
import { spawnServe } from '../helpers/serve-process.ts';

// `npm run demo` pools addresses from the public BIP39 test phrase, so its page says so on every
// view: a "demo — test phrase, never pay" banner, set by the config the demo writes
// (checkout.demoBanner), and never on a page without it.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('npm run demo: the page it prints shows a visible "demo — test phrase, never pay" banner', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cg-demo-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAINGATE_') && k !== 'NODE_TEST_CONTEXT') env[k] = v;
  env.CHAINGATE_DATABASE_URL = `sqlite:${join(dir, 'demo.db')}`;
  const printed = await new Promise<string>((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], { cwd: ROOT, env, timeout: 120_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
  );
  assert.match(printed, /DEMO ONLY: its deposit addresses come from a public test phrase; never send real funds\./);
  const config = /CHAINGATE_CONFIG=(\S+) npm start/.exec(printed)?.[1];
  const invoiceId = /open http:\/\/\S+\/i\/(\w+)/.exec(printed)?.[1];
  assert.ok(config && invoiceId, printed);
  assert.match(readFileSync(config, 'utf8'), /^ {2}demoBanner: true$/m);

  // As the demo says: serve with that database and that config, then open the page.
  const serve = await spawnServe({ CHAINGATE_DATABASE_URL: env.CHAINGATE_DATABASE_URL, CHAINGATE_CONFIG: config });
  t.after(() => serve.stop());
  const html = await (await fetch(`${serve.url}/i/${invoiceId}`)).text();
  assert.match(html, /<p class="banner" role="note" data-slot="banner">.*?<span>Demo — test phrase, never pay\. These deposit addresses come from a public test phrase: anyone can take what is sent to them\.<\/span><\/p>/);

  if (skipWithoutChromium()) return;
  const b = await openBrowser(t, { allowedOrigins: [serve.url] });
  await inBrowser(b, 'demo-banner', async () => {
    await b.page.goto(`${serve.url}/i/${invoiceId}`);
    await b.page.waitForSelector('[data-view="choose"]:not([hidden])', { timeout: 20_000 });
    const banner = b.page.locator('[data-slot="banner"]');
    assert.ok(await banner.isVisible(), 'the banner is on screen while the buyer chooses');
    assert.match((await banner.textContent()) ?? '', /^Demo — test phrase, never pay\./);
    // It stays above the card whatever view is shown.
    await b.page.getByRole('radio', { name: /^Ethereum/ }).check();
    await b.page.getByRole('radio', { name: 'ETH', exact: true }).check();
    await b.page.getByRole('button', { name: 'Show payment address' }).click();
    await b.page.waitForSelector('[data-view="pay"]:not([hidden])', { timeout: 20_000 });
    assert.ok(await banner.isVisible(), 'and while the address is shown');
  });
});
