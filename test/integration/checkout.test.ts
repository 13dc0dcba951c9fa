import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { externalIdFromUuid } from '../../src/domain/external-id.ts';
import { parseUnits } from '../../src/domain/money.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type TestDaemon, type TestMerchant } from '../helpers/daemon.ts';

const INVOICE = { orderId: 'order-1', amount: '2500', currency: 'USD' };
const ISO_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const CONTRACT = '0x00000000000000000000000000000000000c0de1';
const TREASURY = '0x0000000000000000000000000000000000007ea5';
const WITH_CONTRACT = { chains: { ethereum: { mainnet: { paymentContract: CONTRACT, treasury: TREASURY } } } };

async function newInvoice(d: TestDaemon, extra: Record<string, unknown> = {}, merchant?: TestMerchant) {
  const res = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, ...extra }, merchant ? { merchant } : {});
  assert.equal(res.status, 201, res.text);
  return res.json.data as { id: string; referenceId: string; expiresAt: string; [k: string]: unknown };
}

const ALL_CHAINS = ['ethereum', 'polygon', 'bsc', 'arbitrum', 'optimism', 'base', 'avalanche', 'bitcoin', 'tron', 'solana', 'ton'];

const checkoutPath = (id: string) => `/checkout/api/v1/invoices/${id}/checkout`;

async function backdate(d: TestDaemon, entity: typeof Invoice | typeof Payment, id: string) {
  await d.common.db.em().nativeUpdate(entity as typeof Invoice, { id }, { expiresAt: new Date(Date.now() - 1000) });
}

/** Every key and every scalar value (as a string) anywhere in a JSON document. */
function keysAndValues(json: unknown): { keys: Set<string>; values: Set<string> } {
  const keys = new Set<string>();
  const values = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
      return;
    }
    if (node !== null && typeof node === 'object') {
      for (const [key, value] of Object.entries(node)) {
        keys.add(key);
        walk(value);
      }
      return;
    }
    values.add(String(node));
  };
  walk(json);
  return { keys, values };
}

async function viewedAt(d: TestDaemon, id: string): Promise<string | null> {
  return (await d.signed('GET', `/api/v1/invoices/${id}`)).json.data.viewedAt;
}

