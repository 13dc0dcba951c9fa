import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Interface } from 'ethers';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { openBrowser, PHONE, skipWithoutChromium, inBrowser, type TestBrowser } from '../helpers/browser.ts';

// The hosted payment page in real Chromium: a buyer picks a chain and coin, sees the address, QR
// and countdown, watches confirmations (simulated by updating the database, as the indexer would)
// and lands on the merchant's returnUrl. Set CHAINGATE_SCREENSHOTS=1 to keep screenshots of each
// step under test/artifacts/; a failing step always leaves one there.

// Functions handed to page.evaluate/waitForFunction run inside Chromium; the project's types are
// Node's (no DOM lib), so the page globals they use are declared here, for this module only.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const window: any;
declare const navigator: any;
declare function getComputedStyle(element: any): any;

const SHOTS = process.env.CHAINGATE_SCREENSHOTS === '1';
const CONTRACT = '0x00000000000000000000000000000000000c0de1';
const TREASURY = '0x0000000000000000000000000000000000007ea5';
const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const BUYER = '0x00000000000000000000000000000000000b0b01';
// Polls every 5 s (the floor) instead of ethereum's 12 s block time, to keep the test short.
const FAST_ETHEREUM = { chains: { ethereum: { mainnet: { blockTimeMs: 1000 } } } };

