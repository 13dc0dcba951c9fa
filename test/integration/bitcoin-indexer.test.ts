import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as bitcoin from 'bitcoinjs-lib';
import { deriveAddresses } from '../../src/families/derive.ts';
import { checkoutInvoice } from '../../src/app/checkout.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { parseUnits } from '../../src/domain/money.ts';
import { encodeSegwitAddress } from '../../src/families/bitcoin/bech32.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { MAINNET_TAPROOT_TX, startEsploraSim } from '../helpers/esplora-sim.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';

// Regtest addresses derived watch-only from a vpub (BIP84 test vector key, testnet form) with the
// regtest prefix, as `wallets seed --chain bitcoin --testnet --xpub` does when the testnet is REGTEST.
const VPUB = 'vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc';
// BIP86 account m/86'/1'/0' of the abandon … about mnemonic (derived with ethers, written as a tpub:
// BIP86 keeps the BIP32 version bytes); its children are checked against private derivation in
// src/families/derive.test.ts.
const BIP86_TPUB = 'tpubDDfvzhdVV4unsoKt5aE6dcsNsfeWbTgmLZPi8LQDYU2xixrYemMfWJ3BaVneH3u7DBQePdTwhpybaKRU95pi6PMUtLPBJLVQRpzEnjfjZzX';
const regtestPool = (n: number) => deriveAddresses({ family: 'bitcoin', testnet: true, network: 'REGTEST', xpub: VPUB, start: 0, count: n }).map((a) => a.address);

