import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Address, beginCell, toNano } from '@ton/core';
import type { BlockchainTransaction } from '@ton/sandbox';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { createWebhookSender } from '../../src/webhooks/sender.ts';
import { OP_EXCESSES, OP_TRANSFER_NOTIFICATION } from '../../src/families/ton/ton-source.ts';
import { verifyWebhook } from '../../src/sdk/verify-webhook.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { startTonNode } from '../helpers/toncenter-node.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

// The TON reader end to end: real TVM transactions (@ton/sandbox, TEP-74 jetton code) behind a
// toncenter v3 server, the real `chaingate index ton` process, the hosted checkout, and the signed
// webhook to a real receiver. What the reader makes of each kind of transaction, in detail:
// src/families/ton/ton-source.test.ts.

const MASTER_KEY = 't'.repeat(64);

/** The nanotons a message with this op brought to this address, as the TVM executed it. */
function tonIn(txs: BlockchainTransaction[], to: string, op: number): bigint {
  const values = txs.flatMap(({ inMessage: m }) => {
    if (m?.info.type !== 'internal' || !m.info.dest.equals(Address.parse(to))) return [];
    const body = m.body.beginParse();
    return body.remainingBits >= 32 && body.loadUint(32) === op ? [m.info.value.coins] : [];
  });
  assert.equal(values.length, 1, `one message with op 0x${op.toString(16)} to ${to}`);
  return values[0]!;
}

