import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatUnits, parseUnits } from '../../src/domain/money.ts';
import { validateAddress } from '../../src/families/families.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import type { TronSweepPayload } from '../../src/families/tron/sweep-payload.ts';
import { hexToTron } from '../../src/families/tron/address.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { cliIn } from '../helpers/bitcoin-pool.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { startTronSweepSim } from '../helpers/java-tron-sweep-sim.ts';
import { FEE_PAYER, PHRASE, USDT, XPUB } from '../helpers/tron-sweep.ts';

// Tron refunds end to end (issue 45): buyers pay a USDT and a TRX invoice, the real
// `chaingate index tron` process completes them on the java-tron-shaped node (the sweep
// simulator's chain, read through its blocks and /jsonrpc), and `refund plan` / `sweep sign` /
// `refund broadcast --wait` pay them back.
// - USDT with --fee-payer, the whole amount. The fee payer holds no stake to lend, so it tops the
//   deposit up with TRX for the transfer's energy (and the account's creation): that
//   TransferContract is the deployment's own money, recorded OWN, never announced as late funds,
//   and the payment reaches REFUNDED.
// - TRX over-paid, refunded in two steps: the over-payment to a buyer with no account yet (the
//   deposit burns the 1 TRX account creation and 0.1 TRX of bandwidth, out of what stays), then the
//   rest (free bandwidth: nothing burned). Each fee is recorded as java-tron charged it (its
//   gettransactioninfobyid `fee`, and the deposit's balance), so what the store offers after the
//   first is exactly what the deposit holds, and the second reaches REFUNDED.

const BUYER = hexToTron(`0x${'51'.repeat(20)}`);
const json = <T>(text: string): T => JSON.parse(text) as T;

