import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { address, lamports } from '@solana/kit';
import { findAssociatedTokenPda } from '@solana-program/token';
import { Mnemonic } from 'ethers';
import { parseUnits } from '../../src/domain/money.ts';
import { solanaDepositAddresses, solanaKeyAt } from '../../src/families/solana/ed25519-keys.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { cliIn } from '../helpers/bitcoin-pool.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { startLitesvmCluster } from '../helpers/litesvm-cluster.ts';

// A Solana USDC refund paid by a fee payer, end to end (issue 45): a buyer pays through the
// checkout, the real `chaingate index solana` process completes the payment on Solana's real SVM
// (litesvm, test/helpers/litesvm-cluster.ts, which also answers a sweep's RPC methods over the same
// chain), and `refund plan --fee-payer` / `sweep sign` / `refund broadcast --wait` send the whole
// amount back. On Solana the fee payer signs the refund as its fee payer and sends nothing to the
// deposit; the indexer reads the refund's slot and records no late funds, and the payment reaches
// REFUNDED with one payment.refunded.

const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const json = <T>(text: string): T => JSON.parse(text) as T;

test('solana USDC refund with --fee-payer through the CLI: REFUNDED, no late funds', async (t) => {
  const cluster = await startLitesvmCluster();
  t.after(() => cluster.close());
  cluster.mine(3);
  const chains = { solana: { mainnet: { rpcUrl: cluster.url, blockTimeMs: 400, confirmations: 2, tokens: { USDC: { address: cluster.usdc.address, decimals: 6 } } } } };
  const indexer = { minPollMs: 200, maxBlocksPerRange: 20, leaseSeconds: 5, rpcTimeoutMs: 2000 };
  const d = await startTestDaemon(t, 'sqlite', { chains, indexer });
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-refund-solana-'));
  const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer, log: { level: 'warn' } }) };
  const { ok } = cliIn(env, dir);

  // The pool from one seed (account 0 is the fee payer), as docs/sweeps/solana.md makes it.
  const seed = Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex');
  const listFile = join(dir, 'solana-deposits.txt');
  writeFileSync(listFile, `${solanaDepositAddresses(seed, 1, 1).map((l) => l.address).join('\n')}\n`);
  await ok(['wallets', 'seed', '--chain', 'solana', '--file', listFile]);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  const payer = solanaKeyAt(seed, 0).address;
  cluster.svm.airdrop(address(payer), lamports(1_000_000_000n));
  const proc = spawnIndexer(['solana'], env);
  t.after(() => proc.stop('SIGKILL'));
  await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

  const em = () => d.common.db.em();
  const inv = await d.signed('POST', '/api/v1/invoices', { orderId: 'solana-refund-1', amount: '2500', currency: 'USD' });
  const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'solana', cryptoCurrency: 'USDC' });
  assert.equal(co.status, 201, co.text);
  const { id, paymentAddress: deposit, amount } = co.json.data.payment as { id: string; paymentAddress: string; amount: string };
  const paid = parseUnits(amount, 6);
  await cluster.sendToken(cluster.usdc, deposit, paid); // the buyer creates the deposit's token account and pays
  cluster.seal();
  const payment = () => em().findOneOrFail(Payment, { id }, { refresh: true });
  const rows = () => em().find(ObservedTransfer, { paymentId: id }, { refresh: true, orderBy: { blockNumber: 'asc' } });
  const until = (what: string, check: () => Promise<boolean>) =>
    waitFor(what, check, 20_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}\npayment ${(await payment()).status}; transfers ${JSON.stringify((await rows()).map((r) => [r.status, r.amount, r.note]))}\n${proc.output().slice(-2000)}`);
    });
  const mining = setInterval(() => cluster.mine(1), 250);
  await until('payment COMPLETED', async () => (await payment()).status === 'COMPLETED');
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
});
