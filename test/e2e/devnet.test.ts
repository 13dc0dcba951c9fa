import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { BIN } from '../helpers/cli.ts';
import { trackChild } from '../helpers/children.ts';
import { inBrowser, openBrowser, skipWithoutChromium } from '../helpers/browser.ts';

// A newcomer's path, as the README tells it: `chaingate devnet`, open the printed page, play the
// buyer with `chaingate devnet pay`, watch the page follow the confirmations to the shop's return
// page, and see the shop receive a verified payment.completed. In real Chromium, under 2 minutes.

test('devnet: from one command to a COMPLETED payment and a verified payment.completed, in the browser, under 2 minutes', { skip: skipWithoutChromium() }, async (t) => {
  const started = Date.now();
  const cwd = mkdtempSync(join(tmpdir(), 'cg-newcomer-'));
  const { NODE_TEST_CONTEXT: _ctx, ...env } = process.env;
  const devnet = spawn(process.execPath, [BIN, 'devnet', '--json'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(devnet);
  let out = '';
  devnet.stdout.on('data', (b: Buffer) => (out += b.toString()));
  devnet.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | null>((r) => devnet.once('exit', (code) => r(code)));
  t.after(async () => {
    if (devnet.exitCode === null) devnet.kill('SIGINT');
    await exited;
  });
  const state = await new Promise<{ checkoutUrl: string; invoiceId: string; baseUrl: string; webhookReceiver: string; merchant: { apiKey: string; apiSecret: string } }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`devnet did not start:\n${out}`)), 90_000);
    devnet.stdout.on('data', () => {
      const first = out.split('\n')[0]!;
      if (out.includes('\n') && first.startsWith('{')) {
        clearTimeout(timer);
        resolve(JSON.parse(first));
      }
    });
    void exited.then((code) => reject(new Error(`devnet exited with ${code}:\n${out}`)));
  });
  assert.match(state.merchant.apiKey, /^[0-9a-f]{64}$/);

  const shop = new URL(state.webhookReceiver).origin;
  const b = await openBrowser(t, { allowedOrigins: [state.baseUrl, shop] });
  await inBrowser(b, 'devnet-newcomer', async () => {
    await b.page.goto(state.checkoutUrl);
    await b.page.waitForSelector('[data-view="pay"]:not([hidden])', { timeout: 20_000 });
    assert.equal(await b.page.locator('[data-slot="network-name"]').textContent(), 'Network: Ethereum devnet (local)', 'a testnet, never labelled mainnet');

    const paid = spawnSync(process.execPath, [BIN, 'devnet', 'pay', state.invoiceId, '--json'], { cwd, env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(paid.status, 0, paid.stderr);
    assert.equal((JSON.parse(paid.stdout) as { coin: string }).coin, 'USDT');

    // The page follows the confirmations and lands on the shop's return page.
    await b.page.waitForURL(`${shop}/return`, { timeout: 60_000 });
    assert.match((await b.page.textContent('h1')) ?? '', /Thank you/);
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no verified payment.completed:\n${out}`)), 30_000);
    const check = () => {
      if (/webhook payment\.completed payment \w+ COMPLETED 25 USDT — signature verified/.test(out)) {
        clearTimeout(timer);
        resolve();
      } else setTimeout(check, 200);
    };
    check();
  });
  assert.ok(Date.now() - started < 120_000, `took ${Math.round((Date.now() - started) / 1000)} s`);

  // `devnet pay --token --amount` on an invoice not checked out yet: opens it in that coin and sends
  // that amount (an underpayment here); a later --token that contradicts the payment is refused.
  const signed = async (method: string, path: string, payload?: unknown) => {
    const body = payload === undefined ? undefined : JSON.stringify(payload);
    const headers = signRequest({ apiKey: state.merchant.apiKey, apiSecret: state.merchant.apiSecret, method, path, body });
    if (body === undefined) delete headers['Content-Type'];
    return ((await (await fetch(state.baseUrl + path, { method, headers, body })).json()) as { data: Record<string, string> }).data;
  };
  const invoice = await signed('POST', '/api/v1/invoices', { orderId: 'second', amount: '2500', currency: 'USD' });
  const under = spawnSync(process.execPath, [BIN, 'devnet', 'pay', invoice.id!, '--token', 'usdc', '--amount', '10', '--json'], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(under.status, 0, under.stderr);
  const sent = JSON.parse(under.stdout) as { coin: string; amount: string; paymentId: string };
  assert.deepEqual([sent.coin, sent.amount], ['USDC', '10']);
  const conflict = spawnSync(process.execPath, [BIN, 'devnet', 'pay', invoice.id!, '--token', 'USDT'], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(conflict.status, 2, conflict.stdout);
  assert.match(conflict.stderr, /--token USDT conflicts with payment \w+, which is already checked out in USDC/);
  // The confirmation tracker compares confirmation counts, never amounts (spec): the underpayment
  // completes, with received 10 of 25 USDC recorded for the merchant to reconcile.
  const seen = Date.now();
  for (;;) {
    const p = await signed('GET', `/api/v1/payments/${sent.paymentId}`);
    if (p.status === 'COMPLETED') {
      assert.deepEqual([p.cryptoCurrency, p.amount, p.receivedAmount], ['USDC', '25', '10']);
      break;
    }
    assert.ok(Date.now() - seen < 20_000, `the 10 USDC did not complete: ${JSON.stringify(p)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  // Once PAID, the invoice's coin is still the completed payment's: another --token is refused.
  const late = spawnSync(process.execPath, [BIN, 'devnet', 'pay', invoice.id!, '--token', 'ETH'], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(late.status, 2, late.stdout);
  assert.match(late.stderr, /--token ETH conflicts with payment \w+, which is already checked out in USDC/);
  devnet.kill('SIGINT');
  assert.equal(await exited, 0, 'Ctrl-C stops everything cleanly');
});
