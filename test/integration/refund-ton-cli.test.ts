import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Address, toNano } from '@ton/core';
import { Mnemonic } from 'ethers';
import { formatUnits, parseUnits } from '../../src/domain/money.ts';
import { validateAddress } from '../../src/families/families.ts';
import type { SignedSweep, SweepPlan } from '../../src/families/sweep.ts';
import { ORDER_FEE } from '../../src/families/ton/sweep-messages.ts';
import { tonDepositAddresses, tonKeyAt } from '../../src/families/ton/wallet-v4.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { cliIn } from '../helpers/bitcoin-pool.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { startTonNode } from '../helpers/toncenter-node.ts';

// TON refunds end to end (issue 45): buyers pay two TON invoices, the real indexer completes them,
// and `refund plan` / `sweep sign` / `refund broadcast --wait` pay them back.
// - With --fee-payer, the whole amount: the fee payer's top-up to the deposit is the deployment's
//   own money (OWN: not credited, no payment.late_funds), so the payment reaches REFUNDED and stays
//   there. Before the genuine file, tampered ones (a forged txid, another order's raw, garbage) are
//   refused by `refund broadcast` with nothing sent.
// - Over-paid, refunded in two steps (the over-payment, its fee from what stays on the deposit;
//   then the rest): each refund's fee is recorded as the chain charged it (total_fees plus the
//   message's fwd_fee, read here from the deposit's balance on the emulator), so what the store
//   offers after the first is exactly what the deposit holds, and the second reaches REFUNDED.

const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const json = <T>(text: string): T => JSON.parse(text) as T;

