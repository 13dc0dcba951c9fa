import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type Wallet, parseEther, parseUnits, type Contract } from 'ethers';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { sweepExpired } from '../../src/store/expiry.ts';
import { runCli } from '../helpers/cli.ts';
import { skipUnless } from '../helpers/databases.ts';
import { startEvmWorld, REQUIRED_CONFIRMATIONS, type EvmWorld } from '../helpers/evm-world.ts';
import { waitFor } from '../helpers/indexer-process.ts';
import { startRpcProxy, type RpcProxy } from '../helpers/rpc-proxy.ts';

async function send(token: Contract, from: Wallet, to: string, amount: bigint): Promise<string> {
  const tx = await (token.connect(from) as Contract).getFunction('transfer')(to, amount);
  await tx.wait();
  return tx.hash as string;
}

async function sendEth(from: Wallet, to: string, value: bigint): Promise<string> {
  const tx = await from.sendTransaction({ to, value });
  await tx.wait();
  return tx.hash;
}

async function completes(w: EvmWorld, id: string): Promise<Payment> {
  await w.waitStatus(id, ['PROCESSING', 'CONFIRMING', 'COMPLETED']);
  await w.node.mine(REQUIRED_CONFIRMATIONS);
  return w.waitStatus(id, ['COMPLETED']);
}

