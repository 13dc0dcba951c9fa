import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { address, lamports } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { Mnemonic } from 'ethers';
import { formatUnits, parseUnits } from '../../src/domain/money.ts';
import { solanaDepositAddresses, solanaKeyAt } from '../../src/families/solana/ed25519-keys.ts';
import { LAMPORTS_PER_SIGNATURE } from '../../src/families/solana/sweep-fee.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { cliIn } from '../helpers/bitcoin-pool.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { startLitesvmCluster } from '../helpers/litesvm-cluster.ts';

// Solana refunds end to end (issue 45): buyers pay a USDC and a SOL invoice through the checkout,
// the real `chaingate index solana` process completes the payments on Solana's real SVM (litesvm,
// test/helpers/litesvm-cluster.ts, which also answers a sweep's RPC methods over the same chain),
// and `refund plan` / `sweep sign` / `refund broadcast --wait` pay them back.
// - USDC with --fee-payer, the whole amount. On Solana the fee payer signs the refund as its fee
//   payer and sends nothing to the deposit; the indexer reads the refund's slot and records no late
//   funds, and the payment reaches REFUNDED with one payment.refunded.
// - SOL over-paid, refunded in two steps (the over-payment, its fee from what stays on the deposit;
//   then the rest, its fee out of it as Solana's rent rule leaves no other way): each fee is recorded
//   as the runtime charged it (getTransaction's meta.fee, and the deposit's lamports on the SVM), so
//   what the store offers after the first is exactly what the deposit holds, and the second reaches
//   REFUNDED.

const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const json = <T>(text: string): T => JSON.parse(text) as T;

