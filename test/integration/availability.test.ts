import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, TEST_MASTER_KEY, type TestDaemon } from '../helpers/daemon.ts';
import { listenLocal } from '../helpers/local-server.ts';
import { openBrowser, skipWithoutChromium, inBrowser } from '../helpers/browser.ts';

// "Offer only what can work" (docs/checkout.md#what-is-offered): a chain with an empty pool, a
// chain whose indexer went quiet and a chain whose coin has no price are left out of the public
// read, the hosted page and `chaingate status`'s offer, and come back once fixed.

/** A CoinGecko-style simple-price API whose coins the test chooses. */
async function startPrices(t: { after(fn: () => Promise<void>): void }) {
  const prices: Record<string, number> = { ethereum: 3000, 'binancecoin': 600, 'polygon-ecosystem-token': 0.5 };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const fiat = url.searchParams.get('vs_currencies') ?? 'usd';
    const body: Record<string, Record<string, number>> = {};
    for (const [id, usd] of Object.entries(prices)) if (fiat === 'usd') body[id] = { usd, last_updated_at: Math.floor(Date.now() / 1000) };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  const local = await listenLocal(server);
  t.after(() => local.close());
  return { url: local.url, prices };
}

const ONLY = ['ethereum', 'polygon', 'bsc', 'bitcoin'];
const OTHERS = ['arbitrum', 'optimism', 'base', 'avalanche', 'tron', 'solana', 'ton'];

function settings(priceUrl: string) {
  return {
    chains: Object.fromEntries(OTHERS.map((c) => [c, { enabled: false }])),
    pricing: { mode: 'convert', source: 'http', http: { baseUrl: priceUrl, ttlSeconds: 0, timeoutMs: 2000 } },
    checkout: { indexerStaleAfterSeconds: 60, availabilityCacheMs: 0 },
  };
}

async function offered(d: TestDaemon, invoiceId: string) {
  const res = await d.plain('GET', `/checkout/api/v1/invoices/${invoiceId}`);
  assert.equal(res.status, 200, res.text);
  return res.json.data as { availableBlockchains: string[]; availableCurrencies: Record<string, string[]> };
}

function bootChains(html: string): string[] {
  const m = /<script type="application\/json" id="cg-boot">([^<]*)<\/script>/.exec(html);
  assert.ok(m, 'boot block');
  return Object.keys((JSON.parse(m[1]!) as { chains: Record<string, unknown> }).chains);
}

async function newInvoice(d: TestDaemon) {
  const res = await d.signed('POST', '/api/v1/invoices', { orderId: `o-${Math.random()}`, amount: '2500', currency: 'USD', returnUrl: 'https://shop.example/ok' });
  assert.equal(res.status, 201, res.text);
  return res.json.data.id as string;
}

/** ethereum works; polygon has an empty pool; bsc's indexer went quiet 10 minutes ago; bitcoin has no price. */
async function brokenWorld(d: TestDaemon) {
  await d.seedPool('ethereum', evmAddresses(3, 1));
  await d.seedPool('bsc', evmAddresses(3, 2));
  await d.seedPool('bitcoin', ['bc1qexampledepositaddress0000000000000001', 'bc1qexampledepositaddress0000000000000002']);
  for (const chain of ['ethereum', 'polygon', 'bitcoin']) await d.markIndexed(chain);
  await d.markIndexed('bsc', { at: new Date(Date.now() - 10 * 60_000), lastError: 'FetchError: connect ECONNREFUSED 127.0.0.1:8545' });
}

async function fixWorld(d: TestDaemon, prices: Record<string, number>) {
  await d.seedPool('polygon', evmAddresses(3, 3));
  await d.markIndexed('bsc');
  prices.bitcoin = 60000;
}