/** The merchant's shop: a tiny local page for returnUrl and cancelUrl. */
async function startShop(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><title>Shop</title><h1>Back at the shop: ${req.url === '/return' ? 'thank you' : 'cart'}</h1>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function newInvoice(d: TestDaemon, shop: string, extra: Record<string, unknown> = {}) {
  const res = await d.signed('POST', '/api/v1/invoices', {
    orderId: 'order-42',
    amount: '2500',
    currency: 'USD',
    description: 'Two ceramic mugs',
    customerEmail: 'jane@example.com',
    returnUrl: `${shop}/return`,
    cancelUrl: `${shop}/cart`,
    ...extra,
  });
  assert.equal(res.status, 201, res.text);
  return res.json.data as { id: string; referenceId: string };
}

async function shot(b: TestBrowser, name: string) {
  if (SHOTS) await b.screenshot(name);
}

const visible = (b: TestBrowser, view: string, timeout = 10_000) => b.page.waitForSelector(`[data-view="${view}"]:not([hidden])`, { timeout });
const slotText = (b: TestBrowser, slot: string) => b.page.locator(`[data-slot="${slot}"]`).textContent();

function assertClean(b: TestBrowser, origins: string[]) {
  assert.deepEqual(b.problems, [], 'no console errors, page errors or CSP violations');
  assert.deepEqual(b.blocked, [], 'no request left the allowed origins');
  for (const url of b.requests) assert.ok(origins.some((o) => url.startsWith(o)), url);
}

for (const dialect of DIALECTS) {
  describe(`hosted page in Chromium on ${dialect}`, { skip: skipWithoutChromium() || (await skipUnless(dialect)) }, () => {
    test('pick a chain and coin, see address, QR and countdown, follow confirmations, land on returnUrl', async (t) => {
      const d = await startTestDaemon(t, dialect, FAST_ETHEREUM);
      const shop = await startShop(t);
      const pool = evmAddresses(2, 42);
      await d.seedPool('ethereum', pool);
      const inv = await newInvoice(d, shop);
      const b = await openBrowser(t, { allowedOrigins: [d.url, shop] });
      await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: d.url });
      const { page } = b;

      // The page's own clock: the status poll (every 5 s, the floor) and the redirect (3 s) are fast-forwarded
      // once the database has changed, instead of waited for; every answer still comes from the daemon.
      await page.clock.install();
      const nextPoll = () => page.clock.fastForward(5_000);

      await inBrowser(b, `${dialect}-flow`, async () => {
        await page.goto(`${d.url}/i/${inv.id}`);
        await visible(b, 'choose');
        assert.equal(await page.title(), 'Pay Acme Corp');
        assert.equal((await page.locator('.merchant').textContent())?.trim(), 'Acme Corp');
        assert.equal(await slotText(b, 'fiat'), '$25.00');
        assert.ok((await page.locator('.description').textContent())?.includes('Two ceramic mugs'));
        assert.match((await slotText(b, 'invoice-timer')) ?? '', /^This invoice expires in (1:00:00|59:\d\d)$/);
        // Only chains that can work are offered: ethereum is the one with a free deposit address.
        assert.deepEqual(await page.locator('[data-slot="chains"] input').evaluateAll((els) => els.map((e: any) => e.value)), ['ethereum']);
        assert.ok(await page.locator('[data-slot="continue"]').isDisabled(), 'nothing chosen yet');
        assert.ok(await page.locator('[data-slot="wallet-start"]').isHidden(), 'no wallet, no wallet button');
        assert.match((await d.signed('GET', `/api/v1/invoices/${inv.id}`)).json.data.viewedAt ?? '', /Z$/, 'the page read the invoice through the API');
        await shot(b, `${dialect}-1-choose`);

        await page.getByRole('radio', { name: /^Ethereum/ }).check();
        assert.deepEqual(await page.locator('[data-slot="coins"] input').evaluateAll((els) => els.map((e: any) => e.value)), ['ETH', 'USDT', 'USDC']);
        await page.getByRole('radio', { name: 'USDT', exact: true }).check();
        await page.getByRole('button', { name: 'Show payment address' }).click();

        await visible(b, 'pay');
        assert.equal(await slotText(b, 'address'), pool[0]);
        assert.equal(await slotText(b, 'crypto-amount'), '25');
        assert.equal(await slotText(b, 'crypto-coin'), 'USDT');
        assert.equal(await slotText(b, 'network-name'), 'Network: Ethereum mainnet');
        assert.equal(await slotText(b, 'network-warning'), 'Send only USDT on Ethereum mainnet. Coins sent on any other network, or a different coin, will be lost.');
        assert.match((await slotText(b, 'pay-timer')) ?? '', /^Time left to pay: (29|30):\d\d$/);
        const qr = page.locator('[data-slot="qr"]');
        await page.waitForFunction(() => (document.querySelector('[data-slot="qr"]')).naturalWidth > 0);
        assert.match((await qr.getAttribute('src')) ?? '', /\/i\/\w+\/payments\/\w+\/qr\.svg$/);
        const uri = await page.locator('[data-slot="uri"]').getAttribute('href');
        assert.equal(uri, `ethereum:${USDT_ADDRESS}@1/transfer?address=${pool[0]}&uint256=25000000`);
        assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Send your payment', 'focus moves to the new view');

        await page.getByRole('button', { name: 'Copy address' }).click();
        assert.equal(await page.evaluate(() => navigator.clipboard.readText()), pool[0]);
        await page.getByRole('button', { name: 'Copy amount' }).click();
        assert.equal(await page.evaluate(() => navigator.clipboard.readText()), '25');
        await page.waitForFunction(() => document.querySelector('[data-slot="announce"]')?.textContent === 'Copied');
        await shot(b, `${dialect}-2-pay`);

        // The indexer sees the transfer: three confirmations out of twelve.
        const payment = await d.common.db.em().findOneOrFail(Payment, { invoice: inv.id });
        const txHash = `0x${'5e'.repeat(32)}`;
        await d.common.db.em().nativeUpdate(Payment, { id: payment.id }, { status: 'CONFIRMING', confirmations: 3, transactionHash: txHash, receivedAmount: '25' });
        await nextPoll();
        await visible(b, 'confirming', 15_000);
        await page.waitForFunction(() => document.querySelector('[data-slot="confirmations"]')?.textContent === '3 / 12 confirmations');
        assert.equal(await slotText(b, 'confirm-tx-hash'), txHash);
        assert.equal(await page.locator('[data-slot="confirm-progress"]').getAttribute('value'), '3');
        assert.ok(await page.locator('[data-slot="cancel-bar"]').isHidden(), 'no cancel link once money is on its way');
        assert.equal(await page.locator(`text=${pool[0]}`).count(), 0, 'the address is not on screen any more');
        await shot(b, `${dialect}-3-confirming`);

        await d.common.db.em().nativeUpdate(Payment, { id: payment.id }, { confirmations: 7 });
        await nextPoll();
        await page.waitForFunction(() => document.querySelector('[data-slot="confirmations"]')?.textContent === '7 / 12 confirmations', undefined, { timeout: 15_000 });

        const now = new Date();
        await d.common.db.em().nativeUpdate(Payment, { id: payment.id }, { status: 'COMPLETED', confirmations: 12, completedAt: now });
        await d.common.db.em().nativeUpdate(Invoice, { id: inv.id }, { status: 'PAID', paidAt: now });
        await nextPoll();
        await visible(b, 'success', 15_000);
        assert.equal(await slotText(b, 'success-text'), 'Thank you! Taking you back to Acme Corp…');
        assert.equal(await page.locator('[data-slot="return-link"]').getAttribute('href'), `${shop}/return`);
        await shot(b, `${dialect}-4-success`);

        await page.clock.fastForward(3_000);
        await page.waitForURL(`${shop}/return`, { timeout: 10_000 });
        assert.equal(await page.locator('h1').textContent(), 'Back at the shop: thank you');
        assertClean(b, [d.url, shop]);
      });
    });
  });
}

