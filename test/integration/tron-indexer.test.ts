import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits, Wallet, type Contract } from 'ethers';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { hexToTron, tronToHex } from '../../src/families/tron/address.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { deployFixtures } from '../../src/devnet/evm-fixtures.ts';
import { startHardhatNode } from '../../src/devnet/hardhat-node.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { startJavaTronNode } from '../helpers/java-tron-node.ts';
import { DELEGATE_RESOURCE, FREEZE_FOR_RECEIVER, OUT_OF_ENERGY, TRC10_TRANSFER, TRX_TRANSFER } from '../helpers/tron-fixtures.ts';

// The Tron reader against a local java-tron (java-tron-node.ts): its HTTP API in java-tron's JSON
// over a real chain, and the /jsonrpc of that chain. Real TRC-20 execution on an EVM with Tron's
// chain id; Tron-only transactions from recorded shapes (tron-fixtures.ts).

const to41 = (tAddress: string) => `41${tronToHex(tAddress)!.slice(2)}`;

function withValue(tx: typeof TRX_TRANSFER | typeof TRC10_TRANSFER, changes: Record<string, unknown>, txID: string) {
  const contract = tx.raw_data.contract[0]!;
  return {
    ...tx,
    txID,
    raw_data: { ...tx.raw_data, contract: [{ ...contract, parameter: { ...contract.parameter, value: { ...contract.parameter.value, ...changes } } }] },
  };
}

