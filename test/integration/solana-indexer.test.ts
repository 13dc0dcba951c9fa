import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkoutInvoice } from '../../src/daemon/checkout.ts';
import { Invoice } from '../../src/db/entities/invoice.entity.ts';
import { ObservedTransfer } from '../../src/db/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/db/entities/payment.entity.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { key, startSolanaSim } from '../helpers/solana-sim.ts';

describe('solana indexer against a JSON-RPC cluster (separate indexer process)', () => {
  test('SOL and USDC deposits, skipped slots, failed transactions, lookup tables and a fork switch', async (t) => {
    const sim = await startSolanaSim();
    t.after(() => sim.close());
    for (let i = 0; i < 5; i++) sim.produce();
    const mint = key();
    const chains = { solana: { mainnet: { rpcUrl: sim.url, blockTimeMs: 400, confirmations: 3, tokens: { USDC: { address: mint, decimals: 6 } } } } };
    const indexer = { minPollMs: 200, maxBlocksPerRange: 10, leaseSeconds: 5, rpcTimeoutMs: 1000 };
    const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
    const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }) };
    await d.seedPool('solana', Array.from({ length: 6 }, key));
    const proc = spawnIndexer(['solana'], env);
    t.after(() => proc.stop('SIGKILL'));
    await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

    const open = async (coin: 'SOL' | 'USDC') => {
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `o-${Math.random()}`, amount: '2500', currency: 'USD' });
      return (await checkoutInvoice(d.daemon.deps, { invoiceId: inv.json.data.id, merchantId: null, blockchain: 'solana', cryptoCurrency: coin, testnet: false, method: 'direct' })).payment;
    };
    const payment = (id: string) => d.common.db.em().findOneOrFail(Payment, { id });
    const waitStatus = (id: string, statuses: string[]) =>
      waitFor(`payment in ${statuses.join('/')}`, async () => {
        const p = await payment(id);
        return statuses.includes(p.status) ? p : null;
      });

    await t.test('a SOL transfer completes after the confirmations; a failed one is ignored', async () => {
      const p = await open('SOL');
      assert.equal(p.amount, '0.166666667', '25.00 USD at 150 USD/SOL, rounded up to 9 decimals');
      sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n, failed: true }] });
      sim.skip(2);
      const [sig] = sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n }] });
      const seen = await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      assert.equal(seen.transactionHash, sig);
      assert.equal(seen.receivedAmount, '0.166666667');
      sim.skip(1);
      sim.produce();
      sim.produce();
      const done = await waitStatus(p.id, ['COMPLETED']);
      assert.ok(done.confirmations >= 3);
      assert.equal((await d.common.db.em().findOneOrFail(Invoice, { id: p.invoice.id })).status, 'PAID');
      assert.equal(await d.common.db.em().count(ObservedTransfer, { paymentId: p.id }), 1, 'the failed transaction moved nothing');
    });

    await t.test('USDC to the owner (into a new and an existing token account) is summed; a look-alike mint is not credited', async () => {
      const p = await open('USDC');
      sim.produce({ tokens: [{ owner: p.address, mint, amount: 20_000_000n }] });
      sim.produce({ tokens: [{ owner: p.address, mint, amount: 5_000_000n, before: 20_000_000n }, { owner: p.address, mint: key(), amount: 99_000_000n }] });
      await waitFor('two credits', async () => (await payment(p.id)).receivedAmount === '25');
      const rows = await d.common.db.em().find(ObservedTransfer, { paymentId: p.id });
      assert.deepEqual(rows.map((r) => r.status).sort(), ['CREDITED', 'CREDITED', 'NOT_CREDITED']);
      sim.skip(3);
      sim.produce();
      sim.produce();
      sim.produce();
      assert.equal((await waitStatus(p.id, ['COMPLETED'])).receivedAmount, '25');
    });

    await t.test('a recipient loaded through an address lookup table (v0 transaction) is found', async () => {
      const p = await open('SOL');
      sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n, viaLookupTable: true }] });
      assert.equal((await waitStatus(p.id, ['PROCESSING', 'CONFIRMING'])).receivedAmount, '0.166666667');
    });

    await t.test('a fork switch un-credits a deposit', async () => {
      const p = await open('SOL');
      sim.produce({ sol: [{ to: p.address, lamports: 166_666_667n }] });
      await waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      sim.rewind(1);
      sim.produce();
      sim.produce();
      const back = await waitStatus(p.id, ['PENDING']);
      assert.equal(back.receivedAmount, '0');
      assert.equal((await d.common.db.em().findOneOrFail(ObservedTransfer, { paymentId: p.id })).status, 'REORGED');
    });

    await t.test('an endpoint of another cluster is refused', async () => {
      const wrong = await runCli(['index', 'solana', '--testnet'], { ...env, CHAINGATE_CONFIG: writeConfigFile({ chains: { solana: { testnet: { rpcUrl: sim.url } } }, indexer }) });
      assert.equal(wrong.code, 2);
      assert.match(wrong.stderr, /not solana DEVNET/);
    });

    assert.equal(proc.child.exitCode, null);
    assert.equal(await proc.stop('SIGTERM'), 0);
  });
});
