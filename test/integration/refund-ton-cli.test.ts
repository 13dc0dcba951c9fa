import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Address, toNano } from '@ton/core';
import { Mnemonic } from 'ethers';
import { parseUnits } from '../../src/domain/money.ts';
import { validateAddress } from '../../src/families/families.ts';
import type { SignedSweep } from '../../src/families/sweep.ts';
import { tonDepositAddresses, tonKeyAt } from '../../src/families/ton/wallet-v4.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { cliIn } from '../helpers/bitcoin-pool.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { startTonNode } from '../helpers/toncenter-node.ts';

// A TON refund paid by a fee payer, end to end (issue 45): a buyer pays a TON invoice, the real
// indexer completes it, `refund plan --fee-payer` / `sweep sign` / `refund broadcast --wait` send
// the whole amount back, and the fee payer's top-up to the deposit is the deployment's own money
// (OWN: not credited, no payment.late_funds), so the payment reaches REFUNDED and stays there.
// Before the genuine file, tampered ones (a forged txid, another order's raw, garbage) are refused
// by `refund broadcast` with nothing sent.

const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const json = <T>(text: string): T => JSON.parse(text) as T;

test('ton refund with --fee-payer through the CLI: the top-up is OWN, no late funds, the payment is REFUNDED', async (t) => {
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
  writeFileSync(listFile, `${tonDepositAddresses(seed, 1, 1, false).map((l) => l.address).join('\n')}\n`);
  await ok(['wallets', 'seed', '--chain', 'ton', '--file', listFile]);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  const payer = tonKeyAt(seed, 0, false).address;
  await ton.sendTon(Address.parse(payer), toNano('1'), false);

  // The buyer pays the invoice; the indexer completes the payment.
  const inv = await d.signed('POST', '/api/v1/invoices', { orderId: 'ton-refund-1', amount: '2500', currency: 'USD' });
  const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ton', cryptoCurrency: 'TON' });
  assert.equal(co.status, 201, co.text);
  const { id, paymentAddress: deposit, amount } = co.json.data.payment as { id: string; paymentAddress: string; amount: string };
  const proc = spawnIndexer(['ton'], env);
  t.after(() => proc.stop('SIGKILL'));
  const em = () => d.common.db.em();
  // The buyer pays once the indexer has placed its cursor: on a busy machine its start may take seconds.
  await waitFor('the ton indexer started', async () => (await em().count(IndexerCursor, { chain: 'ton' })) > 0, 60_000);
  await ton.sendTon(Address.parse(deposit), parseUnits(amount, 9), false);
  const payment = () => em().findOneOrFail(Payment, { id }, { refresh: true });
  const rows = () => em().find(ObservedTransfer, { toAddress: deposit }, { refresh: true, orderBy: { blockNumber: 'asc' } });
  const until = (what: string, check: () => Promise<boolean>) =>
    waitFor(what, check, 60_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\npayment ${(await payment()).status}; transfers ${JSON.stringify((await rows()).map((r) => [r.status, r.amount, r.fromAddress, r.note]))}\n${proc.output().slice(-2000)}`);
    });
  const mining = setInterval(() => ton.mine(1), 300); // the indexer waits for 5 masterchain blocks on top
  t.after(() => clearInterval(mining));
  await until('payment COMPLETED', async () => (await payment()).status === 'COMPLETED');

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
});