const USDT_ADDRESS = '0xdAC17F958D2ee523a2206206994597C13D831ec7';

/** A fake EIP-1193 wallet in the page, answered from here: it records what the page asks for. */
async function installFakeWallet(b: TestBrowser, startChainId: string) {
  const wallet = {
    chainId: startChainId,
    sent: [] as { from: string; to: string; data: string; value?: string }[],
    calls: [] as string[],
    /** What the page said while asking the wallet to switch networks. */
    switchPrompts: [] as string[],
  };
  await b.page.exposeFunction('__wallet', async (method: string, params: unknown[]) => {
    wallet.calls.push(method);
    switch (method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [BUYER];
      case 'eth_chainId':
        return wallet.chainId;
      case 'net_version':
        return String(Number(wallet.chainId));
      case 'wallet_switchEthereumChain':
        wallet.switchPrompts.push((await b.page.locator('[data-slot="wallet-status"]').textContent()) ?? '');
        wallet.chainId = (params[0] as { chainId: string }).chainId;
        return null;
      case 'eth_call':
        return `0x${'0'.repeat(64)}`; // allowance(): nothing approved yet
      case 'eth_estimateGas':
        return '0x30d40';
      case 'eth_blockNumber':
        return '0x10';
      case 'eth_sendTransaction':
        wallet.sent.push(params[0] as (typeof wallet.sent)[number]);
        return `0x${String(wallet.sent.length).padStart(64, '0')}`;
      case 'eth_getTransactionReceipt':
        return { status: '0x1', transactionHash: params[0], blockNumber: '0x10' };
      default:
        return { __error: { code: -32601, message: `unsupported ${method}` } };
    }
  });
  await b.context.addInitScript(() => {
    const w = window as unknown as { ethereum: unknown; __wallet(method: string, params: unknown[]): Promise<unknown> };
    w.ethereum = {
      async request({ method, params }: { method: string; params?: unknown[] }) {
        const result = (await w.__wallet(method, params ?? [])) as { __error?: { code: number; message: string } } | null;
        if (result && typeof result === 'object' && '__error' in result && result.__error) {
          throw Object.assign(new Error(result.__error.message), { code: result.__error.code });
        }
        return result;
      },
      on() {},
      removeListener() {},
    };
  });
  return wallet;
}