test('solana refunds through the CLI with a real indexer: USDC with --fee-payer (no late funds) and SOL in two steps, fees as charged, REFUNDED', async (t) => {
  const cluster = await startLitesvmCluster();
  t.after(() => cluster.close());
  cluster.mine(3);
  const chains = { solana: { mainnet: { rpcUrl: cluster.url, blockTimeMs: 400, confirmations: 2, tokens: { USDC: { address: cluster.usdc.address, decimals: 6 } } } } };
  const indexer = { minPollMs: 200, maxBlocksPerRange: 20, leaseSeconds: 5, rpcTimeoutMs: 2000 };
  const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-refund-solana-'));
  const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer, log: { level: 'warn' } }) };
  const { ok, refused } = cliIn(env, dir);

  // The pool from one seed (account 0 is the fee payer), as docs/sweeps/solana.md makes it.
  const seed = Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex');
  const listFile = join(dir, 'solana-deposits.txt');
  writeFileSync(listFile, `${solanaDepositAddresses(seed, 1, 2).map((l) => l.address).join('\n')}\n`);
  await ok(['wallets', 'seed', '--chain', 'solana', '--file', listFile]);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  const payer = solanaKeyAt(seed, 0).address;
  cluster.svm.airdrop(address(payer), lamports(1_000_000_000n));
  const proc = spawnIndexer(['solana'], env);
  t.after(() => proc.stop('SIGKILL'));
  await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

  const em = () => d.common.db.em();
  // Both payments open at once, so each has its own deposit.
  const checkout = async (orderId: string, coin: 'USDC' | 'SOL') => {
    const inv = await d.signed('POST', '/api/v1/invoices', { orderId, amount: '2500', currency: 'USD' });
    const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'solana', cryptoCurrency: coin });
    assert.equal(co.status, 201, co.text);
    return co.json.data.payment as { id: string; paymentAddress: string; amount: string };
  };
  const { id, paymentAddress: deposit, amount } = await checkout('solana-refund-1', 'USDC');
  const solPayment = await checkout('solana-refund-2-steps', 'SOL');
  const paid = parseUnits(amount, 6);
  await cluster.sendToken(cluster.usdc, deposit, paid); // the buyer creates the deposit's token account and pays
  const extra = 10_000_000n; // 0.01 SOL over: above a new wallet's rent-exempt minimum
  const solPaid = parseUnits(solPayment.amount, 9) + extra;
  await cluster.sendSol(solPayment.paymentAddress, solPaid);
  cluster.seal();
  const paymentOf = (pid: string) => em().findOneOrFail(Payment, { id: pid }, { refresh: true });
  const rowsOf = (pid: string) => em().find(ObservedTransfer, { paymentId: pid }, { refresh: true, orderBy: { blockNumber: 'asc' } });
  const untilOf = (pid: string) => (what: string, check: () => Promise<boolean>) =>
    waitFor(what, check, 20_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\npayment ${(await paymentOf(pid)).status}; transfers ${JSON.stringify((await rowsOf(pid)).map((r) => [r.status, r.amount, r.note]))}\n${proc.output().slice(-2000)}`);
    });
  const payment = () => paymentOf(id);
  const rows = () => rowsOf(id);
  const until = untilOf(id);
  const mining = setInterval(() => cluster.mine(1), 250);
  await until('payment COMPLETED', async () => (await payment()).status === 'COMPLETED');
  await untilOf(solPayment.id)('the SOL payment COMPLETED', async () => (await paymentOf(solPayment.id)).status === 'COMPLETED');
  assert.equal((await paymentOf(solPayment.id)).receivedAmount, formatUnits(solPaid, 9));
  // No slot between the plan and its broadcast: litesvm takes only its latest blockhash.
  clearInterval(mining);

  const buyer = solanaKeyAt(Buffer.alloc(64, 9), 0).address; // a wallet that does not exist yet
  const planFile = join(dir, 'refund.json');
  const plan = json<{ plan: SweepPlan }>((await ok(['refund', 'plan', '--payment', id, '--to', buyer, '--amount', amount, '--fee-payer', payer, '--out', planFile, '--json'])).stdout).plan;
  assert.equal(plan.feePayer, payer);
  const signedFile = join(dir, 'refund.signed.json');
  await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--expect-to', buyer, '--yes']);
  const depositLamports = cluster.svm.getBalance(address(deposit));
  await ok(['refund', 'broadcast', '--signed', signedFile]);
  const slotOfRefund = cluster.sim.slot() + 1;
  cluster.seal();
  cluster.mine(3);
  assert.equal(json<{ done: boolean }>((await ok(['refund', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout).done, true);
  const [buyerAta] = await findAssociatedTokenPda({ owner: address(buyer), mint: cluster.usdc.address, tokenProgram: cluster.usdc.program });
  const ata = cluster.svm.getAccount(buyerAta);
  assert.ok(ata.exists, 'the fee payer created the buyer\'s token account');
  assert.equal(Buffer.from(ata.data).readBigUInt64LE(64), paid, 'the buyer has the whole payment back');
  assert.equal(cluster.svm.getBalance(address(deposit)), depositLamports, 'the fee payer paid: the deposit spent no SOL and received none');

  await until('payment REFUNDED', async () => (await payment()).status === 'REFUNDED');
  await until('indexed past the refund', async () => {
    const out = json<{ indexers: { chain: string; block: string }[] }>((await ok(['status', '--json'])).stdout);
    return BigInt(out.indexers.find((i) => i.chain === 'solana')?.block ?? -1) >= BigInt(slotOfRefund);
  });
  assert.deepEqual((await rows()).map((r) => [r.status, r.amount]), [['CREDITED', paid.toString()]], 'the refund put nothing on the payment\'s ledger');
  const events = (await em().find(WebhookEvent, { paymentId: id }, { refresh: true })).map((e) => e.type);
  assert.ok(!events.includes('payment.late_funds'), `no late funds announced: ${events.join(', ')}`);
  assert.equal(events.filter((e) => e === 'payment.refunded').length, 1, events.join(', '));

  // SOL in two steps. The chain's own answer for each refund's fee: getTransaction's meta.fee as the
  // cluster serves it, and what left the deposit beside the lamports the buyer received.
  const buyer2 = solanaKeyAt(Buffer.alloc(64, 7), 0).address;
  const solDeposit = solPayment.paymentAddress;
  const lamportsOf = (a: string) => cluster.svm.getBalance(address(a)) ?? 0n;
  const refundInSteps = async (name: string, args: string[]) => {
    const file = join(dir, `${name}.json`);
    const planned = json<{ plan: SweepPlan }>((await ok(['refund', 'plan', '--payment', solPayment.id, '--to', buyer2, ...args, '--out', file, '--json'])).stdout).plan;
    const signed = join(dir, `${name}.signed.json`);
    await ok(['sweep', 'sign', '--plan', file, '--out', signed, '--seed-file', seedFile, '--expect-to', buyer2, '--yes']);
    const [before, received] = [lamportsOf(solDeposit), lamportsOf(buyer2)];
    await ok(['refund', 'broadcast', '--signed', signed]);
    const [signature] = cluster.seal();
    cluster.mine(3);
    assert.equal(json<{ done: boolean }>((await ok(['refund', 'broadcast', '--signed', signed, '--wait', '--json'])).stdout).done, true);
    const sent = lamportsOf(buyer2) - received;
    const answer = (await (await fetch(cluster.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTransaction', params: [signature, { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 }] }) })).json()) as { result: { meta: { fee: number } } };
    const charged = BigInt(answer.result.meta.fee);
    assert.equal(before - lamportsOf(solDeposit) - sent, charged, `${name}: the deposit paid the lamports sent and the fee the runtime charged`);
    const recorded = json<{ planId: string; feeAtomic: string }[]>((await ok(['refund', 'list', '--payment', solPayment.id, '--json'])).stdout).find((r) => r.planId === planned.id)!;
    assert.equal(BigInt(recorded.feeAtomic), charged, `${name}: the fee recorded is what the runtime charged`);
    return { plan: planned, sent, charged };
  };
  // 1. The over-payment: the buyer receives it whole, the fee comes out of what stays.
  const first = await refundInSteps('sol-over', []);
  assert.equal(first.plan.refund!.amount, extra.toString());
  assert.equal(first.sent, extra);
  assert.equal(first.charged, LAMPORTS_PER_SIGNATURE, 'one signature');
  assert.equal((await paymentOf(solPayment.id)).status, 'COMPLETED', 'a partial refund leaves the payment as it was');
  // 2. What is left to refund is exactly what the deposit holds: the first fee counted as charged.
  const left = lamportsOf(solDeposit);
  assert.equal(left, solPaid - extra - first.charged);
  await refused(['refund', 'plan', '--payment', solPayment.id, '--to', buyer2, '--amount', solPayment.amount, '--out', join(dir, 'sol-x.json')], new RegExp(`at most ${formatUnits(left, 9).replace('.', '\\.')} SOL can be refunded$`, 'm'));
  // Then the rest: the deposit can keep nothing between 0 and rent, so the fee comes out of the refund.
  const second = await refundInSteps('sol-rest', ['--amount', formatUnits(left, 9)]);
  assert.equal(second.sent, left - second.charged, 'the buyer received the rest less its fee');
  assert.equal(lamportsOf(solDeposit), 0n, 'nothing stays on the deposit');
  const untilSol = untilOf(solPayment.id);
  await untilSol('the SOL payment REFUNDED', async () => (await paymentOf(solPayment.id)).status === 'REFUNDED');
  const solEvents = (await em().find(WebhookEvent, { paymentId: solPayment.id }, { refresh: true })).map((e) => e.type);
  assert.ok(!solEvents.includes('payment.late_funds'), solEvents.join(', '));
  assert.equal(solEvents.filter((e) => e === 'payment.refunded').length, 1, solEvents.join(', '));
  assert.deepEqual((await rowsOf(solPayment.id)).map((r) => [r.status, r.amount]), [['CREDITED', solPaid.toString()]], 'the refunds put nothing on the payment\'s ledger');
  const list = json<{ state: string }[]>((await ok(['refund', 'list', '--payment', solPayment.id, '--json'])).stdout);
  assert.deepEqual(list.map((r) => r.state), ['CONFIRMED', 'CONFIRMED']);
});
