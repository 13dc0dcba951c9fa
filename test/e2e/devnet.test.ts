import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { BIN } from '../helpers/cli.ts';
import { trackChild } from '../helpers/children.ts';
import { docBlocks } from '../helpers/doc-examples.ts';
import { inBrowser, openBrowser, skipWithoutChromium } from '../helpers/browser.ts';

// A newcomer's path, as the README tells it: `chaingate devnet`, open the printed page, pick the coin
// there, play the buyer with `chaingate devnet pay`, watch the page follow the confirmations to the
// shop's return page, and see the shop receive a verified payment.completed. In real Chromium. Then
// the integrator's path on the same devnet: docs/api.md's Node client, run as written against the
// devnet's baseUrl, to "paid". One devnet for the file (a Hardhat chain, serve and an indexer).

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface State {
  checkoutUrl: string;
  invoiceId: string;
  baseUrl: string;
  webhookReceiver: string;
  dir: string;
  rpcUrl: string;
  chainId: number;
  buyer: { address: string };
  tokens: { USDT: string; USDC: string };
  merchant: { apiKey: string; apiSecret: string };
}

const { NODE_TEST_CONTEXT: _ctx, ...env } = process.env;
const cwd = mkdtempSync(join(tmpdir(), 'cg-newcomer-'));
let devnet: ChildProcess;
let exited: Promise<number | null>;
/** Everything the devnet printed (stdout and stderr); its first stdout line is the state. */
let out = '';
let stdout = '';
let state: State;

const payCli = (...args: string[]) => spawnSync(process.execPath, [BIN, 'devnet', 'pay', ...args], { cwd, env, encoding: 'utf8', timeout: 60_000 });

