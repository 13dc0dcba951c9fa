import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Address, toNano } from '@ton/core';
import { Mnemonic } from 'ethers';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { openDatabase } from '../../src/store/orm.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { tonDepositAddresses, tonKeyAt } from '../../src/families/ton/wallet-v4.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { startTonNode } from '../helpers/toncenter-node.ts';
import { paidInvoice } from '../helpers/ledger-rows.ts';

// The TON sweep through the real binary (docs/sweeps/ton.md): a pool listed from one BIP39 seed
// (tonDepositAddresses), `sweep plan` over a toncenter v3 server backed by @ton/sandbox's TVM with
// the TEP-74 jetton, `sweep sign` from a 0600 seed file, `sweep broadcast --wait` sending the fee
// payer's top-up first and each deposit's order once it is final.

const PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const json = <T>(text: string): T => JSON.parse(text) as T;

test('ton sweep through the CLI: plan, sign offline, broadcast with a top-up first; USDT and TON reach the cold wallet', async (t) => {
  const ton = await startTonNode();
  t.after(() => ton.close());
  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-sweep-ton-'));
  const master = ton.usdt.master.toString({ bounceable: true });
  const config = writeConfigFile({ chains: { ton: { mainnet: { rpcUrl: ton.url, blockTimeMs: 400, tokens: { USDT: { address: master, decimals: 6 } } } } }, log: { level: 'warn' } });
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: config };
  const ok = async (args: string[]) => {
    const r = await runCli(args, env, { cwd: dir });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    return r;
  };

  // The pool file, made from the seed as docs/sweeps/ton.md shows; index 0 is the fee payer.
  const seed = Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex');
  const listed = tonDepositAddresses(seed, 1, 3, false).map((l) => l.address);
  const listFile = join(dir, 'ton-deposits.txt');
  writeFileSync(listFile, `${listed.join('\n')}\n`);
  const merchant = json<{ id: string }>((await ok(['merchant', 'create', '--name', 'Acme', '--json'])).stdout);
  await ok(['wallets', 'seed', '--chain', 'ton', '--file', listFile]);

  // Deposits 0 and 1 were leased to payments that ended; deposit 2 to one still pending.
  const db = await openDatabase(tdb.url);
  t.after(() => db.close());
  const em = db.em();
  const pool = await em.find(WalletAddress, { chain: 'ton', isTestnet: false }, { orderBy: { id: 'asc' } });
  assert.deepEqual(pool.map((w) => w.address).sort(), [...listed].sort());
  const byAddress = (a: string) => pool.find((w) => w.address === a)!;
  const invoice = paidInvoice(em, merchant.id, 'INV-SWEEP-TON-0001');
  for (const [i, status] of (['COMPLETED', 'EXPIRED', 'PENDING'] as const).entries()) {
    const p = em.create(Payment, {
      referenceId: `PAY-SWEEP-TON-000${i}`,
      invoice,
      merchant: em.getReference(MerchantPoint, merchant.id),
      status,
      blockchain: 'ton',
      network: 'MAINNET',
      isTestnet: false,
      cryptoCurrency: 'USDT',
      decimals: 6,
      tokenAddress: master,
      amount: '10',
      expectedAmount: '10',
      receivedAmount: '0',
      address: listed[i]!,
      requiredConfirmations: 5,
      transactionHash: null,
      blockNumber: null,
      contractAddress: null,
      externalId: null,
      externalIdUuid: null,
      metadata: {},
      expiresAt: new Date(Date.now() - 60_000),
      completedAt: null,
    });
    await em.flush();
    await em.nativeUpdate(WalletAddress, { id: byAddress(listed[i]!).id }, { status: 'LEASED', paymentId: p.id, leasedAt: new Date() });
  }
  // Buyers paid USDT and no TON; the fee payer (index 0) is funded by the merchant.
  const payer = tonKeyAt(seed, 0, false).address;
  await ton.sendTon(Address.parse(payer), toNano('1'), false);
  for (const [i, amount] of [10_000_000n, 12_500_000n, 9_000_000n].entries()) await ton.sendJetton(ton.usdt, Address.parse(listed[i]!), amount, 0n);
  const cold = tonKeyAt(Buffer.alloc(64, 7), 0, false).address;

  const planFile = join(dir, 'plan.json');
  const plan = json<{ plan: SweepPlan }>((await ok(['sweep', 'plan', '--chain', 'ton', '--to', cold, '--fee-payer', payer, '--out', planFile, '--json'])).stdout).plan;
  assert.deepEqual(plan.deposits.map((d) => d.address).sort(), [listed[0], listed[1]].sort());
  assert.match(plan.skipped.map((s) => s.reason).join(), /leased to an open payment \(PENDING\)/);
  assert.deepEqual(plan.transactions.map((x) => x.after), [[], ['tx-0'], ['tx-0']]);

  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  const signedFile = join(dir, 'signed.json');
  const signed = await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--expect-to', cold, '--yes']);
  assert.match(signed.stderr, /USDT/);
  const done = json<{ done: boolean; transactions: { status: string }[] }>((await ok(['sweep', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout);
  assert.equal(done.done, true);
  assert.deepEqual(done.transactions.map((x) => x.status), ['FINAL', 'FINAL', 'FINAL']);
  const coldJettons = await ton.usdt.walletOf(Address.parse(cold));
  assert.equal((await ton.blockchain.runGetMethod(coldJettons, 'get_wallet_data', [])).stackReader.readBigNumber(), 22_500_000n);
  const signedTxs = json<{ transactions: { txid: string }[] }>(readFileSync(signedFile, 'utf8')).transactions;
  assert.match((await ok(['sweep', 'show', signedTxs[1]!.txid])).stdout, /FINAL/);
});