for (const dialect of DIALECTS) {
  describe(`what buyers are offered on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('an empty pool, a silent indexer and a missing price each leave a chain out, until fixed', async (t) => {
      const rates = await startPrices(t);
      const d = await startTestDaemon(t, dialect, settings(rates.url));
      await brokenWorld(d);
      const id = await newInvoice(d);

      const before = await offered(d, id);
      assert.deepEqual(before.availableBlockchains, ['ethereum']);
      assert.deepEqual(before.availableCurrencies, { ethereum: ['ETH', 'USDT', 'USDC'] });
      assert.deepEqual(bootChains((await d.plain('GET', `/i/${id}`)).text), ['ethereum'], 'the page offers the same');

      // Checking out what is not offered is refused with a code, and the invoice stays OPEN.
      const tryPair = (blockchain: string, cryptoCurrency: string) => d.plain('POST', `/checkout/api/v1/invoices/${id}/checkout`, { blockchain, cryptoCurrency });
      const stale = await tryPair('bsc', 'BNB');
      assert.deepEqual([stale.status, stale.json.error.code], [503, 'SERVICE_UNAVAILABLE']);
      assert.match(stale.json.error.message, /bsc is not offered right now/);
      assert.equal(stale.headers.get('retry-after'), '30');
      const empty = await tryPair('polygon', 'POL');
      assert.deepEqual([empty.status, empty.json.error.code], [503, 'NO_AVAILABLE_WALLET']);
      const unpriced = await tryPair('bitcoin', 'BTC');
      assert.deepEqual([unpriced.status, unpriced.json.error.code], [503, 'RATE_UNAVAILABLE']);
      assert.equal((await d.signed('GET', `/api/v1/invoices/${id}`)).json.data.status, 'OPEN');

      await fixWorld(d, rates.prices);
      const after = await offered(d, id);
      assert.deepEqual(after.availableBlockchains, ['ethereum', 'polygon', 'bsc', 'bitcoin']);
      assert.deepEqual(after.availableCurrencies.bitcoin, ['BTC']);
      assert.deepEqual(after.availableCurrencies.bsc, ['BNB', 'USDT', 'USDC']);
      assert.deepEqual(bootChains((await d.plain('GET', `/i/${id}`)).text), ['ethereum', 'polygon', 'bsc', 'bitcoin']);
      const ok = await tryPair('bsc', 'BNB');
      assert.equal(ok.status, 201, ok.text);

      // A chain that loses its indexer stops being offered.
      await d.markIndexed('ethereum', { at: new Date(Date.now() - 5 * 60_000) });
      assert.ok(!(await offered(d, await newInvoice(d))).availableBlockchains.includes('ethereum'));
    });
  });
}

describe('what buyers are offered: status, caching, the page', () => {
  test('`chaingate status` says why each chain is not offered, in text and --json', async (t) => {
    const rates = await startPrices(t);
    const config = settings(rates.url);
    const d = await startTestDaemon(t, 'sqlite', config);
    await brokenWorld(d);
    const env = { CHAINGATE_DATABASE_URL: d.common.db.url, CHAINGATE_MASTER_KEY: TEST_MASTER_KEY, CHAINGATE_CONFIG: writeConfigFile(config) };
    const json = await runCli(['status', '--json'], env);
    assert.equal(json.code, 0, json.stderr);
    const offers = (JSON.parse(json.stdout) as { offers: { chain: string; network: string; offered: boolean; coins: string[]; reasons: { code: string; message: string }[] }[] }).offers;
    const byChain = Object.fromEntries(offers.filter((o) => o.network === 'MAINNET').map((o) => [o.chain, o]));
    assert.deepEqual(Object.keys(byChain), ONLY);
    assert.deepEqual([byChain.ethereum!.offered, byChain.ethereum!.coins], [true, ['ETH', 'USDT', 'USDC']]);
    assert.deepEqual(byChain.polygon!.reasons.map((r) => r.code), ['NO_FREE_ADDRESS']);
    assert.deepEqual(byChain.bsc!.reasons.map((r) => r.code), ['INDEXER_STALE']);
    // Reported 600 s before the status ran; a slow machine only makes it older.
    const ago = /last reported (\d+) s ago \(limit 60 s.*ECONNREFUSED/.exec(byChain.bsc!.reasons[0]!.message);
    assert.ok(ago && Number(ago[1]) >= 599, byChain.bsc!.reasons[0]!.message);
    assert.deepEqual(byChain.bitcoin!.reasons.map((r) => r.code), ['NO_PRICE']);

    const text = await runCli(['status'], env);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /offered to buyers\nethereum MAINNET +offered: ETH, USDT, USDC\n/);
    assert.match(text.stdout, /polygon MAINNET +NOT OFFERED: the Polygon PoS mainnet pool has no free deposit address/);
    assert.match(text.stdout, /bsc MAINNET +NOT OFFERED: the BNB Smart Chain mainnet indexer last reported/);
    assert.match(text.stdout, /bitcoin MAINNET +NOT OFFERED: no price can be made for BTC in USD/);
  });

  test('one availability answer is reused for checkout.availabilityCacheMs', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', { checkout: { indexerStaleAfterSeconds: null, availabilityCacheMs: 1500 } });
    const id = await newInvoice(d);
    assert.deepEqual((await offered(d, id)).availableBlockchains, []);
    await d.seedPool('ethereum', evmAddresses(1, 9));
    assert.deepEqual((await offered(d, id)).availableBlockchains, [], 'cached');
    await new Promise((r) => setTimeout(r, 1600));
    assert.deepEqual((await offered(d, id)).availableBlockchains, ['ethereum']);
  });

  test('the hosted page in Chromium offers only what can work', { skip: skipWithoutChromium() }, async (t) => {
    const rates = await startPrices(t);
    const d = await startTestDaemon(t, 'sqlite', settings(rates.url));
    await brokenWorld(d);
    const id = await newInvoice(d);
    const b = await openBrowser(t, { allowedOrigins: [d.url] });
    const chains = () => b.page.locator('[data-slot="chains"] input').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
    await inBrowser(b, 'offer-only-what-works', async () => {
      await b.page.goto(`${d.url}/i/${id}`);
      await b.page.waitForSelector('[data-view="choose"]:not([hidden])');
      assert.deepEqual(await chains(), ['ethereum']);
      await fixWorld(d, rates.prices);
      await b.page.reload();
      await b.page.waitForSelector('[data-view="choose"]:not([hidden])');
      assert.deepEqual(await chains(), ['ethereum', 'polygon', 'bsc', 'bitcoin']);
    });
  });
});
