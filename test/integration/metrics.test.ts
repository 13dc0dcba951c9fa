import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { createWebhookSender } from '../../src/webhooks/sender.ts';
import { openDatabase } from '../../src/store/orm.ts';
import { readiness } from '../../src/app/health.ts';
import { startMetricsServer } from '../../src/metrics/server.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon } from '../helpers/daemon.ts';
import { startEvmWorld } from '../helpers/evm-world.ts';
import { getFreePort } from '../../src/devnet/hardhat-node.ts';
import { waitFor } from '../helpers/indexer-process.ts';
import { startRpcProxy, type RpcProxy } from '../helpers/rpc-proxy.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import { Registry } from 'prom-client';
import { sample } from '../helpers/prometheus.ts';


describe('metrics and health', () => {
  test('serve: /metrics on its own listener counts requests and reads payments, pools, webhooks and indexers; /healthz and /readyz', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    assert.ok(d.daemon.metricsUrl, 'a metrics listener');
    assert.notEqual(new URL(d.daemon.metricsUrl).port, new URL(d.url).port, 'apart from the public port');
    await d.seedPool('ethereum', evmAddresses(5));
    const created = await d.signed('POST', '/api/v1/invoices', { orderId: 'm1', amount: '2500', currency: 'USD' });
    assert.equal(created.status, 201);
    await d.signed('GET', '/api/v1/invoices/nosuchinvoice0000000000');
    await fetch(`${d.url}/no/such/route`);
    await fetch(`${d.url}/checkout/api/v1/invoices/nosuchinvoice0000000000`, { method: 'HEAD' });
    const em = d.common.db.em();
    em.create(IndexerCursor, { chain: 'ethereum', network: 'MAINNET', blockNumber: '100', blockHash: '0xabc', blockTime: String(Math.floor(Date.now() / 1000) - 30), headNumber: '112', finalizedNumber: '90', headSeenAt: new Date(), leaseOwner: 'x', leaseUntil: new Date(Date.now() + 60_000), lastError: null, lastErrorAt: null });
    await em.flush();

    const text = await (await fetch(`${d.daemon.metricsUrl}/metrics`)).text();
    assert.equal(sample(text, 'chaingate_http_requests_total', { route: '/api/v1/invoices', method: 'POST', status: '201' }), 1);
    assert.equal(sample(text, 'chaingate_http_requests_total', { route: '/api/v1/invoices/:id', method: 'GET', status: '404' }), 1);
    assert.equal(sample(text, 'chaingate_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }), 1);
    assert.equal(sample(text, 'chaingate_http_requests_total', { route: '/checkout/api/v1/invoices/:id', method: 'HEAD', status: '404' }), 1);
    assert.equal(sample(text, 'chaingate_http_request_duration_seconds_bucket', { route: 'unmatched', method: 'GET', status: '404', le: '+Inf' }), 1);
    assert.ok((sample(text, 'chaingate_http_request_duration_seconds_count', { route: '/api/v1/invoices', method: 'POST', status: '201' }) ?? 0) >= 1);
    assert.equal(sample(text, 'chaingate_invoices', { status: 'OPEN' }), 1);
    assert.equal(sample(text, 'chaingate_wallet_pool_free', { chain: 'ethereum', network: 'MAINNET' }), 5, 'the network named as the indexer series name it');
    assert.equal(sample(text, 'chaingate_indexer_height', { chain: 'ethereum', network: 'MAINNET' }), 100);
    assert.equal(sample(text, 'chaingate_indexer_head', { chain: 'ethereum', network: 'MAINNET' }), 112);
    assert.equal(sample(text, 'chaingate_indexer_lag_blocks', { chain: 'ethereum', network: 'MAINNET' }), 12);
    assert.equal(sample(text, 'chaingate_indexer_finalized', { chain: 'ethereum', network: 'MAINNET' }), 90);
    assert.ok((sample(text, 'chaingate_indexer_lag_seconds', { chain: 'ethereum', network: 'MAINNET' }) ?? 0) >= 30);
    assert.equal(sample(text, 'chaingate_indexer_up', { chain: 'ethereum', network: 'MAINNET' }), 1);
    assert.equal(sample(text, 'chaingate_indexer_failing', { chain: 'ethereum', network: 'MAINNET' }), 0);
    assert.equal(sample(text, 'chaingate_indexer_last_error_timestamp_seconds', { chain: 'ethereum', network: 'MAINNET' }), 0);
    assert.equal(sample(text, 'chaingate_webhook_oldest_pending_age_seconds'), 0);
    assert.match(text, /# TYPE chaingate_rate_limited_total counter/);
    assert.match(text, /# TYPE chaingate_webhook_delivery_latency_seconds histogram/);

    for (const base of [d.daemon.metricsUrl, d.url]) {
      const health = await fetch(`${base}/healthz`);
      assert.deepEqual([health.status, await health.json()], [200, { status: 'ok' }]);
      const ready = await fetch(`${base}/readyz`);
      assert.deepEqual([ready.status, await ready.json()], [200, { status: 'ready', reasons: [] }]);
    }
    const publicMetrics = await fetch(`${d.url}/metrics`);
    assert.equal(publicMetrics.status, 404, 'metrics are not on the public port');
  });

  test('/readyz answers 503 with the reasons when migrations are pending', async (t) => {
    const tdb = await createTestDatabase('sqlite');
    const db = await openDatabase(tdb.url);
    t.after(async () => {
      await db.close();
      await tdb.drop();
    });
    const r = await readiness(db);
    assert.equal(r.ready, false);
    assert.match(r.reasons[0]!, /migration\(s\) pending: run `chaingate migrate`/);
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, registry: new Registry(), ready: () => readiness(db) });
    t.after(() => server.close());
    const res = await fetch(`${server.url}/readyz`);
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { status: string }).status, 'not_ready');
  });

  test('payments by status, webhook deliveries by state and rate-limit refusals follow real traffic', async (t) => {
    // Rate limits on (the defaults: 10 requests a second per IP service-wide); one webhook attempt
    // per delivery, so a refusing receiver makes a FAILED delivery at once.
    const d = await startTestDaemon(t, 'sqlite', { rateLimit: { enabled: true }, webhooks: { allowPrivateNetworks: true, maxAttempts: 1 } });
    await d.seedPool('ethereum', evmAddresses(3));
    const scrape = async () => {
      await new Promise((r) => setTimeout(r, 300)); // past the 250 ms the database figures are shared between collectors
      return (await fetch(`${d.daemon.metricsUrl}/metrics`)).text();
    };

    const invoice = (await d.signed('POST', '/api/v1/invoices', { orderId: 'p1', amount: '2500', currency: 'USD' })).json.data as { id: string };
    const checkout = await d.signed('POST', `/api/v1/invoices/${invoice.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
    assert.equal(checkout.status, 201, checkout.text);
    const paymentId = (checkout.json.data as { payment: { id: string } }).payment.id;
    let text = await scrape();
    assert.equal(sample(text, 'chaingate_payments', { status: 'PENDING' }), 1);
    assert.equal(sample(text, 'chaingate_invoices', { status: 'PAYMENT_PENDING' }), 1);
    await d.common.db.em().nativeUpdate(Payment, { id: paymentId }, { status: 'EXPIRED' });
    text = await scrape();
    assert.equal(sample(text, 'chaingate_payments', { status: 'EXPIRED' }), 1, 'read from the database at each scrape');
    assert.equal(sample(text, 'chaingate_payments', { status: 'PENDING' }), undefined, 'a status no payment has any more is dropped');

    // Webhooks: one delivered, one refused (FAILED after its only attempt), one not yet attempted.
    const ok = await startWebhookReceiver(t);
    const refusing = await startWebhookReceiver(t, () => ({ status: 500, body: 'no' }));
    const cancelOne = async (merchant: Awaited<ReturnType<typeof d.createMerchant>>) => {
      const inv = (await d.signed('POST', '/api/v1/invoices', { orderId: `w-${Math.random()}`, amount: '100', currency: 'USD' }, { merchant })).json.data as { id: string };
      assert.equal((await d.signed('DELETE', `/api/v1/invoices/${inv.id}`, undefined, { merchant })).status, 200);
    };
    await cancelOne(await d.createMerchant({ name: 'Hooked', webhookUrl: ok.url }));
    await cancelOne(await d.createMerchant({ name: 'Refused', webhookUrl: refusing.url }));
    const sender = createWebhookSender({ common: d.common });
    t.after(() => sender.stop());
    const outcomes = await sender.runOnce();
    assert.deepEqual(outcomes.map((o) => o.state).sort(), ['DELIVERED', 'FAILED']);
    await cancelOne(await d.createMerchant({ name: 'Later', webhookUrl: ok.url }));
    text = await scrape();
    for (const state of ['DELIVERED', 'FAILED', 'PENDING']) assert.equal(sample(text, 'chaingate_webhook_deliveries', { state }), 1, `deliveries ${state}`);
    assert.ok((sample(text, 'chaingate_webhook_oldest_pending_age_seconds') ?? -1) >= 0);

    // Rate limits: a buyer's browser polling too fast gets 429s, and each one is counted.
    const route = '/checkout/api/v1/invoices/:id/status';
    const answers = await Promise.all(Array.from({ length: 25 }, () => fetch(`${d.url}/checkout/api/v1/invoices/${invoice.id}/status`).then((r) => r.status)));
    const refused = answers.filter((s) => s === 429).length;
    assert.ok(refused > 0 && answers.includes(200), `answers: ${answers.join(' ')}`);
    text = await scrape();
    assert.equal(sample(text, 'chaingate_rate_limited_total', { route }), refused);
    assert.equal(sample(text, 'chaingate_http_requests_total', { route, method: 'GET', status: '429' }), refused);
    assert.equal(sample(text, 'chaingate_http_requests_total', { route, method: 'GET', status: '200' }), answers.length - refused);
  });

  test('an indexer serves its RPC calls by method and outcome on its own /metrics, errors included', async (t) => {
    let proxy: RpcProxy | undefined;
    const w = await startEvmWorld(t, {
      dialect: 'sqlite',
      indexer: { rpcTimeoutMs: 1000 },
      rpcUrl: async (target) => {
        proxy = await startRpcProxy({ target, faults: ['500'], faultRate: 0 });
        t.after(() => proxy!.close());
        return proxy.url;
      },
    });
    const port = await getFreePort();
    const p = w.startIndexer([], { CHAINGATE_INDEXER_METRICS_PORT: String(port) });
    await waitFor('indexer start', async () => p.output().includes('indexer started'), 20_000);
    await w.node.mine(2);
    const metricsText = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const text = await waitFor('rpc counters', async () => {
      const body = await metricsText();
      return (sample(body, 'chaingate_rpc_calls_total', { method: 'eth_getBlockByNumber', outcome: 'ok', chain: 'ethereum', network: 'MAINNET' }) ?? 0) > 0 ? body : null;
    });
    assert.ok((sample(text, 'chaingate_rpc_calls_total', { method: 'eth_blockNumber', outcome: 'ok', chain: 'ethereum', network: 'MAINNET' }) ?? 0) > 0);
    assert.ok((sample(text, 'chaingate_rpc_calls_total', { method: 'eth_chainId', outcome: 'ok' }) ?? 0) >= 1);
    assert.equal(sample(text, 'chaingate_rpc_calls_total', { method: 'eth_blockNumber', outcome: 'error' }), undefined, 'no error before a fault');

    // The node answers 502 for a while: the failed calls are counted as errors, by method.
    proxy!.setFaultRate(1);
    // Whichever call of the tick meets the fault first (the head, or the finalized tag) counts it;
    // after a fault the indexer backs off, so a loaded machine may take a while.
    const failing = await waitFor(
      'rpc error counter',
      async () => {
        const body = await metricsText();
        return (sample(body, 'chaingate_rpc_calls_total', { outcome: 'error', chain: 'ethereum', network: 'MAINNET' }) ?? 0) > 0 ? body : null;
      },
      60_000,
    );
    const erring = [...failing.matchAll(/^chaingate_rpc_calls_total\{[^}]*method="([^"]+)"[^}]*outcome="error"[^}]*\} [1-9]/gm)].map((m) => m[1]);
    assert.ok(erring.length > 0 && erring.every((m) => /^eth_[A-Za-z]+$/.test(m!)), `errors are counted under the method that failed: ${erring.join(', ')}`);
    proxy!.setFaultRate(0);
    const okBefore = sample(failing, 'chaingate_rpc_calls_total', { method: 'eth_blockNumber', outcome: 'ok' }) ?? 0;
    await waitFor('calls succeed again', async () => ((sample(await metricsText(), 'chaingate_rpc_calls_total', { method: 'eth_blockNumber', outcome: 'ok' }) ?? 0) > okBefore ? true : null));
    assert.ok((proxy!.stats.faults['500'] ?? 0) > 0);
    await p.stop();
  });
});