describe('EVM indexer against a real Hardhat node (SQLite, separate indexer process)', () => {
  test('detects, matches, confirms and completes payments', async (t) => {
    const w = await startEvmWorld(t, { dialect: 'sqlite', traces: true });
    const indexer = w.startIndexer();
    const usdc = (n: string) => parseUnits(n, 6);

    await t.test('a USDC transfer reaches COMPLETED after the required confirmations; invoice PAID; events written', async () => {
      const p = await w.openPayment('USDC');
      assert.equal(p.amount, '25');
      const hash = await send(w.fx.usdc, w.fx.payer, p.address, usdc('25'));
      const seen = await w.waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      assert.equal(seen.transactionHash, hash);
      assert.equal(seen.receivedAmount, '25');
      assert.ok(seen.confirmations < REQUIRED_CONFIRMATIONS);
      await w.node.mine(REQUIRED_CONFIRMATIONS);
      const done = await w.waitStatus(p.id, ['COMPLETED']);
      assert.ok(done.confirmations >= REQUIRED_CONFIRMATIONS);
      assert.ok(done.completedAt);
      assert.equal(done.metadata.amountDifference, '0');
      const inv = await w.invoice(p.invoice.id);
      assert.equal(inv.status, 'PAID');
      assert.ok(inv.paidAt);
      const events = await w.d.common.db.em().find(WebhookEvent, { paymentId: p.id }, { orderBy: { createdAt: 'asc' } });
      const types = events.map((e) => e.type);
      assert.ok(types.includes('payment.confirming'));
      assert.ok(types.includes('payment.completed'));
      assert.ok(types.includes('invoice.paid'));
      const completed = JSON.parse(events.find((e) => e.type === 'payment.completed')!.payload);
      assert.equal(completed.data.payment.id, p.id);
      assert.equal(completed.data.payment.received_amount, '25');
      assert.equal(completed.data.payment.amount, '25');
      // the gateway shows it too
      const st = await w.d.signed('GET', `/api/v1/payments/${p.id}/status`);
      assert.equal(st.json.data.status, 'COMPLETED');
      // and the operator's status view: the indexer runs, the payment counts as completed
      const status = await runCli(['status', '--json'], w.env);
      assert.equal(status.code, 0, status.stderr);
      const report = JSON.parse(status.stdout) as { indexers: { chain: string; network: string; running: boolean; block: string }[]; payments: Record<string, number>; webhooks: { pending: number } };
      assert.deepEqual(report.indexers.map((i) => [i.chain, i.network, i.running]), [['ethereum', 'MAINNET', true]]);
      assert.ok(Number(report.indexers[0]!.block) > 0);
      assert.equal(report.payments.COMPLETED, 1);
      const text = await runCli(['status'], w.env);
      assert.match(text.stdout, /ethereum\s+MAINNET\s+running/);
    });

    await t.test('USDT (no-bool token) and native ETH; overpayment is recorded, never blocks completion', async () => {
      const tether = await w.openPayment('USDT');
      await send(w.fx.usdt, w.fx.payer, tether.address, usdc('25'));
      const eth = await w.openPayment('ETH');
      // 2500 cents at 3000 USD/ETH = 0.008333333333333334 ETH; pay 0.01
      assert.equal(eth.amount, '0.008333333333333334');
      await sendEth(w.fx.payer, eth.address, parseEther('0.01'));
      assert.equal((await completes(w, tether.id)).receivedAmount, '25');
      const done = await completes(w, eth.id);
      assert.equal(done.receivedAmount, '0.01');
      assert.equal(done.metadata.amountDifference, '0.001666666666666666');
    });

    await t.test('two transfers are summed; an underpayment completes and is recorded', async () => {
      const p = await w.openPayment('USDC');
      await send(w.fx.usdc, w.fx.payer, p.address, usdc('10'));
      await send(w.fx.usdc, w.fx.payer, p.address, usdc('5.5'));
      await waitFor('two credits', async () => (await w.payment(p.id)).receivedAmount === '15.5');
      const done = await completes(w, p.id);
      assert.equal(done.receivedAmount, '15.5');
      assert.equal(done.metadata.amountDifference, '-9.5');
      assert.equal((await w.transfers(p.id)).filter((x) => x.status === 'CREDITED').length, 2);
    });

    await t.test('a look-alike token and the wrong coin are recorded but never credited', async () => {
      const p = await w.openPayment('USDC');
      const fakeHash = await send(w.fx.fakeUsdc, w.fx.payer, p.address, usdc('25'));
      const ethHash = await sendEth(w.fx.payer, p.address, parseEther('1'));
      const rows = await waitFor('two observed transfers', async () => {
        const r = await w.transfers(p.id);
        return r.length === 2 ? r : null;
      });
      assert.deepEqual(rows.map((r) => r.status), ['NOT_CREDITED', 'NOT_CREDITED']);
      assert.deepEqual(new Set(rows.map((r) => r.txHash)), new Set([fakeHash, ethHash]));
      await w.node.mine(REQUIRED_CONFIRMATIONS);
      await new Promise((r) => setTimeout(r, 800));
      const after = await w.payment(p.id);
      assert.equal(after.status, 'PENDING');
      assert.equal(after.receivedAmount, '0');
    });

    await t.test('a reverted transaction is recorded, never credited, and does not fail the payment (anyone can send one)', async () => {
      // The payment contract has no receive(): native coin sent to it reverts, and is mined with status 0.
      const p = await w.openPayment('ETH', { address: w.fx.addresses.gateway });
      await w.fx.payer.sendTransaction({ to: p.address, value: parseEther('0.01'), gasLimit: 100_000 }).catch(() => undefined);
      const rows = await waitFor('the reverted transfer', async () => {
        const r = await w.transfers(p.id);
        return r.length === 1 ? r : null;
      });
      assert.deepEqual([rows[0]!.status, rows[0]!.note], ['REVERTED', 'transaction reverted on chain']);
      await w.node.mine(REQUIRED_CONFIRMATIONS);
      await new Promise((r) => setTimeout(r, 800));
      const after = await w.payment(p.id);
      assert.deepEqual([after.status, after.receivedAmount], ['PENDING', '0']);
      assert.equal((await w.invoice(p.invoice.id)).status, 'PAYMENT_PENDING');
    });

    await t.test('a late payment is recorded and listed, not credited', async () => {
      const p = await w.openPayment('USDC');
      await w.d.common.db.em().nativeUpdate(Payment, { id: p.id }, { expiresAt: new Date(Date.now() - 1000) });
      await sweepExpired(w.d.common.db);
      assert.equal((await w.payment(p.id)).status, 'EXPIRED');
      const hash = await send(w.fx.usdc, w.fx.payer, p.address, usdc('25'));
      const rows = await waitFor('late transfer', async () => {
        const r = await w.transfers(p.id);
        return r.length ? r : null;
      });
      assert.equal(rows[0]!.status, 'LATE');
      assert.equal((await w.payment(p.id)).receivedAmount, '0');
      const listed = await runCli(['transfers', 'list', '--unmatched', '--json'], w.env);
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok((JSON.parse(listed.stdout) as { txHash: string; status: string }[]).some((r) => r.txHash === hash && r.status === 'LATE'));
    });

    await t.test('web3: a payment through the contract completes from its event alone (no /confirm)', async () => {
      const p = await w.openPayment('USDC', { method: 'web3' });
      assert.equal(p.paymentType, 'SMART_CONTRACT');
      assert.equal(p.address, w.fx.addresses.treasury);
      await (await (w.fx.usdc.connect(w.fx.payer) as Contract).getFunction('approve')(w.fx.addresses.gateway, usdc('25'))).wait();
      await (await (w.fx.gateway.connect(w.fx.payer) as Contract).getFunction('pay')(p.externalId, w.fx.addresses.usdc, usdc('25'))).wait();
      const done = await completes(w, p.id);
      assert.equal(done.receivedAmount, '25');
      assert.equal((await w.invoice(p.invoice.id)).status, 'PAID');
    });

    await t.test('a second indexer for the same chain and network is refused while the first runs', async () => {
      const second = w.startIndexer(['--exit-if-running']);
      assert.equal(await second.exited, 2);
      assert.match(second.output(), /another indexer holds ethereum MAINNET/);
      assert.equal(indexer.child.exitCode, null, 'the first keeps running');
    });

    await t.test('a reorg un-credits a transfer and the payment steps back to PENDING', async () => {
      const p = await w.openPayment('USDC');
      const snap = await w.node.snapshot();
      await send(w.fx.usdc, w.fx.payer, p.address, usdc('25'));
      await w.waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      await w.node.revert(snap);
      await w.node.mine(2); // a different chain, as long as the old one
      await w.node.mine(1);
      const back = await w.waitStatus(p.id, ['PENDING']);
      assert.equal(back.receivedAmount, '0');
      assert.equal(back.transactionHash, null);
      const rows = await w.transfers(p.id);
      assert.equal(rows[0]!.status, 'REORGED');
      // paying again on the new chain credits normally
      await send(w.fx.usdc, w.fx.payer, p.address, usdc('25'));
      assert.equal((await completes(w, p.id)).receivedAmount, '25');
    });

    await t.test('with traces on, native coin moved by a contract is found', async () => {
      // PaymentGateway forwards native value to its treasury with an internal call.
      const p = await w.openPayment('ETH', { address: w.fx.addresses.treasury });
      const value = parseEther('0.009');
      const id = `0x${'ab'.repeat(32)}`;
      await (await (w.fx.gateway.connect(w.fx.payer) as Contract).getFunction('pay')(id, '0x0000000000000000000000000000000000000000', value, { value })).wait();
      const seen = await w.waitStatus(p.id, ['PROCESSING', 'CONFIRMING']);
      assert.equal(seen.receivedAmount, '0.009');
      const rows = await w.transfers(p.id);
      assert.ok(rows[0]!.logIndex <= -2, 'a traced internal transfer');
    });

    assert.equal(indexer.child.exitCode, null, 'the indexer never crashed');
    assert.equal(await indexer.stop('SIGTERM'), 0, 'SIGTERM stops it gracefully');
    assert.match(indexer.output(), /indexer stopped/);
  });

  test('kill -9 mid-range and restart: every transfer is counted exactly once', async (t) => {
    // Latency on every RPC call makes each range take long enough to be killed in the middle.
    let proxy: RpcProxy | undefined;
    const w = await startEvmWorld(t, {
      dialect: 'sqlite',
      indexer: { maxBlocksPerRange: 2 },
      rpcUrl: async (target) => {
        proxy = await startRpcProxy({ target, latencyMs: 60 });
        t.after(() => proxy!.close());
        return proxy.url;
      },
    });
    const payments: Payment[] = [];
    for (let i = 0; i < 8; i++) payments.push(await w.openPayment('USDC'));
    for (const p of payments) await send(w.fx.usdc, w.fx.payer, p.address, parseUnits('25', 6));
    await w.node.mine(REQUIRED_CONFIRMATIONS + 2);
    const credited = () => w.d.common.db.em().count(ObservedTransfer, { status: 'CREDITED' });
    // Round 1 is killed the moment part of the work is committed (the RPC latency makes each range
    // slow enough to observe that), so a crash mid-way is certain, not a matter of timing.
    const first = w.startIndexer(['--from-block', '0']);
    await waitFor('part of the transfers written', async () => (await credited()) > 0, 60_000, 10);
    await first.stop('SIGKILL');
    const partial = await credited();
    assert.ok(partial > 0 && partial < payments.length, `killed mid-way: ${partial} of ${payments.length} written`);
    // Later rounds resume from the cursor and are killed again, wherever they are.
    for (let round = 1; round < 4; round++) {
      const proc = w.startIndexer();
      await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);
      await new Promise((r) => setTimeout(r, 100 * round));
      await proc.stop('SIGKILL');
    }
    // The last run only has to finish: without the latency that made the kills land mid-range.
    proxy!.setLatency(0);
    const final = w.startIndexer();
    for (const p of payments) {
      await w.waitStatus(p.id, ['COMPLETED'], 60_000).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${final.output().slice(-3000)}`);
      });
    }
    for (const p of payments) {
      const done = await w.payment(p.id);
      assert.equal(done.receivedAmount, '25', 'never counted twice');
      assert.equal((await w.transfers(p.id)).length, 1);
    }
    await final.stop();
  });
});

describe('EVM indexer under RPC faults', () => {
  test('429s, hangs, 5xx, garbage, null results, resets and refused log ranges: no crash, no gap, nothing counted twice', async (t) => {
    let proxy: RpcProxy | undefined;
    const w = await startEvmWorld(t, {
      dialect: 'sqlite',
      indexer: { maxBlocksPerRange: 4, rpcTimeoutMs: 1000 },
      rpcUrl: async (target) => {
        proxy = await startRpcProxy({ target, faultRate: 0, hangMs: 2500, seed: 7, maxLogRange: 1 });
        t.after(() => proxy!.close());
        return proxy.url;
      },
    });
    const indexer = w.startIndexer();
    await waitFor('indexer start', async () => indexer.output().includes('indexer started'), 20_000);
    proxy!.setFaultRate(0.3);
    const payments: Payment[] = [];
    for (let i = 0; i < 5; i++) {
      const p = await w.openPayment(i % 2 ? 'ETH' : 'USDC');
      payments.push(p);
      if (i % 2) await sendEth(w.fx.payer, p.address, parseEther('0.01'));
      else await send(w.fx.usdc, w.fx.payer, p.address, parseUnits('25', 6));
    }
    await w.node.mine(REQUIRED_CONFIRMATIONS);
    for (const p of payments) await w.waitStatus(p.id, ['COMPLETED'], 120_000);
    proxy!.setFaultRate(0);
    for (const p of payments) assert.equal((await w.transfers(p.id)).length, 1);
    assert.equal(indexer.child.exitCode, null, 'still running');
    const kinds = Object.keys(proxy!.stats.faults);
    assert.ok(kinds.length >= 4, `faults injected: ${JSON.stringify(proxy!.stats.faults)}`);
    assert.ok((proxy!.stats.faults.range ?? 0) > 0, 'log ranges were refused as too large and split');
    assert.match(indexer.output(), /RPC call failed; retrying/);
    await indexer.stop();
  });
});

describe('EVM indexer on PostgreSQL', { skip: await skipUnless('postgresql') }, () => {
  test('a token payment completes with the indexer writing to PostgreSQL', async (t) => {
    const w = await startEvmWorld(t, { dialect: 'postgresql' });
    const indexer = w.startIndexer();
    const p = await w.openPayment('USDC');
    await send(w.fx.usdc, w.fx.payer, p.address, parseUnits('26', 6));
    const done = await completes(w, p.id);
    assert.equal(done.metadata.amountDifference, '1');
    assert.equal(await w.d.common.db.em().count(ObservedTransfer, { paymentId: p.id }), 1);
    await indexer.stop();
  });
});