test('ton refunds through the CLI with a real indexer: --fee-payer (top-up OWN, no late funds) and two steps, fees as charged, REFUNDED', async (t) => {
  const ton = await startTonNode();
  t.after(() => ton.close());
  const master = ton.usdt.master.toString({ bounceable: true });
  const chains = { ton: { mainnet: { rpcUrl: ton.url, blockTimeMs: 400, pollMs: 1000, tokens: { USDT: { address: master, decimals: 6 } } } } };
  const indexer = { minPollMs: 200, maxBlocksPerRange: 50, leaseSeconds: 5, rpcTimeoutMs: 2000 };
  const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-refund-ton-'));
  const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer, log: { level: 'warn' } }) };
  const { ok, refused } = cliIn(env, dir);

  // The pool from one seed (index 0 is the fee payer), as docs/sweeps/ton.md makes it.
  const seed = Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex');
  const listFile = join(dir, 'ton-deposits.txt');
  writeFileSync(listFile, `${tonDepositAddresses(seed, 1, 2, false).map((l) => l.address).join('\n')}\n`);
  await ok(['wallets', 'seed', '--chain', 'ton', '--file', listFile]);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  const payer = tonKeyAt(seed, 0, false).address;
  await ton.sendTon(Address.parse(payer), toNano('1'), false);

  // Two buyers pay (both payments open at once, so each has its own deposit); the indexer completes them.
  const checkout = async (orderId: string) => {
    const inv = await d.signed('POST', '/api/v1/invoices', { orderId, amount: '2500', currency: 'USD' });
    const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ton', cryptoCurrency: 'TON' });
    assert.equal(co.status, 201, co.text);
    return co.json.data.payment as { id: string; paymentAddress: string; amount: string };
  };
  const { id, paymentAddress: deposit, amount } = await checkout('ton-refund-1');
  const over = await checkout('ton-refund-2-steps');
  const proc = spawnIndexer(['ton'], env);
  t.after(() => proc.stop('SIGKILL'));
  const em = () => d.common.db.em();
  // The buyer pays once the indexer has placed its cursor: on a busy machine its start may take seconds.
  await waitFor('the ton indexer started', async () => (await em().count(IndexerCursor, { chain: 'ton' })) > 0, 60_000);
  await ton.sendTon(Address.parse(deposit), parseUnits(amount, 9), false);
  const extra = parseUnits('0.3', 9);
  const paid = parseUnits(over.amount, 9) + extra;
  await ton.sendTon(Address.parse(over.paymentAddress), paid, false);
  const paymentOf = (pid: string) => em().findOneOrFail(Payment, { id: pid }, { refresh: true });
  const rowsOf = (address: string) => em().find(ObservedTransfer, { toAddress: address }, { refresh: true, orderBy: { blockNumber: 'asc' } });
  const payment = () => paymentOf(id);
  const rows = () => rowsOf(deposit);
  const untilOf = (pid: string, address: string) => (what: string, check: () => Promise<boolean>) =>
    waitFor(what, check, 60_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\npayment ${(await paymentOf(pid)).status}; transfers ${JSON.stringify((await rowsOf(address)).map((r) => [r.status, r.amount, r.fromAddress, r.note]))}\n${proc.output().slice(-2000)}`);
    });
  const until = untilOf(id, deposit);
  const mining = setInterval(() => ton.mine(1), 300); // the indexer waits for 5 masterchain blocks on top
  t.after(() => clearInterval(mining));
  await until('payment COMPLETED', async () => (await payment()).status === 'COMPLETED');
  await untilOf(over.id, over.paymentAddress)('the over-paid payment COMPLETED', async () => (await paymentOf(over.id)).status === 'COMPLETED');
  assert.equal((await paymentOf(over.id)).receivedAmount, formatUnits(paid, 9));

  // The whole payment back to the buyer, the gas topped up by the fee payer.
  const buyer = tonKeyAt(Buffer.alloc(64, 9), 0, false).address;
  const planFile = join(dir, 'refund.json');
  await ok(['refund', 'plan', '--payment', id, '--to', buyer, '--amount', amount, '--fee-payer', payer, '--out', planFile]);
  const signedFile = join(dir, 'refund.signed.json');
  await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--expect-to', buyer, '--yes']);
  // A signed file with a forged txid, or a raw that is not the plan's: refused before anything is sent.
  const genuine = json<SignedSweep>(readFileSync(signedFile, 'utf8'));
  const [topUp, order] = genuine.transactions as [SignedSweep['transactions'][number], SignedSweep['transactions'][number]];
  const tampered = (transactions: SignedSweep['transactions'], name: string) => {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify({ ...genuine, transactions }), { mode: 0o600 });
    return file;
  };
  await refused(['refund', 'broadcast', '--signed', tampered([{ ...topUp, txid: 'ab'.repeat(32) }, order], 'forged-txid.json')], new RegExp(topUp.txid));
  await refused(['refund', 'broadcast', '--signed', tampered([topUp, { ...order, raw: topUp.raw, txid: topUp.txid }], 'other-raw.json')], /tx-1: the signed message goes to .*refused/);
  await refused(['refund', 'broadcast', '--signed', tampered([{ ...topUp, raw: '00' }, order], 'garbage.json')], /tx-0: the signed raw is not a TON message/);
  assert.equal((await ton.blockchain.getContract(Address.parse(payer))).accountState?.type, 'uninit', 'nothing was sent: the fee payer is not deployed');
  assert.equal((await ton.blockchain.getContract(Address.parse(buyer))).balance, 0n);
  const done = json<{ done: boolean }>((await ok(['refund', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout);
  assert.equal(done.done, true);
  assert.equal((await ton.blockchain.getContract(Address.parse(buyer))).balance, parseUnits(amount, 9), 'the buyer has the whole payment back');

  // The indexer reads the top-up as the fee payer's: OWN, not credited, no late funds; the payment stays REFUNDED.
  const feePayer = validateAddress('ton', payer, false);
  await until('the top-up recorded OWN', async () => (await rows()).some((r) => r.status === 'OWN'));
  await until('payment REFUNDED', async () => (await payment()).status === 'REFUNDED');
  const seen = (await rows()).map((r) => [r.status, r.amount, r.fromAddress]);
  assert.deepEqual(
    seen.filter(([status]) => status !== 'CREDITED'),
    [['OWN', (10_000_000n).toString(), feePayer]],
    'only the top-up besides the payment: OWN, from the fee payer in its canonical form',
  );
  const events = (await em().find(WebhookEvent, { paymentId: id }, { refresh: true })).map((e) => e.type);
  assert.ok(!events.includes('payment.late_funds'), `no late funds announced: ${events.join(', ')}`);
  assert.equal(events.filter((e) => e === 'payment.refunded').length, 1, events.join(', '));
  assert.equal((await payment()).status, 'REFUNDED');

  // Two steps. Each refund is planned, signed offline and broadcast; the chain's own answer for its
  // fee is what it took off the deposit beside the TON it sent, read from the emulator.
  const balanceOf = async (a: string) => (await ton.blockchain.getContract(Address.parse(a))).balance;
  const buyer2 = tonKeyAt(Buffer.alloc(64, 7), 0, false).address;
  const refundInSteps = async (name: string, args: string[]) => {
    const file = join(dir, `${name}.json`);
    const plan = json<{ plan: SweepPlan }>((await ok(['refund', 'plan', '--payment', over.id, '--to', buyer2, ...args, '--out', file, '--json'])).stdout).plan;
    const signed = join(dir, `${name}.signed.json`);
    await ok(['sweep', 'sign', '--plan', file, '--out', signed, '--seed-file', seedFile, '--expect-to', buyer2, '--yes']);
    const before = await balanceOf(over.paymentAddress);
    assert.equal(json<{ done: boolean }>((await ok(['refund', 'broadcast', '--signed', signed, '--wait', '--json'])).stdout).done, true);
    // The order's transaction on the deposit: what it sent (the buyer's balance would show that less
    // the storage fee its own account pays on receipt), and so what it cost the deposit.
    const account = BigInt(`0x${Address.parse(over.paymentAddress).hash.toString('hex')}`);
    const order = ton.history().filter((x) => x.address === account).at(-1)!;
    const sent = order.outMessages.values().reduce((sum, m) => sum + (m.info.type === 'internal' ? m.info.value.coins : 0n), 0n);
    const charged = before - (await balanceOf(over.paymentAddress)) - sent;
    const recorded = json<{ planId: string; feeAtomic: string }[]>((await ok(['refund', 'list', '--payment', over.id, '--json'])).stdout).find((r) => r.planId === plan.id)!;
    assert.equal(BigInt(recorded.feeAtomic), charged, `${name}: the fee recorded is what the chain charged the deposit (total_fees + fwd_fee)`);
    assert.ok(charged > 0n && charged < ORDER_FEE, `${name}: within the planned bound: ${charged}`);
    return { plan, sent, charged };
  };
  const untilOver = untilOf(over.id, over.paymentAddress);
  // 1. The over-payment: the buyer receives it whole, the fee comes out of what stays.
  const first = await refundInSteps('ton-over', []);
  assert.equal(first.plan.refund!.amount, extra.toString());
  assert.equal(first.sent, extra);
  assert.equal((await paymentOf(over.id)).status, 'COMPLETED', 'a partial refund leaves the payment as it was');
  // 2. What is left to refund is exactly what the deposit holds: the first fee counted as charged.
  const left = await balanceOf(over.paymentAddress);
  assert.equal(left, paid - extra - first.charged);
  await refused(['refund', 'plan', '--payment', over.id, '--to', buyer2, '--amount', over.amount, '--out', join(dir, 'ton-x.json')], new RegExp(`at most ${formatUnits(left, 9).replace('.', '\\.')} TON can be refunded$`, 'm'));
  // Then the rest: a full refund from the deposit, its planned fee out of the refund.
  const second = await refundInSteps('ton-rest', ['--amount', formatUnits(left, 9)]);
  assert.equal(second.sent, left - ORDER_FEE, 'the buyer received the rest less the planned fee');
  assert.equal(await balanceOf(over.paymentAddress), ORDER_FEE - second.charged, 'what the order did not use stays');
  await untilOver('the over-paid payment REFUNDED', async () => (await paymentOf(over.id)).status === 'REFUNDED');
  // The indexer has read the masterchain block that holds the second refund: the deposit's ledger is checked after it.
  const refundBlock = ton.seqno();
  await untilOver('indexed past the second refund', async () => {
    const out = json<{ indexers: { chain: string; block: string }[] }>((await ok(['status', '--json'])).stdout);
    return BigInt(out.indexers.find((i) => i.chain === 'ton')?.block ?? -1) >= BigInt(refundBlock);
  });
  const overEvents = (await em().find(WebhookEvent, { paymentId: over.id }, { refresh: true })).map((e) => e.type);
  assert.ok(!overEvents.includes('payment.late_funds'), overEvents.join(', '));
  assert.equal(overEvents.filter((e) => e === 'payment.refunded').length, 1, overEvents.join(', '));
  assert.deepEqual((await rowsOf(over.paymentAddress)).map((r) => [r.status, r.amount]), [['CREDITED', paid.toString()]], 'the refunds put nothing on the deposit\'s ledger');
  const list = json<{ state: string }[]>((await ok(['refund', 'list', '--payment', over.id, '--json'])).stdout);
  assert.deepEqual(list.map((r) => r.state), ['CONFIRMED', 'CONFIRMED']);
});