async function signed(method: string, path: string, payload?: unknown): Promise<Record<string, unknown>> {
  const body = payload === undefined ? undefined : JSON.stringify(payload);
  const headers = signRequest({ apiKey: state.merchant.apiKey, apiSecret: state.merchant.apiSecret, method, path, body });
  if (body === undefined) delete headers['Content-Type'];
  return ((await (await fetch(state.baseUrl + path, { method, headers, body })).json()) as { data: Record<string, unknown> }).data;
}

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    assert.ok(Date.now() < deadline, `${what}:\n${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('devnet', () => {
  before(async () => {
    devnet = spawn(process.execPath, [BIN, 'devnet', '--json'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    trackChild(devnet);
    devnet.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      stdout += b.toString();
    });
    devnet.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    exited = new Promise<number | null>((r) => devnet.once('exit', (code) => r(code)));
    state = await new Promise<State>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`devnet did not start:\n${out}`)), 90_000);
      devnet.stdout!.on('data', () => {
        const first = stdout.split('\n')[0]!;
        if (stdout.includes('\n') && first.startsWith('{')) {
          clearTimeout(timer);
          resolve(JSON.parse(first) as State);
        }
      });
      void exited.then((code) => reject(new Error(`devnet exited with ${code}:\n${out}`)));
    });
    assert.match(state.merchant.apiKey, /^[0-9a-f]{64}$/);
  });
  after(async () => {
    if (devnet.exitCode === null) devnet.kill('SIGINT');
    await exited;
    rmSync(cwd, { recursive: true, force: true });
  });

  test('the buyer picks the coin on the page, devnet pay pays it, the page lands on the return page and the shop gets a verified payment.completed', { skip: skipWithoutChromium() }, async (t) => {
    const started = Date.now();
    const shop = new URL(state.webhookReceiver).origin;
    const b = await openBrowser(t, { allowedOrigins: [state.baseUrl, shop] });
    const slot = (name: string) => b.page.locator(`[data-slot="${name}"]`);
    await inBrowser(b, 'devnet-newcomer', async () => {
      await b.page.goto(state.checkoutUrl);
      await b.page.waitForSelector('[data-view="choose"]:not([hidden])', { timeout: 20_000 });
      // A test deployment says so on every view, and names its network for what it is.
      assert.ok(await slot('banner').isVisible());
      assert.match((await slot('banner').textContent()) ?? '', /^Test payments only — this checkout runs on test networks\. Never send real funds\.$/);
      const chain = b.page.getByRole('radio', { name: /^Ethereum devnet \(local\) Test network/ });
      assert.ok(await chain.isChecked(), 'the one network offered is preselected');
      assert.deepEqual(await b.page.locator('[data-slot="coins"] input').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value)), ['ETH', 'USDT', 'USDC']);
      await b.page.getByRole('radio', { name: 'USDT', exact: true }).check();
      await b.page.getByRole('button', { name: 'Show payment address' }).click();

      await b.page.waitForSelector('[data-view="pay"]:not([hidden])', { timeout: 20_000 });
      assert.equal(await slot('network-name').textContent(), 'Network: Ethereum devnet (local)', 'never labelled mainnet');
      assert.ok(await slot('network-test').isVisible(), 'marked as a test network');
      assert.equal(await slot('crypto-amount').textContent(), '25');
      const address = (await slot('address').textContent()) ?? '';
      assert.equal(await slot('uri').getAttribute('href'), `ethereum:${state.tokens.USDT}@${state.chainId}/transfer?address=${address}&uint256=25000000`, "the wallet link names the devnet's own chain id");

      const paid = payCli(state.invoiceId, '--json');
      assert.equal(paid.status, 0, paid.stderr);
      const sent = JSON.parse(paid.stdout) as { coin: string; to: string; amount: string };
      assert.deepEqual([sent.coin, sent.to, sent.amount], ['USDT', address, '25'], 'devnet pay pays the payment the buyer opened on the page');

      // The page follows the confirmations and lands on the shop's return page.
      await b.page.waitForURL(`${shop}/return`, { timeout: 60_000 });
      assert.match((await b.page.textContent('h1')) ?? '', /Thank you/);
    });
    await until('a verified payment.completed', () => /webhook payment\.completed payment \w+ COMPLETED 25 USDT — signature verified/.test(out), 30_000);
    assert.ok(Date.now() - started < 120_000, `took ${Math.round((Date.now() - started) / 1000)} s`);
  });

  test("a browser wallet pays on the page: it is switched to the devnet's own chain id and pays through the payment contract", { skip: skipWithoutChromium() }, async (t) => {
    const invoice = await signed('POST', '/api/v1/invoices', { orderId: 'wallet', amount: '1000', currency: 'USD', returnUrl: `${new URL(state.webhookReceiver).origin}/return` });
    const shop = new URL(state.webhookReceiver).origin;
    const b = await openBrowser(t, { allowedOrigins: [state.baseUrl, shop] });
    // An injected EIP-1193 wallet holding the devnet's funded buyer account, starting on Ethereum
    // mainnet: it forwards to the devnet's node, where Hardhat's accounts are unlocked.
    const wallet = { chainId: '0x1', switchedTo: [] as string[] };
    await b.page.exposeFunction('__wallet', async (method: string, params: unknown[]) => {
      if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [state.buyer.address];
      if (method === 'eth_chainId') return wallet.chainId;
      if (method === 'wallet_switchEthereumChain') {
        const wanted = (params[0] as { chainId: string }).chainId;
        wallet.switchedTo.push(wanted);
        if (Number(wanted) !== state.chainId) return { __error: { code: 4902, message: 'unknown chain' } };
        wallet.chainId = wanted;
        return null;
      }
      const res = (await (await fetch(state.rpcUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })).json()) as { result?: unknown; error?: { code: number; message: string } };
      return res.error ? { __error: res.error } : res.result;
    });
    await b.context.addInitScript(() => {
      const w = globalThis as unknown as { ethereum: unknown; __wallet(method: string, params: unknown[]): Promise<unknown> };
      w.ethereum = {
        async request({ method, params }: { method: string; params?: unknown[] }) {
          const result = (await w.__wallet(method, params ?? [])) as { __error?: { code: number; message: string } } | null;
          if (result && typeof result === 'object' && '__error' in result && result.__error) throw Object.assign(new Error(result.__error.message), { code: result.__error.code });
          return result;
        },
        on() {},
        removeListener() {},
      };
    });
    await inBrowser(b, 'devnet-wallet', async () => {
      await b.page.goto(`${state.baseUrl}/i/${String(invoice.id)}`);
      await b.page.waitForSelector('[data-view="choose"]:not([hidden])', { timeout: 20_000 });
      await b.page.getByRole('radio', { name: 'USDC', exact: true }).check();
      await b.page.getByRole('button', { name: 'Pay with browser wallet' }).click();
      await b.page.waitForSelector('[data-view="wallet"]:not([hidden])', { timeout: 20_000 });
      assert.equal(await b.page.locator('[data-slot="wallet-network-name"]').textContent(), 'Network: Ethereum devnet (local)');
      await b.page.getByRole('button', { name: 'Connect wallet and pay' }).click();
      await b.page.waitForURL(`${shop}/return`, { timeout: 60_000 });
    });
    assert.deepEqual(wallet.switchedTo, ['0x7a69'], 'switched once, to chain id 31337, never to a public network');
    const paid = await signed('GET', `/api/v1/invoices/${String(invoice.id)}`);
    const [payment] = paid.payments as { id: string; status: string }[];
    assert.deepEqual([paid.status, payment?.status], ['PAID', 'COMPLETED']);
    const detail = await signed('GET', `/api/v1/payments/${payment!.id}`);
    assert.deepEqual([detail.method, detail.cryptoCurrency, detail.network, detail.receivedAmount], ['web3', 'USDC', 'DEVNET', '10']);
  });

  test("docs/api.md's Node client, run as written against the devnet's baseUrl, is paid with devnet pay; the API, metrics and page name the chain alike", async (t) => {
    // As api.md says: sign-request.ts and settlement.ts saved as sdk/*.js with the types removed, in an ESM project.
    const [block] = docBlocks(ROOT).filter((x) => x.file === 'docs/api.md' && x.lang === 'js' && x.body.includes("from './sdk/sign-request.js'"));
    assert.ok(block, 'the Node client example of docs/api.md');
    const project = join(cwd, 'merchant');
    mkdirSync(join(project, 'sdk'), { recursive: true });
    writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
    for (const name of ['sign-request', 'settlement']) writeFileSync(join(project, 'sdk', `${name}.js`), stripTypeScriptTypes(readFileSync(join(ROOT, `src/sdk/${name}.ts`), 'utf8')));
    writeFileSync(join(project, 'example.js'), block.body);
    const client = spawn(process.execPath, ['example.js'], {
      cwd: project,
      env: { ...env, CHAINGATE_URL: state.baseUrl, CHAINGATE_API_KEY: state.merchant.apiKey, CHAINGATE_API_SECRET: state.merchant.apiSecret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    trackChild(client);
    let text = '';
    client.stdout.on('data', (b: Buffer) => (text += b.toString()));
    client.stderr.on('data', (b: Buffer) => (text += b.toString()));
    const done = new Promise<number | null>((r) => client.once('exit', (code) => r(code)));
    t.after(() => void client.kill());

    const deadline = Date.now() + 30_000;
    while (!/send \S+ USDT to 0x[0-9a-fA-F]{40} before /.test(text)) {
      assert.ok(Date.now() < deadline && client.exitCode === null, text);
      await new Promise((r) => setTimeout(r, 200));
    }
    const invoiceId = /^invoice (\w+) INV-/m.exec(text)![1]!;
    const paid = payCli(invoiceId, '--json');
    assert.equal(paid.status, 0, paid.stderr);
    assert.equal(await done, 0, text);
    assert.match(text, /\nCOMPLETED \d+\/2\npaid: fulfil order-1042\n$/);

    // One name for the devnet chain: DEVNET in the API and the metrics, "Ethereum devnet (local)" on the page.
    const { paymentId } = JSON.parse(paid.stdout) as { paymentId: string };
    const payment = await signed('GET', `/api/v1/payments/${paymentId}`);
    assert.deepEqual([payment.blockchain, payment.network, payment.isTestnet], ['ethereum', 'DEVNET', true]);
    const metricsUrl = /"metrics":"([^"]+)"/.exec(readFileSync(join(state.dir, 'serve.log'), 'utf8'))![1]!;
    const metrics = await (await fetch(metricsUrl)).text();
    assert.match(metrics, /^chaingate_wallet_pool_free\{chain="ethereum",network="DEVNET"\} \d+$/m);
    assert.match(metrics, /^chaingate_indexer_height\{chain="ethereum",network="DEVNET"\} \d+$/m);
    assert.doesNotMatch(metrics, /network="(mainnet|MAINNET|testnet|SEPOLIA)"/);
    const fresh = await signed('POST', '/api/v1/invoices', { orderId: 'page-label', amount: '100', currency: 'USD' });
    const page = await (await fetch(`${state.baseUrl}/i/${String(fresh.id)}`)).text();
    assert.ok(page.includes('"chains":{"ethereum":{"name":"Ethereum","label":"Ethereum devnet (local)","testnet":true,"family":"evm","chainId":31337'), 'the page offers the devnet chain by its name');
  });

  test('devnet pay --token --amount opens an unchecked invoice in that coin; a contradicting --token is refused; Ctrl-C stops everything', async () => {
    // On an invoice not checked out yet: opens it in that coin and sends that amount (an
    // underpayment here); a later --token that contradicts the payment is refused.
    const invoice = await signed('POST', '/api/v1/invoices', { orderId: 'second', amount: '2500', currency: 'USD' });
    const under = payCli(String(invoice.id), '--token', 'usdc', '--amount', '10', '--json');
    assert.equal(under.status, 0, under.stderr);
    const sent = JSON.parse(under.stdout) as { coin: string; amount: string; paymentId: string };
    assert.deepEqual([sent.coin, sent.amount], ['USDC', '10']);
    const conflict = payCli(String(invoice.id), '--token', 'USDT');
    assert.equal(conflict.status, 2, `${conflict.stdout}${conflict.stderr}`);
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
    const late = payCli(String(invoice.id), '--token', 'ETH');
    assert.equal(late.status, 2, `${late.stdout}${late.stderr}`);
    assert.match(late.stderr, /--token ETH conflicts with payment \w+, which is already checked out in USDC/);
    devnet.kill('SIGINT');
    assert.equal(await exited, 0, 'Ctrl-C stops everything cleanly');
  });
});
