import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deriveAddresses } from '../../src/chains/derive.ts';
import { checkoutInvoice } from '../../src/daemon/checkout.ts';
import { Invoice } from '../../src/db/entities/invoice.entity.ts';
import { ObservedTransfer } from '../../src/db/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/db/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/db/entities/webhook-event.entity.ts';
import { parseUnits } from '../../src/domain/money.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { startEsploraSim } from '../helpers/esplora-sim.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';

const ZPUB = 'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';

describe('bitcoin indexer against an Esplora API serving real blocks (separate indexer process)', () => {
  test('detects outputs, counts 3 confirmations, sums, records late funds and survives a reorg and API faults', async (t) => {
    const sim = await startEsploraSim();
    t.after(() => sim.close());
    sim.mineEmpty(5);
    const chains = { bitcoin: { mainnet: { rpcUrl: sim.url, blockTimeMs: 1000 } } };
    const indexer = { minPollMs: 200, maxBlocksPerRange: 10, leaseSeconds: 5, rpcTimeoutMs: 1000 };
    const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
    const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }) };
    const pool = deriveAddresses({ family: 'bitcoin', testnet: false, xpub: ZPUB, start: 0, count: 10 }).map((a) => a.address);
    await d.seedPool('bitcoin', pool);
    const proc = spawnIndexer(['bitcoin'], env);
    t.after(() => proc.stop('SIGKILL'));
    await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

    const open = async () => {
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `o${Math.random()}`, amount: '2500', currency: 'USD' });
      return (await checkoutInvoice(d.daemon.deps, { invoiceId: inv.json.data.id, merchantId: null, blockchain: 'bitcoin', cryptoCurrency: 'BTC', testnet: false, method: 'direct' })).payment;
    };
    const payment = (id: string) => d.common.db.em().findOneOrFail(Payment, { id });
    const waitStatus = (id: string, statuses: string[]) =>
      waitFor(`payment in ${statuses.join('/')}`, async () => ((await payment(id)) && statuses.includes((await payment(id)).status) ? payment(id) : null), 30_000);
    const sats = (btc: string) => parseUnits(btc, 8);

    await t.test('one output completes the payment after 3 confirmations; invoice PAID; events', async () => {
      const p = await open();
      assert.equal(p.amount, '0.00041667', '25.00 USD at 60000 USD/BTC, rounded up to 8 decimals');
      assert.equal(p.requiredConfirmations, 3);
      const [txid] = sim.mine([[{ address: p.address, sats: sats('0.00041667') }]]);
      const seen = await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      assert.equal(seen.transactionHash, txid);
      assert.equal(seen.receivedAmount, '0.00041667');
      sim.mineEmpty(2);
      const done = await waitStatus(p.id, ['COMPLETED']);
      assert.equal(done.confirmations, 3);
      assert.equal((await d.common.db.em().findOneOrFail(Invoice, { id: p.invoice.id })).status, 'PAID');
      assert.equal(await d.common.db.em().count(WebhookEvent, { paymentId: p.id, type: 'payment.completed' }), 1);
    });

    await t.test('two outputs to the address in one transaction and a third in another are all summed', async () => {
      const p = await open();
      sim.mine([[{ address: p.address, sats: 10_000n }, { address: p.address, sats: 20_000n }], [{ address: p.address, sats: 5_000n }]]);
      await waitFor('three credits', async () => (await payment(p.id)).receivedAmount === '0.00035');
      const rows = await d.common.db.em().find(ObservedTransfer, { paymentId: p.id }, { orderBy: { logIndex: 'asc' } });
      assert.deepEqual(rows.map((r) => [r.logIndex, r.status]), [[0, 'CREDITED'], [0, 'CREDITED'], [1, 'CREDITED']].sort());
      sim.mineEmpty(3);
      const done = await waitStatus(p.id, ['COMPLETED']);
      assert.equal(done.metadata.amountDifference, '-0.00006667', 'an underpayment is recorded, never blocks');
    });

    await t.test('a reorg removes the block with the payment: un-credited, back to PENDING, then paid again', async () => {
      const p = await open();
      sim.mine([[{ address: p.address, sats: sats('0.00041667') }]]);
      await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      sim.rewind(1);
      sim.mineEmpty(2); // a longer branch without the payment
      const back = await waitStatus(p.id, ['PENDING']);
      assert.equal(back.receivedAmount, '0');
      assert.equal((await d.common.db.em().findOneOrFail(ObservedTransfer, { paymentId: p.id })).status, 'REORGED');
      sim.mine([[{ address: p.address, sats: sats('0.00041667') }]]);
      sim.mineEmpty(2);
      assert.equal((await waitStatus(p.id, ['COMPLETED'])).receivedAmount, '0.00041667');
    });

    await t.test('funds after the window are recorded as late and not credited', async () => {
      const p = await open();
      await d.common.db.em().nativeUpdate(Payment, { id: p.id }, { expiresAt: new Date(Date.now() - 60_000) });
      await d.signed('GET', `/api/v1/payments/${p.id}`); // lazy expiry
      sim.mine([[{ address: p.address, sats: sats('0.00041667') }]]);
      const row = await waitFor('late transfer', async () => d.common.db.em().findOne(ObservedTransfer, { paymentId: p.id }));
      assert.equal(row.status, 'LATE');
      assert.equal((await payment(p.id)).status, 'EXPIRED');
    });

    await t.test('API faults (429, 503, resets, hangs) delay but never lose a payment', async () => {
      const p = await open();
      sim.setFaultRate(0.3);
      sim.mine([[{ address: p.address, sats: sats('0.00041667') }]]);
      sim.mineEmpty(2);
      await waitStatus(p.id, ['COMPLETED']);
      sim.setFaultRate(0);
      assert.ok(sim.stats.faults > 0);
      assert.equal(proc.child.exitCode, null, 'still running');
    });

    await t.test('an API serving another chain is refused', async () => {
      const wrong = await runCli(['index', 'bitcoin', '--testnet'], {
        ...env,
        CHAINGATE_CONFIG: writeConfigFile({ chains: { bitcoin: { testnet: { rpcUrl: sim.url } } }, indexer }),
      });
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /not bitcoin TESTNET4/);
    });

    assert.equal(await proc.stop('SIGTERM'), 0);
  });
});