describe('ton indexer: toncenter v3 over a real TVM (separate indexer process)', () => {
  test('TON and USDT complete; a bounce, an excess, a look-alike jetton and a forged notification are never credited, their TON recorded', async (t) => {
    const ton = await startTonNode();
    t.after(() => ton.close());
    const receiver = await startWebhookReceiver(t);
    const master = ton.usdt.master.toString({ bounceable: true });
    const chains = { ton: { mainnet: { rpcUrl: ton.url, apiKey: 'toncenter-test-key', blockTimeMs: 400, pollMs: 1000, tokens: { USDT: { address: master, decimals: 6 } } } } };
    const indexer = { minPollMs: 200, maxBlocksPerRange: 50, leaseSeconds: 5, rpcTimeoutMs: 2000 };
    const d = await startTestDaemon(t, 'sqlite', { chains, indexer, webhooks: { allowPrivateNetworks: true } });
    const merchant = await d.createMerchant({ name: 'TON shop', webhookUrl: receiver.url });
    // Deposits: fresh wallet addresses (undeployed), stored in the pool's non-bounceable form.
    const deposits = Array.from({ length: 9 }, () => new Address(0, randomBytes(32)).toString({ bounceable: false }));
    await d.seedPool('ton', deposits);
    const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: MASTER_KEY, CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }) };

    // The first answers for the deposits' transactions are malformed: logged, retried, never a TypeError.
    let spoiled = 0;
    ton.tamper((path, _query, answer) => {
      if (path !== '/api/v3/transactions' || spoiled >= 2) return answer;
      spoiled++;
      return { ...(answer as object), transactions: [{ account: 42, hash: null }] };
    });
    const proc = spawnIndexer(['ton'], env);
    t.after(() => proc.stop('SIGKILL'));
    await waitFor('indexer start', async () => proc.output().includes('indexer started'), 30_000);
    const sender = createWebhookSender({ common: d.common });

    const em = () => d.common.db.em();
    const open = async (coin: 'TON' | 'USDT') => {
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `t-${Math.random()}`, amount: '2500', currency: 'USD' }, { merchant });
      const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ton', cryptoCurrency: coin });
      assert.equal(co.status, 201, co.text);
      assert.match(co.json.data.payment.paymentAddress, /^UQ/, 'the page shows the non-bounceable form');
      return em().findOneOrFail(Payment, { id: co.json.data.payment.id });
    };
    const payment = (id: string) => em().findOneOrFail(Payment, { id }, { refresh: true });
    const waitStatus = (id: string, statuses: string[]) =>
      waitFor(`payment in ${statuses.join('/')}`, async () => statuses.includes((await payment(id)).status), 30_000).catch(async (err: unknown) => {
        const seen = await em().find(ObservedTransfer, {}, { refresh: true });
        throw new Error(`${String(err)}\ntransfers: ${JSON.stringify(seen.map((r) => [r.status, r.toAddress, r.amount, r.tokenAddress, r.note]))}\n${proc.output().slice(-3000)}`);
      });
    const rows = (address: string) => em().find(ObservedTransfer, { toAddress: address }, { refresh: true });
    const nanoOf = (p: Payment) => BigInt(Math.round(Number(p.amount) * 1e9));

    const tonPay = await open('TON');
    await ton.sendTon(Address.parse(tonPay.address), nanoOf(tonPay), false);

    // A binary payload (an opcode other than none or a text comment) still carries TON that stays.
    const binaryPay = await open('TON');
    await ton.sendTon(Address.parse(binaryPay.address), nanoOf(binaryPay), false, beginCell().storeUint(0xdeadbeef, 32).storeUint(7, 64).endCell());

    const bounced = await open('TON');
    await ton.sendTon(Address.parse(bounced.address), nanoOf(bounced), true); // bounceable, to an undeployed wallet: comes back

    const withForward = await open('USDT');
    const forwardTon = tonIn(await ton.sendJetton(ton.usdt, Address.parse(withForward.address), 25_000_000n, toNano('0.01')), withForward.address, OP_TRANSFER_NOTIFICATION);
    assert.equal(forwardTon, toNano('0.01'), 'the notification carries exactly the forward_ton_amount');
    const noForward = await open('USDT');
    await ton.sendJetton(ton.usdt, Address.parse(noForward.address), 25_000_000n, 0n);

    // Someone's jetton transfer names a TON payment's deposit as the response destination: an excess, about jettons, not a payment.
    const excessOnly = await open('TON');
    const excessTon = tonIn(await ton.sendJetton(ton.usdt, ton.attacker.address, 1_000_000n, 0n, Address.parse(excessOnly.address)), excessOnly.address, OP_EXCESSES);

    const fakeJetton = await open('USDT');
    const lookAlikeTon = tonIn(await ton.sendJetton(ton.lookAlike, Address.parse(fakeJetton.address), 25_000_000n, toNano('0.01')), fakeJetton.address, OP_TRANSFER_NOTIFICATION);
    const forged = await open('USDT');
    const forgedTon = tonIn(await ton.forgeNotification(Address.parse(forged.address), 25_000_000n), forged.address, OP_TRANSFER_NOTIFICATION);

    ton.mine(6);
    for (const p of [tonPay, binaryPay, withForward, noForward]) await waitStatus(p.id, ['COMPLETED']);
    const done = await payment(tonPay.id);
    assert.equal(done.receivedAmount, tonPay.amount);
    assert.equal(done.confirmations, 5);
    assert.equal((await payment(binaryPay.id)).receivedAmount, binaryPay.amount);
    for (const p of [withForward, noForward]) {
      assert.equal((await payment(p.id)).receivedAmount, '25', 'credited once, whether or not forward TON came with it');
    }
    assert.equal(spoiled, 2);
    assert.match(proc.output(), /malformed answer to \/api\/v3\/transactions: transactions\.0\.account/, 'the malformed answers were logged, naming the endpoint');
    assert.match(proc.output(), /indexer tick failed; retrying/);
    assert.doesNotMatch(proc.output(), /TypeError/);

    const waitCursor = async () => {
      const n = BigInt(ton.seqno());
      await waitFor('indexer at the head', async () => {
        const out = await runCli(['status', '--json'], env);
        const i = (JSON.parse(out.stdout) as { indexers: { chain: string; block: string }[] }).indexers.find((x) => x.chain === 'ton');
        return i && BigInt(i.block) >= n;
      });
    };
    await waitCursor();
    assert.equal((await payment(bounced.id)).receivedAmount, '0');
    assert.deepEqual((await rows(bounced.address)).map((r) => r.status), ['REVERTED'], 'the bounce is recorded, not credited');
    // TON that really arrived with a jetton message: recorded as native TON (no token), its exact
    // amount, NOT_CREDITED with the reason — even on a TON payment, which it never pays.
    const view = (r: ObservedTransfer) => [r.status, r.tokenAddress ?? null, r.amount, r.note];
    const notOurContract = /is not the registry's/;
    assert.deepEqual((await rows(excessOnly.address)).map(view), [
      ['NOT_CREDITED', null, excessTon.toString(), 'TON returned as jetton excesses (the unspent fees of a jetton transfer); not a payment'],
    ]);
    assert.equal((await payment(excessOnly.id)).receivedAmount, '0');
    // The genuine notification: the jettons credited as USDT, the forward TON beside them, not credited.
    const genuine = (await rows(withForward.address)).map(view).sort();
    assert.deepEqual(genuine, [
      ['CREDITED', master, '25000000', null],
      ['NOT_CREDITED', null, forwardTon.toString(), 'TON attached to a jetton transfer notification (forward_ton_amount); not a payment'],
    ].sort());
    // Notifications from anyone but the deposit's jetton wallet: no USDT; the claim and the TON recorded.
    const attacker = ton.attacker.address.toRawString().toUpperCase();
    const lookAlikeWallet = (await ton.lookAlike.walletOf(Address.parse(fakeJetton.address))).toRawString().toUpperCase();
    for (const [fake, sender, carried] of [[forged, attacker, forgedTon], [fakeJetton, lookAlikeWallet, lookAlikeTon]] as const) {
      assert.equal((await payment(fake.id)).receivedAmount, '0');
      const r = await rows(fake.address);
      const claim = r.find((x) => x.tokenAddress === `unverified-jetton-wallet:${sender}`);
      assert.deepEqual([claim?.status, claim?.amount], ['NOT_CREDITED', '25000000'], JSON.stringify(r.map(view)));
      assert.match(claim?.note ?? '', /^a transfer_notification from .+, not the deposit's jetton wallet, claims 25000000 jetton units/);
      const native = r.filter((x) => !x.tokenAddress);
      assert.deepEqual(native.map((x) => [x.status, x.amount]), [['NOT_CREDITED', carried.toString()]], JSON.stringify(r.map(view)));
      assert.equal(native[0]!.note, `TON attached to a forged transfer_notification from ${sender} (not the deposit's jetton wallet: a fake, or another jetton's); not a payment`);
      assert.equal(r.length, 2);
    }
    for (const r of await em().find(ObservedTransfer, { tokenAddress: null }, { refresh: true })) assert.doesNotMatch(r.note ?? '', notOurContract, 'TON is never called a token');
    assert.equal(await em().count(ObservedTransfer, { status: 'CREDITED' }), 4);

    // The merchant hears of it: a signed payment.completed over HTTP, verified with the SDK.
    const completedOf = () => receiver.requests.filter((r) => JSON.parse(r.rawBody.toString()).type === 'payment.completed');
    await waitFor('four payment.completed delivered', async () => {
      await sender.runOnce();
      return completedOf().length >= 4;
    });
    const completed = completedOf();
    assert.equal(completed.length, 4);
    for (const r of completed) {
      const check = verifyWebhook({ apiSecret: merchant.apiSecret, rawBody: r.rawBody, signature: String(r.headers['x-webhook-signature']) });
      assert.equal(check.ok, true);
    }
    assert.ok(ton.apiKeys.length > 0 && ton.apiKeys.every((k) => k === 'toncenter-test-key'));
    assert.doesNotMatch(proc.output(), /toncenter-test-key/);

    // A bounce must not decide the payment: anyone can send a tiny bounceable transfer to a deposit.
    // The buyer then pays properly and the payment completes. (This needs the ledger change under
    // which a REVERTED transfer never fails a PENDING payment; until it lands, this part fails.)
    const [bounceRow] = await rows(bounced.address);
    assert.match(bounceRow?.note ?? '', /^bounced: the deposit wallet is not deployed/, 'the reader\'s revertReason is the recorded note');
    await ton.sendTon(Address.parse(bounced.address), nanoOf(bounced), false);
    ton.mine(6);
    const late = await waitStatus(bounced.id, ['COMPLETED', 'FAILED']).then(() => payment(bounced.id));
    assert.equal(late.status, 'COMPLETED', `a payment that received a bounce first and the payment later completes (was ${late.status})`);
    assert.equal(late.receivedAmount, bounced.amount);
    assert.equal(await proc.stop('SIGTERM'), 0);
  });

  test('testnet: `index ton --testnet` reads the testnet network; each network refuses the other\'s API', async (t) => {
    const testnet = await startTonNode({ globalId: -3 });
    t.after(() => testnet.close());
    const mainnet = await startTonNode();
    t.after(() => mainnet.close());
    const indexer = { minPollMs: 200, maxBlocksPerRange: 50, leaseSeconds: 5, rpcTimeoutMs: 2000 };
    const chains = { ton: { testnet: { rpcUrl: testnet.url, pollMs: 1000 } } };
    const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
    const run = (config: Record<string, unknown>, args: string[]) =>
      runCli(['index', 'ton', ...args], { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: MASTER_KEY, CHAINGATE_CONFIG: writeConfigFile({ chains: config, indexer }) });

    const wrongForTestnet = await run({ ton: { testnet: { rpcUrl: mainnet.url } } }, ['--testnet']);
    assert.equal(wrongForTestnet.code, 2, wrongForTestnet.stderr);
    assert.match(wrongForTestnet.stderr, /serves TON global id -239, not ton TESTNET \(-3\): check chains\.ton\.testnet\.rpcUrl/);
    const wrongForMainnet = await run({ ton: { mainnet: { rpcUrl: testnet.url } } }, []);
    assert.equal(wrongForMainnet.code, 2, wrongForMainnet.stderr);
    assert.match(wrongForMainnet.stderr, /serves TON global id -3, not ton MAINNET \(-239\): check chains\.ton\.mainnet\.rpcUrl/);

    // Testnet deposits are stored with the test-only flag (0Q…); the toncenter answers name them raw.
    const deposits = Array.from({ length: 2 }, () => new Address(0, randomBytes(32)).toString({ bounceable: false, testOnly: true }));
    await d.seedPool('ton', deposits, true);
    const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: MASTER_KEY, CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }) };
    const proc = spawnIndexer(['ton', '--testnet'], env);
    t.after(() => proc.stop('SIGKILL'));
    await waitFor('indexer start', async () => proc.output().includes('indexer started'), 30_000);
    assert.match(proc.output(), /"network":"TESTNET"/);

    const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `tn-${Math.random()}`, amount: '2500', currency: 'USD' });
    const co = await d.signed('POST', `/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ton', cryptoCurrency: 'TON', testnet: true });
    assert.equal(co.status, 201, co.text);
    const address = String(co.json.data.payment.paymentAddress ?? co.json.data.paymentAddress);
    assert.match(address, /^0Q/, 'a testnet deposit is shown non-bounceable, test-only');
    const p = await d.common.db.em().findOneOrFail(Payment, { address }, { refresh: true });
    assert.equal(p.isTestnet, true);
    // Paid to the bounceable test-only form of the same address: still that deposit.
    const parsed = Address.parseFriendly(address);
    assert.equal(parsed.isTestOnly, true);
    await testnet.sendTon(Address.parse(parsed.address.toString({ testOnly: true, bounceable: true })), BigInt(Math.round(Number(p.amount) * 1e9)), false);
    testnet.mine(6);
    await waitFor('testnet payment completed', async () => (await d.common.db.em().findOneOrFail(Payment, { id: p.id }, { refresh: true })).status === 'COMPLETED', 30_000);
    assert.equal(mainnet.calls['/api/v3/transactions'] ?? 0, 0, 'the mainnet API is never read by the testnet indexer');
    assert.equal(await proc.stop('SIGTERM'), 0);
  });
});