describe('hosted page in Chromium: expiry, keyboard, phone, wallet', { skip: skipWithoutChromium() }, () => {
  test('at zero the address disappears for an "expired — start again" state, which starts over', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const shop = await startShop(t);
    const pool: [string, string] = ['bc1qexampledepositaddress0000000000000001', 'bc1qexampledepositaddress0000000000000002'];
    await d.seedPool('bitcoin', pool);
    const inv = await newInvoice(d, shop);
    const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.id}/checkout`, { blockchain: 'bitcoin', cryptoCurrency: 'BTC' });
    const pid = co.json.data.payment.id;

    const b = await openBrowser(t, { allowedOrigins: [d.url, shop], viewport: PHONE, isMobile: true });
    const { page } = b;
    await inBrowser(b, 'expiry', async () => {
      // The window's last 4 s start once the browser is up (its start-up on a busy machine took them before).
      await d.common.db.em().nativeUpdate(Payment, { id: pid }, { expiresAt: new Date(Date.now() + 4000) });
      // Reopening the page resumes the payment in progress.
      await page.goto(`${d.url}/i/${inv.id}`);
      await visible(b, 'pay');
      assert.equal(await slotText(b, 'address'), pool[0]);
      assert.match((await slotText(b, 'pay-timer')) ?? '', /^Time left to pay: 0:0[1-4]$/);
      assert.equal(await page.locator('[data-slot="uri"]').getAttribute('href'), `bitcoin:${pool[0]}?amount=${co.json.data.payment.amount}`);
      await shot(b, 'phone-pay');

      await visible(b, 'expired-payment', 8000);
      assert.equal((await page.locator('[data-view="expired-payment"] h2').textContent())?.trim(), 'Payment window expired — start again');
      assert.equal(await slotText(b, 'address'), '');
      assert.equal(await page.locator('[data-slot="qr"]').getAttribute('src'), null);
      assert.ok(!(await page.content()).includes(pool[0]), 'the address is gone from the page');
      const qr = await d.plain('GET', `/i/${inv.id}/payments/${pid}/qr.svg`);
      assert.equal(qr.status, 410);
      await shot(b, 'phone-expired');

      await page.getByRole('button', { name: 'Start again' }).click();
      await visible(b, 'choose');
      assert.equal((await d.plain('GET', `/checkout/api/v1/payments/${pid}/status`)).json.data.status, 'EXPIRED');
      await page.getByRole('radio', { name: /^Bitcoin/ }).check();
      assert.ok(await page.getByRole('radio', { name: 'BTC', exact: true }).isChecked(), 'a single coin is preselected');
      await page.getByRole('button', { name: 'Show payment address' }).click();
      await visible(b, 'pay');
      assert.equal(await slotText(b, 'address'), pool[1], 'a new address: a leased one is never reused');
      // Phone width: nothing overflows horizontally.
      assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
      assertClean(b, [d.url, shop]);
    });
  });

  test('expired, cancelled and unknown invoices show clear pages; cancel goes to cancelUrl', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const shop = await startShop(t);
    const b = await openBrowser(t, { allowedOrigins: [d.url, shop] });
    const { page } = b;
    await inBrowser(b, 'end-pages', async () => {
      const unknown = await page.goto(`${d.url}/i/doesnotexist0000000000000`);
      assert.equal(unknown?.status(), 404);
      assert.equal(await page.locator('h1').textContent(), 'Payment request not found');
      // Chromium logs the 404 of the document itself; that one is expected.
      assert.deepEqual(b.problems.splice(0), [`console: Failed to load resource: the server responded with a status of 404 (Not Found) @ ${d.url}/i/doesnotexist0000000000000`]);

      const expired = await newInvoice(d, shop);
      await d.common.db.em().nativeUpdate(Invoice, { id: expired.id }, { expiresAt: new Date(Date.now() - 1000) });
      const e = await page.goto(`${d.url}/i/${expired.id}`);
      assert.equal(e?.status(), 200);
      assert.equal(await page.locator('h1').textContent(), 'This payment request has expired');
      await shot(b, 'page-expired');

      const open = await newInvoice(d, shop, { expiresInMinutes: 15 });
      await page.goto(`${d.url}/i/${open.id}`);
      await visible(b, 'choose');
      await d.signed('DELETE', `/api/v1/invoices/${open.id}`);
      await page.reload();
      assert.equal(await page.locator('h1').textContent(), 'This payment request was cancelled');

      const other = await newInvoice(d, shop);
      await page.goto(`${d.url}/i/${other.id}`);
      await visible(b, 'choose');
      await page.getByRole('link', { name: 'Cancel and return to Acme Corp' }).click();
      await page.waitForURL(`${shop}/cart`);
      assertClean(b, [d.url, shop]);
    });
  });

  test('a testnet payment is labelled, polled and paid on its own network, never mainnet', async (t) => {
    // Ethereum mainnet is offered too (a free address), so a mainnet fallback would show.
    const d = await startTestDaemon(t, 'sqlite', { chains: { ethereum: { mainnet: { blockTimeMs: 1000 }, testnet: { blockTimeMs: 1000, paymentContract: CONTRACT, treasury: TREASURY } } } });
    const shop = await startShop(t);
    await d.seedPool('ethereum', evmAddresses(1, 76));
    await d.seedPool('ethereum', evmAddresses(2, 77), true);
    const direct = await newInvoice(d, shop);
    const co = await d.signed('POST', `/api/v1/invoices/${direct.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH', testnet: true });
    assert.equal(co.status, 201, co.text);
    // A contract (web3) payment on the testnet: the gateway opens direct ones, so this one is made by hand.
    const viaWallet = await newInvoice(d, shop);
    const co2 = await d.signed('POST', `/api/v1/invoices/${viaWallet.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH', testnet: true });
    await d.common.db.em().nativeUpdate(Payment, { id: co2.json.data.payment.id }, {
      paymentType: 'SMART_CONTRACT', method: 'web3', address: TREASURY, contractAddress: CONTRACT,
      externalId: `0x${'12'.repeat(32)}`, externalIdUuid: '12121212-1212-4212-9212-121212121212',
    });
    const b = await openBrowser(t, { allowedOrigins: [d.url, shop] });
    const wallet = await installFakeWallet(b, '0x1');
    await inBrowser(b, 'testnet-label', async () => {
      await b.page.goto(`${d.url}/i/${direct.id}`);
      await visible(b, 'pay');
      assert.equal(await slotText(b, 'network-name'), 'Network: Ethereum Sepolia testnet');
      assert.doesNotMatch((await slotText(b, 'network-warning')) ?? '', /mainnet/);

      await b.page.goto(`${d.url}/i/${viaWallet.id}`);
      await visible(b, 'wallet');
      assert.equal(await slotText(b, 'wallet-network-name'), 'Network: Ethereum Sepolia testnet');
      await b.page.getByRole('button', { name: 'Connect wallet and pay' }).click();
      await b.page.waitForSelector('[data-slot="wallet-tx"]:not([hidden])');
      assert.deepEqual(wallet.switchPrompts, ['Switching your wallet to Ethereum Sepolia testnet…'], 'the wallet prompt names the testnet');
      assert.equal(wallet.chainId, '0xaa36a7', 'the wallet was switched to Sepolia, not mainnet');
      assert.equal(wallet.sent.length, 1);
      assert.equal(wallet.sent[0]!.to.toLowerCase(), CONTRACT.toLowerCase());
      assertClean(b, [d.url, shop]);
    });
  });

  test('keyboard only: choose with Tab, arrows and Space, continue with Enter', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const shop = await startShop(t);
    await d.seedPool('ethereum', evmAddresses(1, 76));
    await d.seedPool('polygon', evmAddresses(1, 77));
    const inv = await newInvoice(d, shop);
    const b = await openBrowser(t, { allowedOrigins: [d.url, shop] });
    const { page } = b;
    await inBrowser(b, 'keyboard', async () => {
      await page.goto(`${d.url}/i/${inv.id}`);
      await visible(b, 'choose');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => (document.activeElement).value), 'ethereum');
      await page.keyboard.press('ArrowRight');
      assert.equal(await page.evaluate(() => (document.querySelector('input[name="chain"]:checked')).value), 'polygon');
      const ring = await page.evaluate(() => getComputedStyle(document.activeElement!.closest('label')!).outlineStyle);
      assert.equal(ring, 'solid', 'the focused option shows a focus ring');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Space');
      assert.equal(await page.evaluate(() => (document.querySelector('input[name="coin"]:checked')).value), 'POL');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Show payment address');
      await page.keyboard.press('Enter');
      await visible(b, 'pay');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Send your payment');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Copy amount');
      assertClean(b, [d.url, shop]);
    });
  });

  test('pay with a browser wallet: switch chain, approve the token, call PaymentGateway.pay', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', { chains: { ethereum: { mainnet: { paymentContract: CONTRACT, treasury: TREASURY, blockTimeMs: 1000 } } } });
    await d.seedPool('ethereum', evmAddresses(1, 78));
    await d.seedPool('polygon', evmAddresses(1, 79));
    const shop = await startShop(t);
    const b = await openBrowser(t, { allowedOrigins: [d.url, shop] });
    const { page } = b;

    const wallet = await installFakeWallet(b, '0x89');
    const { sent, calls } = wallet;
    const gateway = new Interface(JSON.parse(readFileSync(new URL('../../contracts/build/PaymentGateway.json', import.meta.url), 'utf8')).abi);
    const erc20 = new Interface(['function approve(address spender, uint256 amount) returns (bool)']);

    await inBrowser(b, 'wallet', async () => {
      // Native coin.
      const native = await newInvoice(d, shop);
      await page.goto(`${d.url}/i/${native.id}`);
      await visible(b, 'choose');
      await page.getByRole('radio', { name: /^Polygon/ }).check();
      await page.getByRole('radio', { name: 'POL', exact: true }).check();
      assert.ok(await page.locator('[data-slot="wallet-start"]').isHidden(), 'no contract on polygon, no wallet button');
      await page.getByRole('radio', { name: /^Ethereum/ }).check();
      await page.getByRole('radio', { name: 'ETH', exact: true }).check();
      await page.getByRole('button', { name: 'Pay with browser wallet' }).click();
      await visible(b, 'wallet');
      assert.equal(await slotText(b, 'wallet-intro'), 'Your wallet will ask you to approve one transaction.');
      await shot(b, 'wallet-1');
      await page.getByRole('button', { name: 'Connect wallet and pay' }).click();
      await page.waitForSelector('[data-slot="wallet-tx"]:not([hidden])');
      assert.equal(wallet.chainId, '0x1', 'the wallet was switched to Ethereum mainnet');
      assert.deepEqual(wallet.switchPrompts, ['Switching your wallet to Ethereum mainnet…']);
      assert.equal(sent.length, 1);
      const payment = (await d.plain('GET', `/checkout/api/v1/invoices/${native.id}/status`)).json.data.paymentId;
      const p = (await d.plain('GET', `/checkout/api/v1/payments/${payment}/status`)).json.data;
      const pay = gateway.parseTransaction({ data: sent[0]!.data, value: BigInt(sent[0]!.value ?? 0) })!;
      assert.equal(pay.name, 'pay');
      assert.equal(sent[0]!.to.toLowerCase(), CONTRACT.toLowerCase());
      assert.equal(sent[0]!.from.toLowerCase(), BUYER);
      assert.equal(pay.args[0], p.externalId);
      assert.equal(pay.args[1], '0x0000000000000000000000000000000000000000', 'token address(0) is the native coin');
      assert.equal(pay.args[2], 8333333333333334n, '$25 at ETH = 3000, in wei');
      assert.equal(BigInt(sent[0]!.value!), 8333333333333334n, 'msg.value equals the amount');
      assert.equal(await slotText(b, 'wallet-tx-hash'), `0x${'1'.padStart(64, '0')}`);
      await shot(b, 'wallet-2-sent');

      // The indexer matches the PaymentReceived event: the page follows the confirmations.
      await d.common.db.em().nativeUpdate(Payment, { id: payment }, { status: 'CONFIRMING', confirmations: 1, transactionHash: `0x${'1'.padStart(64, '0')}` });
      await visible(b, 'confirming', 10_000);
      await page.waitForFunction(() => document.querySelector('[data-slot="confirmations"]')?.textContent === '1 / 12 confirmations');

      // A token: approve the contract first, then pay with msg.value 0.
      sent.length = 0;
      wallet.chainId = '0x1';
      const token = await newInvoice(d, shop);
      await page.goto(`${d.url}/i/${token.id}`);
      await visible(b, 'choose');
      await page.getByRole('radio', { name: /^Ethereum/ }).check();
      await page.getByRole('radio', { name: 'USDC', exact: true }).check();
      await page.getByRole('button', { name: 'Pay with browser wallet' }).click();
      await visible(b, 'wallet');
      assert.match((await slotText(b, 'wallet-intro')) ?? '', /two transactions: first allow the payment contract to take 25 USDC/);
      await page.getByRole('button', { name: 'Connect wallet and pay' }).click();
      await page.waitForSelector('[data-slot="wallet-tx"]:not([hidden])');
      assert.equal(sent.length, 2);
      assert.equal(sent[0]!.to.toLowerCase(), USDC.toLowerCase());
      const approve = erc20.parseTransaction({ data: sent[0]!.data })!;
      assert.deepEqual([approve.name, approve.args[0].toLowerCase(), approve.args[1]], ['approve', CONTRACT.toLowerCase(), 25_000_000n]);
      const payToken = gateway.parseTransaction({ data: sent[1]!.data })!;
      assert.equal(payToken.args[1], USDC);
      assert.equal(payToken.args[2], 25_000_000n);
      assert.equal(BigInt(sent[1]!.value ?? '0x0'), 0n);
      assert.ok(calls.includes('eth_getTransactionReceipt'), 'waited for the approval to be mined');
      assertClean(b, [d.url, shop]);
    });
  });
});