test('tron refunds through the CLI with a real indexer: USDT with --fee-payer (top-up OWN, no late funds) and TRX in two steps, fees as burned, REFUNDED', async (t) => {
  const sim = await startTronSweepSim({ tokens: [USDT] });
  t.after(() => sim.close());
  for (let i = 0; i < 10; i++) sim.advance(3_000n); // a chain below the indexer's starting block
  const chains = { tron: { mainnet: { rpcUrl: `${sim.url}/jsonrpc`, blockTimeMs: 250, confirmations: 1, tokens: { USDT: { address: USDT, decimals: 6 } } } } };
  const indexer = { minPollMs: 200, maxBlocksPerRange: 20, leaseSeconds: 5, rpcTimeoutMs: 2000 };
  const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-refund-tron-'));
  const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer, log: { level: 'warn' } }) };
  const { ok, refused } = cliIn(env, dir);
  await ok(['wallets', 'seed', '--chain', 'tron', '--xpub', XPUB, '--count', '2']);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  sim.fund(FEE_PAYER, 100_000_000n); // TRX, and no stake: the top-up path
  const proc = spawnIndexer(['tron'], env);
  t.after(() => proc.stop('SIGKILL'));
  await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

  const em = () => d.common.db.em();
  // Both payments open at once, so each has its own deposit.
  const checkout = async (orderId: string, coin: 'USDT' | 'TRX') => {
    const inv = await d.signed('POST', '/api/v1/invoices', { orderId, amount: '2500', currency: 'USD' });
    const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'tron', cryptoCurrency: coin });
    assert.equal(co.status, 201, co.text);
    return co.json.data.payment as { id: string; paymentAddress: string; amount: string };
  };
  const { id, paymentAddress: deposit, amount } = await checkout('tron-refund-1', 'USDT');
  const trxPayment = await checkout('tron-refund-2-steps', 'TRX');
  const paid = parseUnits(amount, 6);
  const wallet = hexToTron(`0x${'52'.repeat(20)}`); // the buyer's paying wallet
  sim.mintToken(USDT, wallet, paid);
  sim.payToken(USDT, wallet, deposit, paid);
  const extra = 5_000_000n; // 5 TRX over
  const trxPaid = parseUnits(trxPayment.amount, 6) + extra;
  sim.fund(wallet, trxPaid);
  sim.payTrx(wallet, trxPayment.paymentAddress, trxPaid);
  const mining = setInterval(() => sim.advance(3_000n), 300);
  t.after(() => clearInterval(mining));
  const paymentOf = (pid: string) => em().findOneOrFail(Payment, { id: pid }, { refresh: true });
  const rowsOf = (address: string) => em().find(ObservedTransfer, { toAddress: address }, { refresh: true, orderBy: { blockNumber: 'asc' } });
  const untilOf = (pid: string, address: string) => (what: string, check: () => Promise<boolean>) =>
    waitFor(what, check, 20_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\npayment ${(await paymentOf(pid)).status}; transfers ${JSON.stringify((await rowsOf(address)).map((r) => [r.status, r.amount, r.fromAddress, r.note]))}\n${proc.output().slice(-2000)}`);
    });
  const payment = () => paymentOf(id);
  const rows = () => rowsOf(deposit);
  const until = untilOf(id, deposit);
  await until('payment COMPLETED', async () => (await payment()).status === 'COMPLETED');
  await untilOf(trxPayment.id, trxPayment.paymentAddress)('the TRX payment COMPLETED', async () => (await paymentOf(trxPayment.id)).status === 'COMPLETED');
  assert.equal((await paymentOf(trxPayment.id)).receivedAmount, formatUnits(trxPaid, 6));

  const planFile = join(dir, 'refund.json');
  const plan = json<{ plan: SweepPlan }>((await ok(['refund', 'plan', '--payment', id, '--to', BUYER, '--amount', amount, '--fee-payer', FEE_PAYER, '--out', planFile, '--json'])).stdout).plan;
  assert.deepEqual(plan.transactions.map((x) => (x.payload as TronSweepPayload).kind), ['top-up', 'token']);
  const signedFile = join(dir, 'refund.signed.json');
  await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--expect-to', BUYER, '--yes']);
  assert.equal(json<{ done: boolean }>((await ok(['refund', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout).done, true);
  assert.equal(sim.token(USDT, BUYER), paid, 'the buyer has the whole payment back');

  await until('the top-up recorded OWN', async () => (await rows()).some((r) => r.status === 'OWN'));
  await until('payment REFUNDED', async () => (await payment()).status === 'REFUNDED');
  const topUp = sim.accepted[0]!;
  assert.equal(topUp.raw.contract.type, 'TransferContract');
  assert.deepEqual(
    (await rows()).filter((r) => r.status !== 'CREDITED').map((r) => [r.status, r.txHash, r.fromAddress]),
    [['OWN', topUp.txid, validateAddress('tron', FEE_PAYER, false)]],
    'only the top-up besides the payment: OWN, from the fee payer in its canonical form',
  );
  const events = (await em().find(WebhookEvent, { paymentId: id }, { refresh: true })).map((e) => e.type);
  assert.ok(!events.includes('payment.late_funds'), `no late funds announced: ${events.join(', ')}`);
  assert.equal(events.filter((e) => e === 'payment.refunded').length, 1, events.join(', '));

  // TRX in two steps. The chain's own answer for each refund's fee: what java-tron says it burned
  // (gettransactioninfobyid), which is also what left the deposit beside the TRX sent.
  const buyer2 = hexToTron(`0x${'53'.repeat(20)}`); // no account yet
  const trxDeposit = trxPayment.paymentAddress;
  const refundInSteps = async (name: string, args: string[]) => {
    const file = join(dir, `${name}.json`);
    const planned = json<{ plan: SweepPlan }>((await ok(['refund', 'plan', '--payment', trxPayment.id, '--to', buyer2, ...args, '--out', file, '--json'])).stdout).plan;
    const signed = join(dir, `${name}.signed.json`);
    await ok(['sweep', 'sign', '--plan', file, '--out', signed, '--seed-file', seedFile, '--expect-to', buyer2, '--yes']);
    const [before, received] = [sim.trx(trxDeposit)!, sim.trx(buyer2) ?? 0n];
    assert.equal(json<{ done: boolean }>((await ok(['refund', 'broadcast', '--signed', signed, '--wait', '--json'])).stdout).done, true);
    const sent = sim.trx(buyer2)! - received;
    const burned = sim.info(sim.accepted.at(-1)!.txid)!.fee;
    assert.equal(before - sim.trx(trxDeposit)! - sent, burned, `${name}: the deposit paid the TRX sent and what java-tron burned`);
    const recorded = json<{ planId: string; feeAtomic: string }[]>((await ok(['refund', 'list', '--payment', trxPayment.id, '--json'])).stdout).find((r) => r.planId === planned.id)!;
    assert.equal(BigInt(recorded.feeAtomic), burned, `${name}: the fee recorded is what java-tron burned`);
    return { plan: planned, sent, burned };
  };
  // 1. The over-payment: the buyer receives it whole; its account's creation is burned from what stays.
  const first = await refundInSteps('trx-over', []);
  assert.equal(first.plan.refund!.amount, extra.toString());
  assert.equal(first.sent, extra);
  assert.equal(first.burned, 1_100_000n, 'a new account: 1 TRX by the transfer, 0.1 TRX for its bandwidth');
  assert.equal((await paymentOf(trxPayment.id)).status, 'COMPLETED', 'a partial refund leaves the payment as it was');
  // 2. What is left to refund is exactly what the deposit holds: the first fee counted as burned.
  const left = sim.trx(trxDeposit)!;
  assert.equal(left, trxPaid - extra - first.burned);
  await refused(['refund', 'plan', '--payment', trxPayment.id, '--to', buyer2, '--amount', trxPayment.amount, '--out', join(dir, 'trx-x.json')], new RegExp(`at most ${formatUnits(left, 6).replace('.', '\\.')} TRX can be refunded$`, 'm'));
  // Then the rest: the buyer's account exists, the deposit's free bandwidth pays, nothing is burned.
  const second = await refundInSteps('trx-rest', ['--amount', formatUnits(left, 6)]);
  assert.equal(second.burned, 0n);
  assert.equal(second.sent, left, 'the buyer received the whole rest');
  assert.equal(sim.trx(trxDeposit), 0n, 'nothing stays on the deposit');
  const untilTrx = untilOf(trxPayment.id, trxDeposit);
  await untilTrx('the TRX payment REFUNDED', async () => (await paymentOf(trxPayment.id)).status === 'REFUNDED');
  const trxEvents = (await em().find(WebhookEvent, { paymentId: trxPayment.id }, { refresh: true })).map((e) => e.type);
  assert.ok(!trxEvents.includes('payment.late_funds'), trxEvents.join(', '));
  assert.equal(trxEvents.filter((e) => e === 'payment.refunded').length, 1, trxEvents.join(', '));
  await untilTrx('indexed past the second refund', async () => {
    const out = json<{ indexers: { chain: string; block: string }[] }>((await ok(['status', '--json'])).stdout);
    return BigInt(out.indexers.find((i) => i.chain === 'tron')?.block ?? -1) >= sim.info(sim.accepted.at(-1)!.txid)!.blockNumber;
  });
  assert.deepEqual((await rowsOf(trxDeposit)).map((r) => [r.status, r.amount]), [['CREDITED', trxPaid.toString()]], 'the refunds put nothing on the deposit\'s ledger');
  const list = json<{ state: string }[]>((await ok(['refund', 'list', '--payment', trxPayment.id, '--json'])).stdout);
  assert.deepEqual(list.map((r) => r.state), ['CONFIRMED', 'CONFIRMED']);
});
