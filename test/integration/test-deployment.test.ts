import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../../src/domain/errors.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { resolveChains } from '../../src/families/families.ts';

// A test deployment (checkout.offerTestnets: true, as the devnet's config sets) offers buyers each
// chain's testnet instead of its mainnet, names it as such on the page and in every answer, and
// makes the gateway's `testnet` default to true, so an integration runs unchanged against it. A
// production config (the default) offers mainnets only, whatever testnet pools exist.

const OTHERS = ['polygon', 'bsc', 'arbitrum', 'optimism', 'base', 'avalanche', 'bitcoin', 'tron', 'solana', 'ton'];
const settings = (offerTestnets: boolean) => ({
  chains: Object.fromEntries(OTHERS.map((c) => [c, { enabled: false }])),
  checkout: { offerTestnets, indexerStaleAfterSeconds: 60, availabilityCacheMs: 0 },
});

/** ethereum's mainnet and testnet both have a pool and a reporting indexer. */
async function bothNetworks(d: TestDaemon) {
  await d.seedPool('ethereum', evmAddresses(2, 1));
  await d.seedPool('ethereum', evmAddresses(3, 2), true);
  await d.markIndexed('ethereum');
  await d.markIndexed('ethereum', { testnet: true });
}

async function newInvoice(d: TestDaemon): Promise<string> {
  const res = await d.signed('POST', '/api/v1/invoices', { orderId: `o-${Math.random()}`, amount: '2500', currency: 'USD' });
  assert.equal(res.status, 201, res.text);
  return res.json.data.id as string;
}

function boot(html: string): { chains: Record<string, { label: string; testnet: boolean; chainId: number }> } {
  const m = /<script type="application\/json" id="cg-boot">([^<]*)<\/script>/.exec(html);
  assert.ok(m, 'boot block');
  return JSON.parse(m[1]!) as ReturnType<typeof boot>;
}

