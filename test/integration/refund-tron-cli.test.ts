import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseUnits } from '../../src/domain/money.ts';
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

// A Tron USDT refund paid by a fee payer, end to end (issue 45): a buyer pays a USDT invoice, the
// real `chaingate index tron` process completes it on the java-tron-shaped node (the sweep
// simulator's chain, read through its blocks and /jsonrpc), and `refund plan --fee-payer` /
// `sweep sign` / `refund broadcast --wait` send the whole amount back. The fee payer holds no
// stake to lend, so it tops the deposit up with TRX for the transfer's energy (and the account's
// creation): that TransferContract is the deployment's own money, recorded OWN, never announced
// as late funds, and the payment reaches REFUNDED.

const BUYER = hexToTron(`0x${'51'.repeat(20)}`);
const json = <T>(text: string): T => JSON.parse(text) as T;

test('tron USDT refund with --fee-payer through the CLI: the TRX top-up is OWN, no late funds, the payment is REFUNDED', async (t) => {
  const sim = await startTronSweepSim({ tokens: [USDT] });
  t.after(() => sim.close());
  for (let i = 0; i < 10; i++) sim.advance(3_000n); // a chain below the indexer's starting block
  const chains = { tron: { mainnet: { rpcUrl: `${sim.url}/jsonrpc`, blockTimeMs: 250, confirmations: 1, tokens: { USDT: { address: USDT, decimals: 6 } } } } };
  const indexer = { minPollMs: 200, maxBlocksPerRange: 20, leaseSeconds: 5, rpcTimeoutMs: 2000 };
  const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-refund-tron-'));
  const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer, log: { level: 'warn' } }) };
  const { ok } = cliIn(env, dir);
  await ok(['wallets', 'seed', '--chain', 'tron', '--xpub', XPUB, '--count', '2']);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  sim.fund(FEE_PAYER, 100_000_000n); // TRX, and no stake: the top-up path
  const proc = spawnIndexer(['tron'], env);
  t.after(() => proc.stop('SIGKILL'));
  await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

  const em = () => d.common.db.em();
  const inv = await d.signed('POST', '/api/v1/invoices', { orderId: 'tron-refund-1', amount: '2500', currency: 'USD' });
  const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'tron', cryptoCurrency: 'USDT' });
  assert.equal(co.status, 201, co.text);
  const { id, paymentAddress: deposit, amount } = co.json.data.payment as { id: string; paymentAddress: string; amount: string };
  const paid = parseUnits(amount, 6);
  const wallet = hexToTron(`0x${'52'.repeat(20)}`); // the buyer's paying wallet
  sim.mintToken(USDT, wallet, paid);
  sim.payToken(USDT, wallet, deposit, paid);
  const mining = setInterval(() => sim.advance(3_000n), 300);
  t.after(() => clearInterval(mining));
  const payment = () => em().findOneOrFail(Payment, { id }, { refresh: true });
  const rows = () => em().find(ObservedTransfer, { toAddress: deposit }, { refresh: true, orderBy: { blockNumber: 'asc' } });
  const until = (what: string, check: () => Promise<boolean>) =>
    waitFor(what, check, 20_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\npayment ${(await payment()).status}; transfers ${JSON.stringify((await rows()).map((r) => [r.status, r.amount, r.fromAddress, r.note]))}\n${proc.output().slice(-2000)}`);
    });
  await until('payment COMPLETED', async () => (await payment()).status === 'COMPLETED');

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
});
