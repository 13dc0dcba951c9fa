import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { address } from '@solana/kit';
import { Mnemonic } from 'ethers';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { openDatabase } from '../../src/store/orm.ts';
import type { PaymentStatus } from '../../src/domain/lifecycle.ts';
import { solanaDepositAddresses, solanaKeyAt } from '../../src/families/solana/ed25519-keys.ts';
import type { SignedSweep, SweepPlan } from '../../src/families/sweep.ts';
import { decodeBase58 } from '../../src/families/base58check.ts';
import { ed25519Sign } from '../../src/families/ed25519-keys.ts';
import { formatUnits } from '../../src/domain/money.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { paidInvoice } from '../helpers/ledger-rows.ts';
import { startSweepCluster } from '../helpers/litesvm-sweep-rpc.ts';
import { type Forgery, refusesForgeries } from '../helpers/forged-signed.ts';

// The Solana sweep through the real binary on SQLite (docs/sweeps/solana.md): a pool listed from
// one BIP39 seed (solanaDepositAddresses) on the testnet, `sweep plan` over Solana's real SVM
// (litesvm behind Agave-shaped JSON-RPC, test/helpers/litesvm-sweep-rpc.ts), `sweep sign` from a
// 0600 seed file (the fee payer is the seed's account 0), `sweep broadcast --wait` sending and
// following to finalized, `sweep list` / `sweep show`. The module-level cases are in
// test/integration/sweep-solana.test.ts.

const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const json = <T>(text: string): T => JSON.parse(text) as T;

