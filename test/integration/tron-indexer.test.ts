import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits, Wallet, type Contract } from 'ethers';
import { checkoutInvoice } from '../../src/daemon/checkout.ts';
import { Invoice } from '../../src/db/entities/invoice.entity.ts';
import { ObservedTransfer } from '../../src/db/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/db/entities/payment.entity.ts';
import { hexToTron, tronToHex } from '../../src/indexers/tron/tron-source.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { deployFixtures } from '../helpers/evm-fixtures.ts';
import { startHardhatNode } from '../helpers/hardhat-node.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';

// java-tron's /jsonrpc is Ethereum JSON-RPC with Tron's chain id: a Hardhat node with that chain id
// speaks the same protocol, while the pool, the registry and the payments use Tron's T-addresses.
describe('tron indexer over the Ethereum-compatible JSON-RPC (separate indexer process)', () => {
  test('TRC-20 USDT and native TRX to T-addresses complete after the required confirmations', async (t) => {
    const node = await startHardhatNode({ chainId: 0x2b6653dc });
    t.after(() => node.stop());
    const fx = await deployFixtures(node);
    const chains = {
      tron: { mainnet: { rpcUrl: node.url, blockTimeMs: 1000, confirmations: 3, tokens: { USDT: { address: hexToTron(fx.addresses.usdt), decimals: 6 } } } },
    };
    const indexer = { minPollMs: 200, maxBlocksPerRange: 20, leaseSeconds: 5, rpcTimeoutMs: 2000 };
    const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
    const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }) };
    await d.seedPool('tron', Array.from({ length: 4 }, () => hexToTron(Wallet.createRandom().address)));
    const proc = spawnIndexer(['tron'], env);
    t.after(() => proc.stop('SIGKILL'));
    await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

    const open = async (coin: 'USDT' | 'TRX') => {
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `o-${coin}`, amount: '2500', currency: 'USD' });
      return (await checkoutInvoice(d.daemon.deps, { invoiceId: inv.json.data.id, merchantId: null, blockchain: 'tron', cryptoCurrency: coin, testnet: false, method: 'direct' })).payment;
    };
    const waitStatus = (id: string, statuses: string[]) =>
      waitFor(`payment in ${statuses.join('/')}`, async () => {
        const p = await d.common.db.em().findOneOrFail(Payment, { id });
        return statuses.includes(p.status) ? p : null;
      });

    const usdt = await open('USDT');
    assert.match(usdt.address, /^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    assert.equal(usdt.tokenAddress, hexToTron(fx.addresses.usdt));
    await (await (fx.usdt.connect(fx.payer) as Contract).getFunction('transfer')(tronToHex(usdt.address), parseUnits('25', 6))).wait();
    const seen = await waitStatus(usdt.id, ['PROCESSING', 'CONFIRMING']);
    assert.equal(seen.receivedAmount, '25');
    const row = await d.common.db.em().findOneOrFail(ObservedTransfer, { paymentId: usdt.id });
    assert.equal(row.toAddress, usdt.address, 'recorded in Tron form');
    assert.equal(row.tokenAddress, hexToTron(fx.addresses.usdt));

    const trx = await open('TRX');
    assert.equal(trx.amount, '208.333334', '25.00 USD at 0.12 USD/TRX, rounded up to 6 decimals');
    await (await fx.payer.sendTransaction({ to: tronToHex(trx.address)!, value: 208_333_334n })).wait();
    await waitStatus(trx.id, ['PROCESSING', 'CONFIRMING', 'COMPLETED']);
    await node.mine(3);
    assert.equal((await waitStatus(usdt.id, ['COMPLETED'])).confirmations >= 3, true);
    const doneTrx = await waitStatus(trx.id, ['COMPLETED']);
    assert.equal(doneTrx.receivedAmount, '208.333334');
    assert.equal((await d.common.db.em().findOneOrFail(Invoice, { id: trx.invoice.id })).status, 'PAID');

    const wrong = await runCli(['index', 'tron', '--testnet'], {
      ...env,
      CHAINGATE_CONFIG: writeConfigFile({ chains: { tron: { testnet: { rpcUrl: node.url } } }, indexer }),
    });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /not tron NILE/);
    assert.equal(await proc.stop('SIGTERM'), 0);
  });
});
