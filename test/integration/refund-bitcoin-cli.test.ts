import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as bitcoin from 'bitcoinjs-lib';
import { formatUnits, parseUnits } from '../../src/domain/money.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { cliIn, PHRASE, regtest, regtestAddress, TPUB84 } from '../helpers/bitcoin-pool.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { startEsploraSim } from '../helpers/esplora-sim.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';

// A bitcoin payment refunded in two steps, end to end (issue 45): the buyer over-pays through the
// checkout, the real `chaingate index bitcoin` process completes the payment on a regtest chain
// served over Esplora, then `refund plan` (the over-payment, its fee paid from what stays on the
// deposit) and `refund plan --amount <the rest>` are signed and broadcast. The first refund's change
// back to the deposit is the deployment's own output (OWN, no late funds); what the store offers
// after it is exactly what the deposit holds (the fee counted), and the second refund reaches
// REFUNDED with one payment.refunded.

const BUYER = regtestAddress(0x61);
const json = <T>(text: string): T => JSON.parse(text) as T;

/** What the transactions the node received paid an address, per transaction. */
const paidTo = (raw: string, address: string) =>
  bitcoin.Transaction.fromHex(raw).outs.reduce((sum, out) => sum + (bitcoin.address.fromOutputScript(out.script, regtest) === address ? out.value : 0n), 0n);

test('bitcoin payment refunded in two steps through the CLI with a real indexer: the change is OWN, the rest is what the deposit holds, REFUNDED', async (t) => {
  const sim = await startEsploraSim();
  t.after(() => sim.close());
  sim.mineEmpty(5); // the indexer starts a few blocks below the head: not at the sim's genesis
  const chains = { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', confirmations: 1, blockTimeMs: 1000, pollMs: 1000 } } };
  const indexer = { minPollMs: 200, maxBlocksPerRange: 10, leaseSeconds: 5, rpcTimeoutMs: 2000 };
  const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-refund-btc-'));
  const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer, log: { level: 'warn' } }) };
  const { ok, refused } = cliIn(env, dir);
  await ok(['wallets', 'seed', '--chain', 'bitcoin', '--testnet', '--xpub', TPUB84, '--count', '2']);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  const proc = spawnIndexer(['bitcoin', '--testnet'], env);
  t.after(() => proc.stop('SIGKILL'));
  await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

  const em = () => d.common.db.em();
  const inv = await d.signed('POST', '/api/v1/invoices', { orderId: 'btc-refund-2-steps', amount: '2500', currency: 'USD' });
  const co = await d.signed('POST', `/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'bitcoin', cryptoCurrency: 'BTC', testnet: true });
  assert.equal(co.status, 201, co.text);
  const { id, address: deposit } = await em().findOneOrFail(Payment, { id: co.json.data.payment.id });
  const expected = parseUnits((await em().findOneOrFail(Payment, { id })).amount, 8);
  const over = 20_000n;
  sim.mine([[{ address: deposit, sats: expected + over }]]);
  const payment = () => em().findOneOrFail(Payment, { id }, { refresh: true });
  const rows = () => em().find(ObservedTransfer, { toAddress: deposit }, { refresh: true, orderBy: { blockNumber: 'asc' } });
  const until = (what: string, check: () => Promise<boolean>) =>
    waitFor(what, check, 20_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\npayment ${(await payment()).status}; transfers ${JSON.stringify((await rows()).map((r) => [r.status, r.amount, r.note]))}\n${proc.output().slice(-2000)}`);
    });
  await until('payment COMPLETED', async () => (await payment()).status === 'COMPLETED');

  const refund = async (name: string, args: string[]) => {
    const planFile = join(dir, `${name}.json`);
    const plan = json<{ plan: SweepPlan }>((await ok(['refund', 'plan', '--payment', id, '--to', BUYER, ...args, '--out', planFile, '--json'])).stdout).plan;
    const signedFile = join(dir, `${name}.signed.json`);
    await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--expect-to', BUYER, '--yes']);
    const sent = sim.posted.length;
    await ok(['refund', 'broadcast', '--signed', signedFile]);
    assert.equal(sim.posted.length, sent + 1);
    sim.mine();
    assert.equal(json<{ done: boolean }>((await ok(['refund', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout).done, true);
    return { plan, raw: sim.posted.at(-1)! };
  };

  // 1. The over-payment: the buyer receives it whole, the fee comes out of the change back to the deposit.
  const first = await refund('over', []);
  assert.equal(first.plan.refund!.amount, over.toString());
  assert.equal(paidTo(first.raw, BUYER), over);
  const change = paidTo(first.raw, deposit);
  const fee1 = BigInt(first.plan.deposits[0]!.fee);
  assert.equal(change, expected - fee1, 'the deposit keeps the expected amount less the first fee');
  // The change is read by the indexer as the deployment's own output, never as the buyer's money.
  await until('the change recorded OWN', async () => (await rows()).some((r) => r.status === 'OWN'));
  assert.deepEqual((await rows()).map((r) => [r.status, r.amount]), [['CREDITED', (expected + over).toString()], ['OWN', change.toString()]]);
  assert.equal((await payment()).status, 'COMPLETED');

  // 2. What is left to refund is exactly what the deposit holds: the first fee counts.
  await refused(['refund', 'plan', '--payment', id, '--to', BUYER, '--amount', formatUnits(expected, 8), '--out', join(dir, 'x.json')], new RegExp(`at most ${formatUnits(change, 8).replace('.', '\\.')} BTC can be refunded`));
  const second = await refund('rest', ['--amount', formatUnits(change, 8)]);
  const fee2 = BigInt(second.plan.deposits[0]!.fee);
  assert.equal(paidTo(second.raw, BUYER), change - fee2, 'a full refund of the rest: its fee comes out of it');
  assert.equal(paidTo(second.raw, deposit), 0n, 'nothing stays on the deposit');
  await until('payment REFUNDED', async () => (await payment()).status === 'REFUNDED');
  // The indexer has read the block with the second refund: still nothing but the payment and the change.
  await until('indexed past the second refund', async () => {
    const out = json<{ indexers: { chain: string; block: string }[] }>((await ok(['status', '--json'])).stdout);
    return BigInt(out.indexers.find((i) => i.chain === 'bitcoin')?.block ?? -1) >= BigInt(sim.height());
  });
  assert.deepEqual((await rows()).map((r) => r.status), ['CREDITED', 'OWN']);
  const events = (await em().find(WebhookEvent, { paymentId: id }, { refresh: true })).map((e) => e.type);
  assert.ok(!events.includes('payment.late_funds'), events.join(', '));
  assert.equal(events.filter((e) => e === 'payment.refunded').length, 1, events.join(', '));
  const list = json<{ state: string; amount: string }[]>((await ok(['refund', 'list', '--payment', id, '--json'])).stdout);
  assert.deepEqual(list.map((r) => r.state), ['CONFIRMED', 'CONFIRMED']);
});