describe('tron indexer: java-tron HTTP API for TRX, /jsonrpc for TRC-20 (separate indexer process)', () => {
  test('TRX and USDT are credited; TRC-10, delegations, freezes, OUT_OF_ENERGY and look-alikes never; completion waits for solidification', async (t) => {
    const node = await startHardhatNode({ chainId: 0x2b6653dc });
    t.after(() => node.stop());
    const fx = await deployFixtures(node);
    const tron = await startJavaTronNode(node, { solidLag: 0 });
    t.after(() => tron.close());
    const chains = {
      tron: {
        mainnet: { rpcUrl: `${tron.url}/jsonrpc`, apiKey: 'test-trongrid-key', blockTimeMs: 250, confirmations: 3, tokens: { USDT: { address: hexToTron(fx.addresses.usdt), decimals: 6 } } },
      },
    };
    const indexer = { minPollMs: 200, maxBlocksPerRange: 20, leaseSeconds: 5, rpcTimeoutMs: 2000 };
    const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
    const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }) };
    await d.seedPool('tron', Array.from({ length: 6 }, () => hexToTron(Wallet.createRandom().address)));
    const proc = spawnIndexer(['tron'], env);
    t.after(() => proc.stop('SIGKILL'));
    await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

    const em = () => d.common.db.em();
    const open = async (coin: 'USDT' | 'TRX') => {
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `o-${coin}-${Math.random()}`, amount: '2500', currency: 'USD' });
      // The buyer's hosted checkout: the public route the payment page calls.
      const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'tron', cryptoCurrency: coin });
      assert.equal(co.status, 201, co.text);
      return em().findOneOrFail(Payment, { id: co.json.data.payment.id });
    };
    const waitStatus = (id: string, statuses: string[]) =>
      waitFor(`payment in ${statuses.join('/')}`, async () => {
        const p = await em().findOneOrFail(Payment, { id }, { refresh: true });
        return statuses.includes(p.status) ? p : null;
      });
    const head = async () => BigInt(await node.send<string>('eth_blockNumber', []));
    const indexedTo = async (n: bigint) =>
      waitFor(`indexer at block ${n}`, async () => {
        const out = await runCli(['status', '--json'], env);
        const tronIndexer = (JSON.parse(out.stdout) as { indexers: { chain: string; block: string }[] }).indexers.find((i) => i.chain === 'tron');
        return tronIndexer && BigInt(tronIndexer.block) >= n;
      });
    const transfersTo = (address: string) => em().find(ObservedTransfer, { toAddress: address }, { refresh: true });

    // TRX: a TransferContract (the recorded transaction, sent to the deposit) is credited in sun.
    const trx = await open('TRX');
    assert.equal(trx.amount, '208.333334');
    await node.mine(1);
    tron.inject(await head(), withValue(TRX_TRANSFER, { amount: 208_333_334, to_address: to41(trx.address) }, TRX_TRANSFER.txID));
    const seen = await waitStatus(trx.id, ['PROCESSING', 'CONFIRMING']);
    assert.equal(seen.receivedAmount, '208.333334');
    assert.equal(seen.transactionHash, TRX_TRANSFER.txID, 'Tron form: 64 hex digits, no 0x');

    // The same amount to another TRX payment as a TRC-10 token, a resource delegation and a freeze
    // for it: none moves TRX into the deposit, none is credited.
    const fakeTrx = await open('TRX');
    await node.mine(1);
    const fakeBlock = await head();
    tron.inject(fakeBlock, withValue(TRC10_TRANSFER, { amount: 208_333_334, to_address: to41(fakeTrx.address) }, TRC10_TRANSFER.txID));
    const delegate = DELEGATE_RESOURCE.raw_data.contract[0]!;
    tron.inject(fakeBlock, { ...DELEGATE_RESOURCE, raw_data: { ...DELEGATE_RESOURCE.raw_data, contract: [{ ...delegate, parameter: { ...delegate.parameter, value: { ...delegate.parameter.value, receiver_address: to41(fakeTrx.address) } } }] } });
    const freeze = FREEZE_FOR_RECEIVER.raw_data.contract[0]!;
    tron.inject(fakeBlock, { ...FREEZE_FOR_RECEIVER, raw_data: { ...FREEZE_FOR_RECEIVER.raw_data, contract: [{ ...freeze, parameter: { ...freeze.parameter, value: { ...freeze.parameter.value, receiver_address: to41(fakeTrx.address) } } }] } });

    // USDT: a TRC-20 transfer whose transaction ran out of energy (java-tron's result says so,
    // whatever the log) is not credited; a look-alike token is not either; the real one is.
    const usdtFailed = await open('USDT');
    const failedTx = await (fx.usdt.connect(fx.payer) as Contract).getFunction('transfer')(tronToHex(usdtFailed.address), parseUnits('25', 6));
    tron.setResult(failedTx.hash as string, OUT_OF_ENERGY);
    await failedTx.wait();
    const usdt = await open('USDT');
    await (await (fx.fakeUsdc.connect(fx.payer) as Contract).getFunction('transfer')(tronToHex(usdt.address), parseUnits('25', 6))).wait();
    await (await (fx.usdt.connect(fx.payer) as Contract).getFunction('transfer')(tronToHex(usdt.address), parseUnits('25', 6))).wait();
    await waitStatus(usdt.id, ['PROCESSING', 'CONFIRMING']);

    // Finality: the count is reached, but the solidified block lags; completion waits for it.
    tron.setSolidLag(50);
    await node.mine(4);
    await indexedTo(await head());
    const waiting = await em().findOneOrFail(Payment, { id: usdt.id }, { refresh: true });
    assert.equal(waiting.status, 'CONFIRMING', 'the required 3 are reached but the block is not solidified yet');
    assert.equal(waiting.confirmations, 3);
    tron.setSolidLag(0);
    await node.mine(1);
    const doneUsdt = await waitStatus(usdt.id, ['COMPLETED']);
    assert.equal(doneUsdt.receivedAmount, '25');
    const doneTrx = await waitStatus(trx.id, ['COMPLETED']);
    assert.equal(doneTrx.receivedAmount, '208.333334');
    assert.equal((await em().findOneOrFail(Invoice, { id: trx.invoice.id }, { refresh: true })).status, 'PAID');

    const fakeRows = await transfersTo(fakeTrx.address);
    assert.deepEqual(fakeRows.map((r) => [r.status, r.tokenAddress]), [['NOT_CREDITED', 'TRC10:1004295']], 'the TRC-10 transfer is recorded, never credited; delegation and freeze are not transfers');
    assert.equal((await em().findOneOrFail(Payment, { id: fakeTrx.id }, { refresh: true })).receivedAmount, '0');
    const failedRows = await transfersTo(usdtFailed.address);
    assert.deepEqual(failedRows.map((r) => r.status), ['REVERTED']);
    assert.equal(failedRows[0]!.txHash, (failedTx.hash as string).slice(2));
    assert.equal((await em().findOneOrFail(Payment, { id: usdtFailed.id }, { refresh: true })).receivedAmount, '0');
    const usdtRows = (await transfersTo(usdt.address)).map((r) => r.status).sort();
    assert.deepEqual(usdtRows, ['CREDITED', 'NOT_CREDITED']);

    assert.ok(tron.apiKeys.length > 0 && tron.apiKeys.every((k) => k === 'test-trongrid-key'), 'the TronGrid key is the configured one');
    assert.ok((tron.calls['/jsonrpc'] ?? 0) > 0 && (tron.calls['/wallet/getblockbylimitnext'] ?? 0) > 0);
    assert.deepEqual(tron.keyless, {}, 'and it is sent with every call, on the /jsonrpc and the HTTP API alike');
    assert.doesNotMatch(proc.output(), /test-trongrid-key/, 'and never logged');
    assert.ok((tron.calls['/wallet/getblockbylimitnext'] ?? 0) > 0);
    assert.equal(await proc.stop('SIGTERM'), 0);
  });

  test('a wrong network, a wrong HTTP API and traces are refused with one clear line', async (t) => {
    const node = await startHardhatNode({ chainId: 0x2b6653dc });
    t.after(() => node.stop());
    const tron = await startJavaTronNode(node);
    t.after(() => tron.close());
    const d = await startTestDaemon(t, 'sqlite', {});
    const run = (chains: Record<string, unknown>, args: string[] = []) =>
      runCli(['index', 'tron', ...args], { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer: { rpcTimeoutMs: 2000 } }) });

    const nile = await run({ tron: { testnet: { rpcUrl: `${tron.url}/jsonrpc` } } }, ['--testnet']);
    assert.equal(nile.code, 2);
    assert.match(nile.stderr, /not tron NILE/);

    const otherApi = await startHardhatNode({ chainId: 0x2b6653dc });
    t.after(() => otherApi.stop());
    const wrongHttp = await run({ tron: { mainnet: { rpcUrl: `${tron.url}/jsonrpc`, apiUrl: otherApi.url } } });
    assert.equal(wrongHttp.code, 2, wrongHttp.stderr);
    assert.match(wrongHttp.stderr, /does not answer as java-tron's HTTP API .*check chains\.tron\.mainnet\.apiUrl/);

    const traces = await run({ tron: { mainnet: { rpcUrl: `${tron.url}/jsonrpc`, traces: true } } });
    assert.equal(traces.code, 2);
    assert.match(traces.stderr, /chains\.tron\.mainnet\.traces: call traces exist on EVM chains only/);
  });
});