for (const dialect of DIALECTS) {
  describe(`test deployments on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('checkout.offerTestnets: the buyer reads, checks out and sees the testnet, marked as such; mainnet is not offered to buyers', async (t) => {
      const d = await startTestDaemon(t, dialect, settings(true));
      await bothNetworks(d);
      const id = await newInvoice(d);

      const read = await d.plain('GET', `/checkout/api/v1/invoices/${id}`);
      assert.deepEqual([read.json.data.availableBlockchains, read.json.data.availableCurrencies], [['ethereum'], { ethereum: ['ETH', 'USDC'] }], "the testnet's coins (Sepolia carries no USDT)");
      const html = await (await fetch(`${d.url}/i/${id}`)).text();
      assert.deepEqual(boot(html).chains.ethereum, { ...boot(html).chains.ethereum, label: 'Ethereum Sepolia testnet', testnet: true, chainId: 11_155_111 });
      const banners = [...html.matchAll(/<p class="banner" role="note" data-slot="banner">.*?<span>([^<]*)<\/span><\/p>/g)].map((m) => m[1]);
      assert.deepEqual(banners, ['Test payments only — this checkout runs on test networks. Never send real funds.']);

      const co = await d.plain('POST', `/checkout/api/v1/invoices/${id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC' });
      assert.equal(co.status, 201, co.text);
      const p = co.json.data.payment;
      assert.deepEqual([p.network, p.networkLabel, p.chainId, p.requiredConfirmations], ['SEPOLIA', 'Ethereum Sepolia testnet', 11_155_111, 3]);
      assert.ok(evmAddresses(3, 2).includes(p.paymentAddress), 'leased from the testnet pool');
      // USDT exists on mainnet only: not offered here, and refused at checkout.
      const other = await newInvoice(d);
      const usdt = await d.plain('POST', `/checkout/api/v1/invoices/${other}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDT' });
      assert.deepEqual([usdt.status, usdt.json.error.code], [400, 'INVALID_CURRENCY']);
      // Still no testnet selector on the buyer surface (spec).
      const selector = await d.plain('POST', `/checkout/api/v1/invoices/${other}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH', testnet: false });
      assert.deepEqual([selector.status, selector.json.error.code], [400, 'VALIDATION_ERROR']);
    });

    test("checkout.offerTestnets: the gateway's `testnet` defaults to true, and false still picks mainnet", async (t) => {
      const d = await startTestDaemon(t, dialect, settings(true));
      await bothNetworks(d);
      const implicit = await d.signed('POST', `/api/v1/invoices/${await newInvoice(d)}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(implicit.status, 201, implicit.text);
      assert.deepEqual([implicit.json.data.payment.network, implicit.json.data.payment.isTestnet], ['SEPOLIA', true]);
      const explicit = await d.signed('POST', `/api/v1/invoices/${await newInvoice(d)}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH', testnet: false });
      assert.equal(explicit.status, 201, explicit.text);
      assert.deepEqual([explicit.json.data.payment.network, explicit.json.data.payment.isTestnet], ['MAINNET', false]);
    });

    test('a production config offers mainnets only: a testnet with a pool and an indexer is not offered to buyers', async (t) => {
      const d = await startTestDaemon(t, dialect, settings(false));
      await d.seedPool('ethereum', evmAddresses(3, 2), true);
      await d.markIndexed('ethereum', { testnet: true });
      const id = await newInvoice(d);
      assert.deepEqual((await d.plain('GET', `/checkout/api/v1/invoices/${id}`)).json.data.availableBlockchains, []);
      const html = await (await fetch(`${d.url}/i/${id}`)).text();
      assert.deepEqual(boot(html).chains, {});
      assert.ok(!html.includes('data-slot="banner"'), 'no banner on a production page');
      const co = await d.plain('POST', `/checkout/api/v1/invoices/${id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(co.status, 503, 'the buyer checks out on mainnet, whose pool is empty');
      const gateway = await d.signed('POST', `/api/v1/invoices/${id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(gateway.status, 503, "the gateway's default stays mainnet");
    });
  });
}

test('network: DEVNET names a local EVM chain with its own id and no public token contracts; refused where it would not be true', () => {
  const rpcUrl = 'http://127.0.0.1:8545';
  const devnet = resolveChains({ ethereum: { testnet: { network: 'DEVNET', chainId: 31_337, rpcUrl } } }).chains.ethereum.testnet;
  assert.deepEqual([devnet.network, devnet.chainId, devnet.label, devnet.testnet], ['DEVNET', 31_337, 'Ethereum devnet', true]);
  assert.deepEqual(devnet.tokens.map((t) => t.symbol), ['ETH'], "Sepolia's USDC contract is not on a local chain");
  assert.equal(resolveChains({ ethereum: { testnet: { network: 'DEVNET', rpcUrl } } }).chains.ethereum.testnet.chainId, 31_337, "Hardhat's id by default");
  const refused = (chains: Parameters<typeof resolveChains>[0], message: RegExp) => assert.throws(() => resolveChains(chains), (err: Error) => err instanceof UsageError && message.test(err.message));
  refused({ ethereum: { testnet: { network: 'DEVNET' } } }, /chains\.ethereum\.testnet\.rpcUrl: required with network: DEVNET/);
  refused({ ethereum: { mainnet: { network: 'DEVNET', rpcUrl } } }, /chains\.ethereum\.mainnet\.network: a mainnet is MAINNET/);
  refused({ bitcoin: { testnet: { network: 'DEVNET', rpcUrl } } }, /chains\.bitcoin\.testnet\.network: DEVNET is a local EVM chain; bitcoin's testnet takes TESTNET4, SIGNET or REGTEST/);
  refused({ ethereum: { testnet: { network: 'REGTEST' } } }, /chains\.ethereum\.testnet\.network: REGTEST is one of bitcoin's test networks; ethereum's testnet takes DEVNET/);
  refused({ ethereum: { testnet: { chainId: 31_337 } } }, /chains\.ethereum\.testnet\.chainId: only a local chain \(network: DEVNET\) has an id of its own/);
});