for (const dialect of DIALECTS) {
  describe(`checkout API: invoices on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('GET invoice shows the spec fields, masks the buyer, hides metadata and stamps viewedAt once', async (t) => {
      const d = await startTestDaemon(t, dialect);
      // Only chains whose pool has a free address are offered (docs/checkout.md#what-is-offered).
      for (const chain of ALL_CHAINS) await d.seedPool(chain, [`${chain}-deposit-1`]);
      const inv = await newInvoice(d, {
        description: 'Two mugs',
        customerEmail: 'jane@example.com',
        customerName: 'Jane Doe',
        metadata: { secret: 'internal-note' },
        customerMetadata: { vip: true },
        returnUrl: 'https://shop.example/ok',
        cancelUrl: 'https://shop.example/cancel',
      });
      assert.equal(await viewedAt(d, inv.id), null, 'the gateway read does not stamp viewedAt');

      const res = await d.plain('GET', `/checkout/api/v1/invoices/${inv.id}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.success, true);
      assert.match(res.json.requestId, /^req_/);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const pub = res.json.data;
      assert.deepEqual(Object.keys(pub), ['id', 'referenceId', 'amount', 'currency', 'description', 'merchant', 'availableBlockchains', 'availableCurrencies', 'customerEmail', 'customerName', 'status', 'expiresAt', 'returnUrl', 'cancelUrl']);
      assert.equal(pub.id, inv.id);
      assert.equal(pub.referenceId, inv.referenceId);
      assert.deepEqual([pub.amount, pub.currency, pub.description, pub.status], ['2500', 'USD', 'Two mugs', 'OPEN']);
      assert.deepEqual(pub.merchant, { name: 'Acme Corp' });
      assert.equal(pub.customerEmail, 'j***@example.com');
      assert.equal(pub.customerName, 'J*** D***');
      assert.equal(pub.expiresAt, inv.expiresAt);
      assert.deepEqual([pub.returnUrl, pub.cancelUrl], ['https://shop.example/ok', 'https://shop.example/cancel']);
      // Looked for as fields and values, not substrings: a random id or reference may contain "vip".
      const { keys, values } = keysAndValues(res.json);
      for (const hidden of ['metadata', 'customerMetadata', 'vip', 'secret', 'orderId']) assert.ok(!keys.has(hidden), `field ${hidden} is not shown: ${res.text}`);
      // Each holds a '-', '@' or ' ', which no id or reference does: a value holding one is a leak.
      for (const hidden of ['internal-note', 'jane@', 'Jane Doe', 'order-1']) assert.ok(![...values].some((v) => v.includes(hidden)), `value ${hidden} is not shown: ${res.text}`);
      assert.deepEqual(pub.availableBlockchains, ALL_CHAINS);
      assert.deepEqual(pub.availableCurrencies.ethereum, ['ETH', 'USDT', 'USDC']);
      assert.deepEqual(pub.availableCurrencies.bitcoin, ['BTC']);
      assert.deepEqual(pub.availableCurrencies.base, ['ETH', 'USDC']);

      const first = await viewedAt(d, inv.id);
      assert.match(first ?? '', ISO_MS);
      await new Promise((r) => setTimeout(r, 15));
      await d.plain('GET', `/checkout/api/v1/invoices/${inv.id}`);
      assert.equal(await viewedAt(d, inv.id), first, 'only the first read stamps viewedAt');

      const bare = await newInvoice(d);
      const plain = await d.plain('GET', `/checkout/api/v1/invoices/${bare.id}`);
      assert.deepEqual([plain.json.data.customerEmail, plain.json.data.customerName, plain.json.data.returnUrl, plain.json.data.cancelUrl, plain.json.data.description], [null, null, null, null, '']);
    });

    test('available chains and coins are the registry narrowed by the merchant', async (t) => {
      const d = await startTestDaemon(t, dialect, { chains: { tron: { enabled: false } } });
      for (const chain of ALL_CHAINS) await d.seedPool(chain, [`${chain}-deposit-1`]);
      const m = await d.createMerchant({ name: 'Narrow shop', acceptedChains: ['ethereum', 'bitcoin', 'tron', 'polygon'] });
      await d.common.db.em().nativeUpdate(MerchantPoint, { id: m.id }, { acceptedCurrencies: { ethereum: ['USDC'], polygon: ['DOGE'] } });
      const inv = await newInvoice(d, {}, m);
      const res = await d.plain('GET', `/checkout/api/v1/invoices/${inv.id}`);
      assert.deepEqual(res.json.data.merchant, { name: 'Narrow shop' });
      // tron is disabled in config; polygon has no coin left after the merchant's filter
      assert.deepEqual(res.json.data.availableBlockchains, ['ethereum', 'bitcoin']);
      assert.deepEqual(res.json.data.availableCurrencies, { ethereum: ['USDC'], bitcoin: ['BTC'] });
      const refused = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.deepEqual([refused.status, refused.json.error.code], [400, 'INVALID_CURRENCY']);
    });

    test('expired, cancelled and unknown invoices are refused with their codes, without stamping viewedAt', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const expired = await newInvoice(d);
      await backdate(d, Invoice, expired.id);
      const e = await d.plain('GET', `/checkout/api/v1/invoices/${expired.id}`);
      assert.deepEqual([e.status, e.json.success, e.json.error.code], [400, false, 'INVOICE_EXPIRED']);
      assert.equal(await viewedAt(d, expired.id), null);

      const cancelled = await newInvoice(d);
      await d.signed('DELETE', `/api/v1/invoices/${cancelled.id}`);
      const c = await d.plain('GET', `/checkout/api/v1/invoices/${cancelled.id}`);
      assert.deepEqual([c.status, c.json.error.code], [400, 'INVOICE_CANCELLED']);
      assert.equal(await viewedAt(d, cancelled.id), null);

      for (const id of ['doesnotexist0000000000000', 'INV-250101-001A', '..%2F..%2Fetc']) {
        const u = await d.plain('GET', `/checkout/api/v1/invoices/${id}`);
        assert.deepEqual([u.status, u.json.error.code, u.headers.get('cache-control')], [404, 'INVOICE_NOT_FOUND', 'no-store'], id);
        const s = await d.plain('GET', `/checkout/api/v1/invoices/${id}/status`);
        assert.deepEqual([s.status, s.json.error.code], [404, 'INVOICE_NOT_FOUND'], id);
        const co = await d.plain('POST', checkoutPath(id), { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
        assert.deepEqual([co.status, co.json.error.code], [404, 'INVOICE_NOT_FOUND'], id);
      }
      const wrong = await d.plain('PUT', `/checkout/api/v1/invoices/${expired.id}`, {});
      assert.deepEqual([wrong.status, wrong.json.error.code, wrong.headers.get('allow')], [405, 'METHOD_NOT_ALLOWED', 'GET, HEAD']);
    });

    test('the status poll answers 200 in every invoice state with status, paymentId and paidAt', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(2));
      const inv = await newInvoice(d);
      const path = `/checkout/api/v1/invoices/${inv.id}/status`;
      const open = await d.plain('GET', path);
      assert.equal(open.status, 200);
      assert.deepEqual(open.json.data, { status: 'OPEN', paymentId: null, paidAt: null });
      assert.equal(await viewedAt(d, inv.id), null, 'the cheap poll does not count as a view');

      const co = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      const pid = co.json.data.payment.id;
      assert.deepEqual((await d.plain('GET', path)).json.data, { status: 'PAYMENT_PENDING', paymentId: pid, paidAt: null });

      const paidAt = new Date();
      await d.common.db.em().nativeUpdate(Invoice, { id: inv.id }, { status: 'PAID', paidAt });
      await d.common.db.em().nativeUpdate(Payment, { id: pid }, { status: 'COMPLETED', completedAt: paidAt });
      assert.deepEqual((await d.plain('GET', path)).json.data, { status: 'PAID', paymentId: pid, paidAt: paidAt.toISOString() });
      assert.equal((await d.plain('GET', `/checkout/api/v1/invoices/${inv.id}`)).json.data.status, 'PAID');

      const expired = await newInvoice(d);
      await backdate(d, Invoice, expired.id);
      const ex = await d.plain('GET', `/checkout/api/v1/invoices/${expired.id}/status`);
      assert.deepEqual([ex.status, ex.json.data], [200, { status: 'EXPIRED', paymentId: null, paidAt: null }]);

      const cancelled = await newInvoice(d);
      await d.signed('DELETE', `/api/v1/invoices/${cancelled.id}`);
      const ca = await d.plain('GET', `/checkout/api/v1/invoices/${cancelled.id}/status`);
      assert.deepEqual([ca.status, ca.json.data], [200, { status: 'CANCELLED', paymentId: null, paidAt: null }]);
    });
  });

  describe(`checkout API: checkout on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('direct (the default method) leases a pool address and answers the spec fields', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const pool = evmAddresses(2);
      await d.seedPool('ethereum', pool);
      const inv = await newInvoice(d, { expiresInMinutes: 20 });
      const res = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: 'USDT' });
      assert.equal(res.status, 201, res.text);
      assert.deepEqual(Object.keys(res.json.data), ['payment']);
      const p = res.json.data.payment;
      assert.deepEqual(Object.keys(p), ['id', 'referenceId', 'method', 'status', 'paymentAddress', 'paymentUri', 'amount', 'cryptoCurrency', 'blockchain', 'network', 'networkLabel', 'decimals', 'tokenAddress', 'chainId', 'requiredConfirmations', 'expiresAt', 'createdAt']);
      assert.equal(p.method, 'direct');
      assert.equal(p.status, 'PENDING');
      assert.equal(p.paymentAddress, pool[0]);
      assert.equal(p.amount, '25');
      assert.deepEqual([p.cryptoCurrency, p.blockchain, p.network, p.decimals, p.chainId, p.requiredConfirmations], ['USDT', 'ethereum', 'MAINNET', 6, 1, 12]);
      assert.equal(p.tokenAddress, '0xdAC17F958D2ee523a2206206994597C13D831ec7');
      assert.equal(p.paymentUri, `ethereum:${p.tokenAddress}@1/transfer?address=${pool[0]}&uint256=25000000`);
      assert.equal(p.expiresAt, inv.expiresAt, 'window = min(now + 30 min, invoice.expiresAt)');
      assert.match(p.referenceId, /^PAY-\d{6}-\d{3,}[A-Z]$/);

      const gw = await d.signed('GET', `/api/v1/payments/${p.id}`);
      assert.deepEqual([gw.json.data.paymentType, gw.json.data.method, gw.json.data.isTestnet], ['DIRECT', 'direct', false]);
      const lease = await d.common.db.em().findOneOrFail(WalletAddress, { address: pool[0] });
      assert.equal(lease.paymentId, p.id);
    });

    test('direct works on all eleven chains, with BIP21 / EIP-681 URIs where they exist', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const natives: Record<string, string> = { ethereum: 'ETH', polygon: 'POL', bsc: 'BNB', arbitrum: 'ETH', optimism: 'ETH', base: 'ETH', avalanche: 'AVAX', bitcoin: 'BTC', tron: 'TRX', solana: 'SOL', ton: 'TON' };
      const chainIds: Record<string, number> = { ethereum: 1, polygon: 137, bsc: 56, arbitrum: 42161, optimism: 10, base: 8453, avalanche: 43114 };
      let seed = 10;
      for (const [chain, coin] of Object.entries(natives)) {
        const address = chainIds[chain] ? evmAddresses(1, seed++)[0]! : `${chain}-deposit-address-1`;
        await d.seedPool(chain, [address]);
        const inv = await newInvoice(d);
        const res = await d.plain('POST', checkoutPath(inv.id), { blockchain: chain, cryptoCurrency: coin, method: 'direct' });
        assert.equal(res.status, 201, `${chain}: ${res.text}`);
        const p = res.json.data.payment;
        assert.equal(p.paymentAddress, address);
        assert.equal(p.network, 'MAINNET');
        assert.equal(p.tokenAddress, null);
        if (chain === 'bitcoin') assert.equal(p.paymentUri, `bitcoin:${address}?amount=${p.amount}`);
        else if (chainIds[chain]) assert.match(p.paymentUri, new RegExp(`^ethereum:${address}@${chainIds[chain]}\\?value=\\d+$`));
        // Solana Pay (amount in SOL) and TON transfer links (nanotons); tron has no shared URI form.
        else if (chain === 'solana') assert.equal(p.paymentUri, `solana:${address}?amount=${p.amount}`);
        else if (chain === 'ton') assert.equal(p.paymentUri, `ton://transfer/${address}?amount=${parseUnits(p.amount, 9)}`);
        else assert.equal(p.paymentUri, address);
      }
    });

    test('web3 and service_wallet go through the configured contract', async (t) => {
      const d = await startTestDaemon(t, dialect, WITH_CONTRACT);
      const native = await newInvoice(d);
      const res = await d.plain('POST', checkoutPath(native.id), { blockchain: 'ethereum', cryptoCurrency: 'ETH', method: 'web3' });
      assert.equal(res.status, 201, res.text);
      const p = res.json.data.payment;
      assert.equal(p.method, 'web3');
      assert.equal(p.paymentAddress, null, 'a contract payment has no deposit address');
      assert.equal(p.paymentUri, null);
      assert.equal(p.contractAddress.toLowerCase(), CONTRACT);
      assert.equal(p.treasuryWallet.toLowerCase(), TREASURY);
      assert.match(p.externalIdUuid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.equal(p.externalId, externalIdFromUuid(p.externalIdUuid));
      assert.match(p.externalId, /^0x[0-9a-f]{64}$/);
      assert.deepEqual([p.tokenAddress, p.chainId, p.decimals, p.network], [null, 1, 18, 'MAINNET']);
      assert.equal('requiresConfirmation' in p, false);
      const gw = await d.signed('GET', `/api/v1/payments/${p.id}`);
      assert.equal(gw.json.data.paymentType, 'SMART_CONTRACT');
      assert.equal(await d.common.db.em().count(WalletAddress, {}), 0, 'the pool is not touched');

      const token = await newInvoice(d);
      const sw = await d.plain('POST', checkoutPath(token.id), { blockchain: 'ethereum', cryptoCurrency: 'USDC', method: 'service_wallet' });
      assert.equal(sw.status, 201, sw.text);
      assert.equal(sw.json.data.payment.requiresConfirmation, true);
      assert.equal(sw.json.data.payment.tokenAddress, '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48');
      assert.equal(sw.json.data.payment.decimals, 6);
      assert.notEqual(sw.json.data.payment.externalId, p.externalId);
    });

    test('checkout refusals: body, testnet, pairs, methods per chain, empty pool, expired, cancelled, busy', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const inv = await newInvoice(d);
      const cases: [unknown, string][] = [
        [{ blockchain: 'ethereum', cryptoCurrency: 'ETH', testnet: true }, 'body'],
        [{ blockchain: 'ethereum', cryptoCurrency: 'ETH', method: 'card' }, 'body.method'],
        [{ blockchain: 'ethereum' }, 'body.cryptoCurrency'],
        [{ cryptoCurrency: 'ETH' }, 'body.blockchain'],
        [{ blockchain: 1, cryptoCurrency: 'ETH' }, 'body.blockchain'],
      ];
      for (const [body, path] of cases) {
        const res = await d.plain('POST', checkoutPath(inv.id), body);
        assert.deepEqual([res.status, res.json.error.code], [400, 'VALIDATION_ERROR'], JSON.stringify(body));
        assert.ok(res.json.error.details.some((x: { path: string }) => x.path === path), `${JSON.stringify(body)}: ${res.text}`);
      }
      const malformed = await d.plain('POST', checkoutPath(inv.id), '{"blockchain":');
      assert.equal(malformed.json.error.code, 'VALIDATION_ERROR');

      for (const body of [{ blockchain: 'bitcoin', cryptoCurrency: 'USDT' }, { blockchain: 'dogecoin', cryptoCurrency: 'DOGE' }, { blockchain: 'ethereum', cryptoCurrency: 'usdt' }]) {
        const res = await d.plain('POST', checkoutPath(inv.id), body);
        assert.deepEqual([res.status, res.json.error.code], [400, 'INVALID_CURRENCY'], JSON.stringify(body));
      }
      for (const [chain, coin] of [['bitcoin', 'BTC'], ['tron', 'USDT'], ['solana', 'SOL'], ['ton', 'TON']]) {
        for (const method of ['web3', 'service_wallet']) {
          const res = await d.plain('POST', checkoutPath(inv.id), { blockchain: chain, cryptoCurrency: coin, method });
          assert.deepEqual([res.status, res.json.error.code], [400, 'BLOCKCHAIN_NOT_SUPPORTED'], `${chain} ${method}`);
        }
      }
      const noContract = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'polygon', cryptoCurrency: 'POL', method: 'web3' });
      assert.deepEqual([noContract.status, noContract.json.error.code], [400, 'CONTRACT_NOT_CONFIGURED']);

      const empty = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'tron', cryptoCurrency: 'USDT' });
      assert.deepEqual([empty.status, empty.json.error.code], [503, 'NO_AVAILABLE_WALLET']);
      assert.equal((await d.plain('GET', `/checkout/api/v1/invoices/${inv.id}/status`)).json.data.status, 'OPEN', 'a failed checkout returns the invoice to OPEN');
      assert.equal(await d.common.db.em().count(Payment, {}), 0);

      await d.seedPool('ethereum', evmAddresses(3));
      const ok = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(ok.status, 201);
      const busy = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: 'USDC' });
      assert.deepEqual([busy.status, busy.json.error.code], [400, 'PAYMENT_ALREADY_IN_PROGRESS']);

      const expired = await newInvoice(d);
      await backdate(d, Invoice, expired.id);
      const late = await d.plain('POST', checkoutPath(expired.id), { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.deepEqual([late.status, late.json.error.code], [400, 'INVOICE_EXPIRED']);

      const cancelled = await newInvoice(d);
      await d.signed('DELETE', `/api/v1/invoices/${cancelled.id}`);
      const na = await d.plain('POST', checkoutPath(cancelled.id), { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.deepEqual([na.status, na.json.error.code], [400, 'INVOICE_NOT_AVAILABLE']);
    });

    test('12 concurrent public checkouts on one invoice open exactly one payment', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(20));
      const inv = await newInvoice(d);
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) =>
        d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: i % 2 ? 'USDC' : 'ETH' })));
      const winners = results.filter((r) => r.status === 201);
      assert.equal(winners.length, 1, results.map((r) => r.text).join('\n'));
      for (const r of results.filter((x) => x.status !== 201)) {
        assert.equal(r.status, 400, r.text);
        assert.ok(['INVOICE_NOT_AVAILABLE', 'PAYMENT_ALREADY_IN_PROGRESS'].includes(r.json.error.code), r.text);
      }
      assert.equal(await d.common.db.em().count(Payment, { invoice: inv.id }), 1);
      assert.equal(await d.common.db.em().count(WalletAddress, { status: 'LEASED' }), 1);
      const st = await d.plain('GET', `/checkout/api/v1/invoices/${inv.id}/status`);
      assert.deepEqual(st.json.data, { status: 'PAYMENT_PENDING', paymentId: winners[0]!.json.data.payment.id, paidAt: null });
    });
  });

  describe(`checkout API: payment status on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('shows the spec fields, follows confirmations, and never shows the address after expiresAt', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const pool = evmAddresses(2);
      await d.seedPool('ethereum', pool);
      const inv = await newInvoice(d);
      const co = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      const pid = co.json.data.payment.id;
      const path = `/checkout/api/v1/payments/${pid}/status`;

      const res = await d.plain('GET', path);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const s = res.json.data;
      for (const key of ['status', 'confirmations', 'requiredConfirmations', 'transactionHash', 'blockchain', 'amount', 'cryptoCurrency', 'paymentAddress', 'expiresAt']) assert.ok(key in s, key);
      assert.deepEqual([s.status, s.confirmations, s.requiredConfirmations, s.transactionHash, s.blockchain, s.cryptoCurrency, s.paymentAddress], ['PENDING', 0, 12, null, 'ethereum', 'ETH', pool[0]]);
      assert.equal(s.amount, co.json.data.payment.amount);
      assert.equal(s.expiresAt, co.json.data.payment.expiresAt);
      assert.equal(s.paymentUri, co.json.data.payment.paymentUri);
      assert.equal(s.method, 'direct');
      assert.ok(!('invoice' in s) && !('metadata' in s));

      const hash = `0x${'ab'.repeat(32)}`;
      await d.common.db.em().nativeUpdate(Payment, { id: pid }, { status: 'CONFIRMING', confirmations: 3, transactionHash: hash });
      const confirming = (await d.plain('GET', path)).json.data;
      assert.deepEqual([confirming.status, confirming.confirmations, confirming.transactionHash, confirming.paymentAddress], ['CONFIRMING', 3, hash, pool[0]]);

      // Past expiresAt the address is gone whatever the status (money in flight keeps its status).
      await backdate(d, Payment, pid);
      const late = (await d.plain('GET', path)).json.data;
      assert.deepEqual([late.status, late.paymentAddress, late.paymentUri], ['CONFIRMING', null, null]);

      const inv2 = await newInvoice(d);
      const co2 = await d.plain('POST', checkoutPath(inv2.id), { blockchain: 'ethereum', cryptoCurrency: 'USDC' });
      await backdate(d, Payment, co2.json.data.payment.id);
      const expired = (await d.plain('GET', `/checkout/api/v1/payments/${co2.json.data.payment.id}/status`)).json.data;
      assert.deepEqual([expired.status, expired.paymentAddress, expired.paymentUri], ['EXPIRED', null, null]);
      assert.equal((await d.plain('GET', `/checkout/api/v1/invoices/${inv2.id}/status`)).json.data.status, 'OPEN', 'lazy expiry reopens the invoice');
    });

    test('a contract payment shows the treasury wallet; invoice ids and unknown ids are 404', async (t) => {
      const d = await startTestDaemon(t, dialect, WITH_CONTRACT);
      const inv = await newInvoice(d);
      const co = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: 'USDT', method: 'web3' });
      const s = (await d.plain('GET', `/checkout/api/v1/payments/${co.json.data.payment.id}/status`)).json.data;
      assert.equal(s.paymentAddress.toLowerCase(), TREASURY);
      assert.equal(s.method, 'web3');
      assert.equal(s.externalId, co.json.data.payment.externalId);
      assert.equal(s.paymentUri, null);

      for (const id of [inv.id, 'doesnotexist0000000000000', co.json.data.payment.referenceId]) {
        const res = await d.plain('GET', `/checkout/api/v1/payments/${id}/status`);
        assert.deepEqual([res.status, res.json.error.code], [404, 'PAYMENT_NOT_FOUND'], id);
      }
    });
  });
}

describe('checkout API: CORS', () => {
  test('reads from any origin; writes only from the page origin and the configured ones', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', {
      server: { checkoutPageUrl: 'https://pay.example.com/checkout', checkoutAllowedOrigins: ['https://shop.example'] },
    });
    const inv = await newInvoice(d);
    const get = await d.plain('GET', `/checkout/api/v1/invoices/${inv.id}`, undefined, { Origin: 'https://anywhere.example' });
    assert.equal(get.headers.get('access-control-allow-origin'), '*');
    assert.match(get.headers.get('access-control-expose-headers') ?? '', /Retry-After/);

    const preflight = (origin: string, method: string) =>
      d.plain('OPTIONS', checkoutPath(inv.id), undefined, { Origin: origin, 'Access-Control-Request-Method': method, 'Access-Control-Request-Headers': 'content-type' });
    const getPre = await preflight('https://anywhere.example', 'GET');
    assert.deepEqual([getPre.status, getPre.headers.get('access-control-allow-origin')], [204, '*']);
    assert.deepEqual(
      [getPre.headers.get('access-control-allow-methods'), getPre.headers.get('access-control-max-age'), getPre.headers.get('content-length'), getPre.headers.get('vary')],
      ['GET, HEAD', '600', '0', 'Origin'],
    );
    // A preflight without Origin or Access-Control-Request-Method is not one: 400, as browsers never send it.
    const bare = await d.plain('OPTIONS', checkoutPath(inv.id), undefined, { Origin: 'https://shop.example' });
    assert.deepEqual([bare.status, bare.text], [400, 'Invalid Preflight Request']);
    // Preflights reach the hook on any path of the surface, even one with no route.
    const nowhere = await d.plain('OPTIONS', '/checkout/api/v1/nowhere', undefined, { Origin: 'https://shop.example', 'Access-Control-Request-Method': 'GET' });
    assert.deepEqual([nowhere.status, nowhere.headers.get('access-control-allow-origin')], [204, '*']);

    for (const origin of ['https://pay.example.com', 'https://shop.example']) {
      const pre = await preflight(origin, 'POST');
      assert.equal(pre.status, 204, origin);
      assert.equal(pre.headers.get('access-control-allow-origin'), origin);
      assert.match(pre.headers.get('access-control-allow-methods') ?? '', /POST/);
      assert.match(pre.headers.get('access-control-allow-headers') ?? '', /Content-Type/);
      assert.match(pre.headers.get('vary') ?? '', /Origin/);
      const post = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: 'ETH' }, { Origin: origin });
      assert.equal(post.headers.get('access-control-allow-origin'), origin);
    }
    const evil = await preflight('https://evil.example', 'POST');
    assert.equal(evil.headers.get('access-control-allow-origin'), null);
    const evilPost = await d.plain('POST', checkoutPath(inv.id), { blockchain: 'ethereum', cryptoCurrency: 'ETH' }, { Origin: 'https://evil.example' });
    assert.equal(evilPost.headers.get('access-control-allow-origin'), null);
  });

  test('without checkoutPageUrl the daemon\'s own origin may POST', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const inv = await newInvoice(d);
    const own = new URL(d.url).origin;
    const pre = await d.plain('OPTIONS', checkoutPath(inv.id), undefined, { Origin: own, 'Access-Control-Request-Method': 'POST' });
    assert.equal(pre.headers.get('access-control-allow-origin'), own);
    const other = await d.plain('OPTIONS', checkoutPath(inv.id), undefined, { Origin: 'http://127.0.0.1:1', 'Access-Control-Request-Method': 'POST' });
    assert.equal(other.headers.get('access-control-allow-origin'), null);
  });
});
