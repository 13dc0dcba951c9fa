import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type ApiResponse, type TestDaemon } from '../helpers/daemon.ts';

// "Do not lease what nobody watches": the signed gateway's checkout refuses a chain whose indexer
// has never reported, or has not reported within checkout.indexerStaleAfterSeconds, with
// 503 CHAIN_NOT_MONITORED, before anything is written (docs/api.md, docs/checkout.md#what-is-offered).

/** The indexer check on, as in production (the test defaults turn it off). */
const WATCHED = { checkout: { indexerStaleAfterSeconds: 60, availabilityCacheMs: 0 } };

async function openInvoice(d: TestDaemon): Promise<string> {
  const res = await d.signed('POST', '/api/v1/invoices', { orderId: `o-${Math.random()}`, amount: '2500', currency: 'USD' });
  assert.equal(res.status, 201, res.text);
  return res.json.data.id as string;
}

async function freeAddresses(d: TestDaemon, isTestnet = false): Promise<number> {
  return d.common.db.em().count(WalletAddress, { chain: 'ethereum', isTestnet, paymentId: null });
}

function assertNotMonitored(res: ApiResponse, why: RegExp): void {
  assert.equal(res.status, 503, res.text);
  assert.equal(res.headers.get('retry-after'), '30');
  assert.equal(res.json.success, false);
  assert.equal(res.json.error.code, 'CHAIN_NOT_MONITORED');
  assert.match(res.json.error.message, why);
  assert.match(res.json.error.message, /no address was leased/);
  assert.equal(typeof res.json.timestamp, 'string');
  assert.equal(typeof res.json.requestId, 'string');
}

for (const dialect of DIALECTS) {
  describe(`gateway checkout on an unmonitored chain (${dialect})`, { skip: await skipUnless(dialect) }, () => {
    test('a chain never indexed is refused with CHAIN_NOT_MONITORED and nothing leased; after a report the same key checks out, and its replay survives a stale indexer', async (t) => {
      const d = await startTestDaemon(t, dialect, WATCHED);
      await d.seedPool('ethereum', evmAddresses(3));
      const invoiceId = await openInvoice(d);
      const path = `/api/v1/invoices/${invoiceId}/checkout`;
      const body = { blockchain: 'ethereum', cryptoCurrency: 'USDT' };

      const refused = await d.signed('POST', path, body, { idempotencyKey: 'co-1' });
      assertNotMonitored(refused, /^Ethereum mainnet is not monitored \(no indexer has ever reported for it\)/);
      assert.equal(await freeAddresses(d), 3, 'no address leased');
      assert.equal(await d.common.db.em().count(Payment, {}), 0, 'no payment row');
      assert.equal((await d.common.db.em().findOneOrFail(Invoice, { id: invoiceId })).status, 'OPEN');

      // The indexer reports: the same key (nothing was stored for it) now checks out.
      await d.markIndexed('ethereum');
      const ok = await d.signed('POST', path, body, { idempotencyKey: 'co-1' });
      assert.equal(ok.status, 201, ok.text);
      assert.equal(ok.headers.get('idempotent-replayed'), null);
      assert.equal(await freeAddresses(d), 2);

      // The indexer falls silent: a replay of the key that succeeded is still its stored answer.
      await d.markIndexed('ethereum', { at: new Date(Date.now() - 10 * 60_000) });
      const replay = await d.signed('POST', path, body, { idempotencyKey: 'co-1' });
      assert.equal(replay.status, 201, replay.text);
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.equal(replay.text, ok.text);
      assert.equal(await freeAddresses(d), 2);
    });

    test('a stale indexer is refused without its last error; the check is per network and after the request\'s own errors', async (t) => {
      const d = await startTestDaemon(t, dialect, WATCHED);
      await d.seedPool('ethereum', evmAddresses(2));
      await d.seedPool('ethereum', evmAddresses(2, 7), true);
      const secretish = 'FetchError: request to https://mainnet.example/v3/SECRETKEY failed';
      await d.markIndexed('ethereum', { at: new Date(Date.now() - 10 * 60_000), lastError: secretish });
      const invoiceId = await openInvoice(d);
      const path = `/api/v1/invoices/${invoiceId}/checkout`;

      const stale = await d.signed('POST', path, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assertNotMonitored(stale, /its indexer has not reported recently/);
      assert.doesNotMatch(stale.text, /SECRETKEY|mainnet\.example/, 'the indexer\'s error is the operator\'s, not the merchant\'s');

      // The request's own mistakes come first (docs/api.md, errors in the order they are checked).
      const unknownInvoice = await d.signed('POST', `/api/v1/invoices/${'c'.repeat(24)}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(unknownInvoice.json.error.code, 'INVOICE_NOT_FOUND');
      const badCoin = await d.signed('POST', path, { blockchain: 'ethereum', cryptoCurrency: 'DOGE' });
      assert.equal(badCoin.json.error.code, 'INVALID_CURRENCY');

      // Mainnet reports again; its testnet has never had an indexer.
      await d.markIndexed('ethereum');
      const testnet = await d.signed('POST', path, { blockchain: 'ethereum', cryptoCurrency: 'ETH', testnet: true });
      assertNotMonitored(testnet, /^Ethereum Sepolia testnet is not monitored \(no indexer has ever reported for it\)/);
      assert.equal(await freeAddresses(d, true), 2);
      const mainnet = await d.signed('POST', path, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(mainnet.status, 201, mainnet.text);
      assert.equal(await freeAddresses(d), 1);
    });

    test('with checkout.indexerStaleAfterSeconds: null (the opt-out) the gateway leases without an indexer', async (t) => {
      const d = await startTestDaemon(t, dialect, { checkout: { indexerStaleAfterSeconds: null, availabilityCacheMs: 0 } });
      await d.seedPool('ethereum', evmAddresses(1));
      const invoiceId = await openInvoice(d);
      const res = await d.signed('POST', `/api/v1/invoices/${invoiceId}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDT' });
      assert.equal(res.status, 201, res.text);
      assert.equal(await freeAddresses(d), 0);
    });
  });
}