test('solana sweep through the CLI: plan, sign offline, broadcast to finalized, list; SOL and USDC reach the cold wallet, token accounts close', async (t) => {
  const cluster = await startSweepCluster();
  t.after(() => cluster.close());
  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-sweep-solana-'));
  const tokens = { USDC: { address: cluster.usdc.address, decimals: 6 } };
  const config = writeConfigFile({ chains: { solana: { testnet: { rpcUrl: cluster.url, blockTimeMs: 400, tokens } } }, indexer: { rpcTimeoutMs: 2000 }, log: { level: 'warn' } });
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: config };
  const ok = async (args: string[]) => {
    const r = await runCli(args, env, { cwd: dir });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    return r;
  };

  // The pool file, made from the seed as docs/sweeps/solana.md shows; account 0 is the fee payer.
  const seed = Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex');
  const listed = solanaDepositAddresses(seed, 1, 3).map((l) => l.address);
  const [d0, d1, d2] = listed as [string, string, string];
  const payer = solanaKeyAt(seed, 0).address;
  const cold = solanaKeyAt(Buffer.alloc(64, 7), 0).address; // a wallet that does not exist yet
  const listFile = join(dir, 'solana-deposits.txt');
  writeFileSync(listFile, `${listed.join('\n')}\n`);
  const merchant = json<{ id: string }>((await ok(['merchant', 'create', '--name', 'Acme', '--json'])).stdout);
  await ok(['wallets', 'seed', '--chain', 'solana', '--testnet', '--file', listFile]);

  // Deposits 0 and 1 were leased to payments that ended; deposit 2 to one still pending.
  const db = await openDatabase(tdb.url);
  t.after(() => db.close());
  const em = db.em();
  const pool = await em.find(WalletAddress, { chain: 'solana', isTestnet: true });
  assert.deepEqual(pool.map((w) => w.address).sort(), [...listed].sort());
  const byAddress = (a: string) => pool.find((w) => w.address === a)!;
  const invoice = paidInvoice(em, merchant.id, 'INV-SWEEP-SOL-0001');
  const statuses: PaymentStatus[] = ['COMPLETED', 'EXPIRED', 'PENDING'];
  for (const [i, status] of statuses.entries()) {
    const p = em.create(Payment, {
      referenceId: `PAY-SWEEP-SOL-000${i}`, invoice, merchant: em.getReference(MerchantPoint, merchant.id), status, blockchain: 'solana', network: 'DEVNET', isTestnet: true,
      cryptoCurrency: 'USDC', decimals: 6, tokenAddress: cluster.usdc.address, amount: '25', expectedAmount: '25', receivedAmount: '0', address: listed[i]!, requiredConfirmations: 1,
      transactionHash: null, blockNumber: null, contractAddress: null, externalId: null, externalIdUuid: null, metadata: {}, expiresAt: new Date(Date.now() - 60_000), completedAt: null,
    });
    await em.flush();
    await em.nativeUpdate(WalletAddress, { id: byAddress(listed[i]!).id }, { status: 'LEASED', paymentId: p.id, leasedAt: new Date() });
  }
  // Buyers paid USDC (and created the token accounts, paying their rent); one also sent SOL late.
  cluster.fund(address(payer), 1_000_000_000n);
  await cluster.sendToken(cluster.usdc, address(d0), 25_000_000n);
  cluster.fund(address(d1), 250_000_000n);
  await cluster.sendToken(cluster.usdc, address(d1), 5_000_000n);
  await cluster.sendToken(cluster.usdc, address(d2), 9_000_000n);
  const ataRent = cluster.svm.minimumBalanceForRentExemption(165n);
  const d2Lamports = cluster.lamports(address(d2));

  const planFile = join(dir, 'plan.json');
  const planned = json<{ plan: SweepPlan; totals: { moves: Record<string, string> } }>(
    (await ok(['sweep', 'plan', '--chain', 'solana', '--testnet', '--to', cold, '--fee-payer', payer, '--out', planFile, '--json'])).stdout,
  );
  const plan = planned.plan;
  assert.deepEqual(plan.deposits.map((d) => d.address).sort(), [d0, d1].sort());
  assert.deepEqual(planned.totals.moves, { USDC: '30000000', SOL: (250_000_000n + 2n * ataRent).toString() });
  assert.ok(plan.skipped.some((s) => s.address === d2 && /open payment \(PENDING\)/.test(s.reason)), JSON.stringify(plan.skipped));

  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  const signedFile = join(dir, 'signed.json');
  const signing = await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--yes', '--expect-to', cold]);
  assert.match(signing.stderr, /30 USDC/);
  // The summary's fee is read from the bytes: the signatures and the cold wallet's new USDC account.
  const fees = BigInt(plan.transactions.reduce((n, tx) => n + 5000 * tx.signers.length, 0));
  assert.match(signing.stderr, new RegExp(`fees at most ${formatUnits(fees + ataRent * BigInt(plan.transactions.length), 9).replace('.', '\\.')} SOL`));
  assert.equal(cluster.calls.sendTransaction ?? 0, 0, 'signing sends nothing');

  // Signed files that are not what was signed: a forged txid, a damaged raw, a broken signature, and
  // tx-0 re-signed by the seed's own keys with the cold wallet swapped for a thief's in its accounts.
  // Each is refused in one line before anything is recorded or sent; the genuine file goes through afterwards.
  const genuine = json<SignedSweep>(readFileSync(signedFile, 'utf8'));
  const thief = solanaKeyAt(Buffer.alloc(64, 9), 0).address;
  const wire = Buffer.from(genuine.transactions[0]!.raw, 'base64');
  const count = wire[0]!;
  const message = Buffer.from(wire.subarray(1 + 64 * count));
  const at = message.indexOf(Buffer.from(decodeBase58(cold)!));
  assert.ok(at > 0, 'the cold wallet is among the message\'s accounts');
  message.set(decodeBase58(thief)!, at);
  const keyOf = (signer: string) => [payer, ...listed].indexOf(signer);
  const signers = Array.from({ length: count }, (_, i) => [payer, ...listed].find((a) => Buffer.from(decodeBase58(a)!).equals(message.subarray(4 + 32 * i, 36 + 32 * i)))!);
  const thiefRaw = Buffer.concat([Buffer.from([count]), ...signers.map((a) => ed25519Sign(solanaKeyAt(seed, keyOf(a)).privateKey, message)), message]).toString('base64');
  const broken = Buffer.from(wire);
  broken[1 + 64 + 5]! ^= 1;
  const forgeries: Forgery[] = [
    ['forged-txid', (t) => { t[0]!.txid = solanaKeyAt(Buffer.alloc(64, 3), 0).address; }, /tx-0's raw transaction hashes to \w+, not the txid \w+ the file names/],
    ['damaged', (t) => { t[0]!.raw = '00'; }, /tx-0: the signed transaction is not base64/],
    ['broken-signature', (t) => { t[0]!.raw = broken.toString('base64'); }, /tx-0: the signature of \w+…\w+ does not verify/],
    ['elsewhere', (t) => { t[0]!.raw = thiefRaw; }, /tx-0: the signed transaction is not the plan's: its instruction 0 is/],
  ];
  await refusesForgeries({ genuine: genuine, forgeries, dir, env, nothingSent: (name) => {
      assert.equal(cluster.calls.sendTransaction ?? 0, 0, `${name}: nothing sent`);
    } });
  assert.equal(cluster.tokenBalance(cluster.usdc, address(cold)), null, 'the chain is unchanged: no cold token account');
  const none = json<{ planId: string; txs: unknown[] }[]>((await ok(['sweep', 'list', '--chain', 'solana', '--json'])).stdout).find((p) => p.planId === plan.id);
  assert.equal(none?.txs.length ?? 0, 0, 'nothing recorded for the refused files');

  // The cluster finalizes what it executed every 200 ms while the broadcast follows it.
  const payerBefore = cluster.lamports(address(payer));
  const finalizing = setInterval(() => cluster.finalize(), 200);
  let sent: { done: boolean; transactions: { id: string; status: string }[] };
  try {
    sent = json((await ok(['sweep', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout);
  } finally {
    clearInterval(finalizing);
  }
  assert.equal(sent.done, true);
  assert.deepEqual(sent.transactions.map((x) => x.status), plan.transactions.map(() => 'FINAL'));
  assert.equal(cluster.tokenBalance(cluster.usdc, address(cold)), 30_000_000n);
  assert.equal(cluster.lamports(address(cold)), 250_000_000n + 2n * ataRent, 'the SOL and both token accounts\' rent');
  for (const d of [d0, d1]) {
    assert.equal(cluster.lamports(address(d)), 0n, 'no deposit keeps a lamport');
    assert.equal(cluster.tokenBalance(cluster.usdc, address(d)), null, 'its token account is closed');
  }
  assert.equal(cluster.tokenBalance(cluster.usdc, address(d2)), 9_000_000n, 'the open payment\'s deposit is untouched');
  assert.equal(cluster.lamports(address(d2)), d2Lamports);
  assert.equal(payerBefore - cluster.lamports(address(payer)), fees + ataRent, 'the fee payer paid the fees and the cold token account');

  // Broadcasting again sends nothing: the transactions are final.
  const sends = cluster.calls.sendTransaction ?? 0;
  assert.equal(sends, plan.transactions.length);
  await ok(['sweep', 'broadcast', '--signed', signedFile]);
  assert.equal(cluster.calls.sendTransaction ?? 0, sends, 'never sent twice');

  const list = json<{ planId: string; txs: { status: string }[] }[]>((await ok(['sweep', 'list', '--chain', 'solana', '--json'])).stdout);
  assert.deepEqual(list.find((p) => p.planId === plan.id)!.txs.map((x) => x.status), plan.transactions.map(() => 'FINAL'));
  const signedTxs = json<{ transactions: { txid: string }[] }>(readFileSync(signedFile, 'utf8')).transactions;
  assert.match((await ok(['sweep', 'show', signedTxs[0]!.txid])).stdout, /FINAL/);
  const after = await db.em().find(Payment, {}, { orderBy: { referenceId: 'asc' } });
  assert.deepEqual(after.map((p) => p.status), statuses);
});