describe('bitcoin indexer against an Esplora API serving real blocks (separate indexer process)', () => {
  test('detects outputs, counts 3 confirmations, sums, records late funds and survives a reorg and API faults', async (t) => {
    const sim = await startEsploraSim();
    t.after(() => sim.close());
    sim.mineEmpty(5);
    const chains = { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', blockTimeMs: 1000, pollMs: 1000, confirmations: 3 } } };
    const indexer = { minPollMs: 200, maxBlocksPerRange: 10, leaseSeconds: 5, rpcTimeoutMs: 1000 };
    const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
    const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }) };
    const pool = regtestPool(10);
    assert.match(pool[0]!, /^bcrt1q/);
    await d.seedPool('bitcoin', pool, true);
    const proc = spawnIndexer(['bitcoin', '--testnet'], env);
    t.after(() => proc.stop('SIGKILL'));
    await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

    const open = async () => {
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `o${Math.random()}`, amount: '2500', currency: 'USD' });
      // The merchant's checkout route (the public one has no testnet selector; regtest is a testnet).
      const co = await d.signed('POST', `/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'bitcoin', cryptoCurrency: 'BTC', testnet: true });
      assert.equal(co.status, 201, co.text);
      return d.common.db.em().findOneOrFail(Payment, { id: co.json.data.payment.id });
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
      for (const [args, net, name] of [[['--testnet'], 'testnet', 'TESTNET4'], [[], 'mainnet', 'MAINNET']] as const) {
        const wrong = await runCli(['index', 'bitcoin', ...args], { ...env, CHAINGATE_CONFIG: writeConfigFile({ chains: { bitcoin: { [net]: { rpcUrl: sim.url } } }, indexer }) });
        assert.equal(wrong.code, 2);
        assert.match(wrong.stderr, new RegExp(`not bitcoin ${name}`));
      }
    });

    await t.test('a block with a bad merkle root, without proof of work, or with bits the chain does not demand is never trusted: logged, retried, nothing credited', async () => {
      const reported = { merkle: "do not hash to the header's merkle root", pow: 'does not meet its own target', bits: "differ from the previous block's 0x207fffff on a network without retargeting" };
      for (const flaw of ['merkle', 'pow', 'bits'] as const) {
        const p = await open();
        const before = sim.height();
        sim.mine([[{ address: p.address, sats: sats('0.00041667') }]], flaw);
        await waitFor(`the ${flaw} flaw reported`, async () => proc.output().includes(reported[flaw]), 20_000);
        assert.equal((await payment(p.id)).status, 'PENDING');
        assert.equal(await d.common.db.em().count(ObservedTransfer, { paymentId: p.id }), 0);
        // The node replaces the bad block: the indexer carries on from where it stopped.
        sim.rewind(sim.height() - before);
        sim.mine([[{ address: p.address, sats: sats('0.00041667') }]]);
        sim.mineEmpty(2);
        assert.equal((await waitStatus(p.id, ['COMPLETED'])).receivedAmount, '0.00041667');
      }
      assert.equal(proc.child.exitCode, null, 'still running');
    });

    assert.equal(await proc.stop('SIGTERM'), 0);
  });

  test('taproot: BIP86 bcrt1p… deposits and a real mainnet transaction\'s P2TR output are detected, credited and completed; the URI is BIP21', async (t) => {
    const sim = await startEsploraSim();
    t.after(() => sim.close());
    sim.mineEmpty(3);
    const chains = { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', blockTimeMs: 1000, pollMs: 1000, confirmations: 2 } } };
    const indexer = { minPollMs: 200, maxBlocksPerRange: 10, leaseSeconds: 5, rpcTimeoutMs: 1000 };
    const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
    const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }) };
    const seed = async (...args: string[]) => {
      const res = await runCli(['wallets', 'seed', '--chain', 'bitcoin', '--testnet', ...args, '--json'], env);
      assert.equal(res.code, 0, res.stderr);
      return JSON.parse(res.stdout) as { added: number };
    };
    const proc = spawnIndexer(['bitcoin', '--testnet'], env);
    t.after(() => proc.stop('SIGKILL'));
    await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);
    const open = async (amount: string) => {
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `tr${Math.random()}`, amount, currency: 'USD' });
      const co = await d.signed('POST', `/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'bitcoin', cryptoCurrency: 'BTC', testnet: true });
      assert.equal(co.status, 201, co.text);
      const payment = await d.common.db.em().findOneOrFail(Payment, { id: co.json.data.payment.id });
      // What the page shows and encodes in its QR code (the buyer's status route and qr.svg).
      const status = await d.plain('GET', `/checkout/api/v1/payments/${payment.id}/status`);
      const qr = await d.plain('GET', `/i/${inv.json.data.id}/payments/${payment.id}/qr.svg`);
      assert.equal(qr.status, 200);
      assert.match(qr.text, /^<svg/);
      return { payment, uri: status.json.data.paymentUri as string };
    };
    const completed = (id: string) =>
      waitFor('completed', async () => {
        const row = await d.common.db.em().findOneOrFail(Payment, { id }, { refresh: true });
        return row.status === 'COMPLETED' ? row : null;
      }, 30_000);

    // The pool is filled by the real CLI path: `wallets seed --xpub TPUB --script p2tr` on REGTEST.
    assert.equal((await seed('--xpub', BIP86_TPUB, '--script', 'p2tr', '--count', '1')).added, 1);
    const derived = await open('2500');
    assert.equal(derived.payment.address, deriveAddresses({ family: 'bitcoin', testnet: true, network: 'REGTEST', xpub: BIP86_TPUB, script: 'p2tr', start: 0, count: 1 })[0]!.address);
    assert.match(derived.payment.address, /^bcrt1p/);
    assert.equal(derived.uri, `bitcoin:${derived.payment.address}?amount=${derived.payment.amount}`);
    const [txid] = sim.mine([[{ address: derived.payment.address, sats: parseUnits(derived.payment.amount, 8) }]]);
    sim.mineEmpty(1);
    const done = await completed(derived.payment.id);
    assert.equal(done.transactionHash, txid);
    assert.equal(done.receivedAmount, derived.payment.amount);

    // A real mainnet taproot transaction, byte for byte, in a block with its witness commitment. Its
    // first output key, written for regtest (bcrt1p…), is a deposit address seeded from a file.
    const realTx = bitcoin.Transaction.fromHex(MAINNET_TAPROOT_TX.hex);
    const deposit = encodeSegwitAddress('bcrt', 1, realTx.outs[0]!.script.subarray(2));
    const file = join(mkdtempSync(join(tmpdir(), 'cg-taproot-')), 'pool.txt');
    writeFileSync(file, `${deposit}\n`);
    assert.equal((await seed('--file', file)).added, 1);
    const real = await open('174'); // 1.74 USD at 60000 USD/BTC: 2900 sats; the output carries 2908
    assert.equal(real.payment.address, deposit);
    assert.equal(parseUnits(real.payment.amount, 8), 2900n);
    assert.equal(real.uri, `bitcoin:${deposit}?amount=${real.payment.amount}`);
    sim.mine([realTx]);
    sim.mineEmpty(1);
    const paid = await completed(real.payment.id);
    assert.equal(paid.transactionHash, MAINNET_TAPROOT_TX.txid);
    assert.equal(paid.receivedAmount, '0.00002908');
    const rows = await d.common.db.em().find(ObservedTransfer, { paymentId: real.payment.id });
    assert.deepEqual(rows.map((r) => [r.txHash, r.logIndex, r.status]), [[MAINNET_TAPROOT_TX.txid, 0, 'CREDITED']]);
    assert.doesNotMatch(proc.output(), /merkle root|does not parse/, 'the block with a real segwit transaction was trusted at first read');
    assert.equal(await proc.stop('SIGTERM'), 0);
  });

  test('a Bitcoin Core node as the source (JSON-RPC getblockhash / getblock verbosity 0, Basic auth): same detection; bad credentials stop with one line', async (t) => {
    const sim = await startEsploraSim({ rpcAuth: { user: 'chaingate', password: 's3cret' } });
    t.after(() => sim.close());
    sim.mineEmpty(3);
    const rpcUrl = `http://chaingate:s3cret@${new URL(sim.url).host}/`;
    const chains = { bitcoin: { testnet: { rpcUrl, source: 'core', network: 'REGTEST', blockTimeMs: 1000, pollMs: 1000 } } };
    const indexer = { minPollMs: 200, maxBlocksPerRange: 10, leaseSeconds: 5, rpcTimeoutMs: 1000 };
    const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
    const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }) };
    await d.seedPool('bitcoin', regtestPool(2), true);
    const proc = spawnIndexer(['bitcoin', '--testnet'], env);
    t.after(() => proc.stop('SIGKILL'));
    await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);
    const inv = await d.signed('POST', '/api/v1/invoices', { orderId: 'core-1', amount: '2500', currency: 'USD' });
    const p = (await checkoutInvoice(d.daemon.deps, { invoiceId: inv.json.data.id, merchantId: null, blockchain: 'bitcoin', cryptoCurrency: 'BTC', testnet: true, method: 'direct' })).payment;
    assert.equal(p.network, 'REGTEST');
    sim.mine([[{ address: p.address, sats: parseUnits(p.amount, 8) }]]);
    sim.mineEmpty(1);
    const done = await waitFor('completed', async () => {
      const row = await d.common.db.em().findOneOrFail(Payment, { id: p.id }, { refresh: true });
      return row.status === 'COMPLETED' ? row : null;
    });
    assert.equal(done.receivedAmount, p.amount);
    assert.doesNotMatch(proc.output(), /s3cret/, 'the password is never logged');
    assert.equal(await proc.stop('SIGTERM'), 0);

    const bad = await runCli(['index', 'bitcoin', '--testnet'], {
      ...env,
      CHAINGATE_CONFIG: writeConfigFile({ chains: { bitcoin: { testnet: { ...chains.bitcoin.testnet, rpcUrl: rpcUrl.replace('s3cret', 'wrong') } } }, indexer }),
    });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /refused the credentials \(HTTP 401\)/);
  });
});
