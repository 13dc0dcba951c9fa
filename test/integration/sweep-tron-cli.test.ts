import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { computeAddress, Mnemonic } from 'ethers';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { openDatabase } from '../../src/store/orm.ts';
import type { PaymentStatus } from '../../src/domain/lifecycle.ts';
import { createHash } from 'node:crypto';
import type { SignedSweep, SweepPlan } from '../../src/families/sweep.ts';
import type { TronSweepPayload } from '../../src/families/tron/sweep-payload.ts';
import { decodeRaw, encodeRaw, encodeSigned, type TronRaw } from '../../src/families/tron/sweep-proto.ts';
import { signDigest } from '../../src/families/tron/sweep-sign.ts';
import { hexToTron } from '../../src/families/tron/address.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { startTronSweepSim } from '../helpers/java-tron-sweep-sim.ts';
import { type Forgery, refusesForgeries } from '../helpers/forged-signed.ts';

// The Tron sweep through the real binary on SQLite (docs/sweeps/tron.md): `sweep plan` reads the
// ledger and a java-tron-shaped node (test/helpers/java-tron-sweep-sim.ts), `sweep sign` signs
// from a 0600 seed file (the fee payer's key found in the same seed), `sweep broadcast --wait`
// sends each transaction once those before it are solidified, and `sweep list` reports it.

const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const account = BIP32Factory(ecc).fromSeed(Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex')).derivePath("m/44'/195'/0'");
const XPUB = account.neutered().toBase58();
const FEE_PAYER = hexToTron(computeAddress(`0x${Buffer.from(account.derive(1).derive(0).publicKey).toString('hex')}`));
const COLD = hexToTron(`0x${'42'.repeat(20)}`);
const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const json = <T>(text: string): T => JSON.parse(text) as T;

test('tron sweep through the CLI: plan, sign offline, broadcast in order to solidified, list; payments keep their statuses', async (t) => {
  const sim = await startTronSweepSim({ tokens: [USDT] });
  t.after(() => sim.close());
  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-sweep-tron-'));
  const config = writeConfigFile({ chains: { tron: { mainnet: { rpcUrl: `${sim.url}/jsonrpc`, blockTimeMs: 400 } } }, log: { level: 'warn' } });
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: config };
  const ok = async (args: string[]) => {
    const r = await runCli(args, env, { cwd: dir });
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    return r;
  };

  const merchant = json<{ id: string }>((await ok(['merchant', 'create', '--name', 'Acme', '--json'])).stdout);
  await ok(['wallets', 'seed', '--chain', 'tron', '--xpub', XPUB, '--count', '3']);
  const db = await openDatabase(tdb.url);
  t.after(() => db.close());
  const em = db.em();
  const pool = await em.find(WalletAddress, { chain: 'tron', isTestnet: false }, { orderBy: { derivationIndex: 'asc' } });
  const invoice = em.create(Invoice, {
    referenceId: 'INV-SWEEP-TRON-0001', merchant: em.getReference(MerchantPoint, merchant.id), orderId: 'o-1', amount: '100', currency: 'USD', status: 'PAID',
    customerEmail: null, customerName: null, customerMetadata: {}, metadata: {}, returnUrl: null, cancelUrl: null, expiresAt: new Date(Date.now() + 3_600_000), viewedAt: null, paidAt: null, cancelledAt: null,
  });
  const statuses: PaymentStatus[] = ['COMPLETED', 'EXPIRED', 'PENDING'];
  for (const [i, status] of statuses.entries()) {
    const p = em.create(Payment, {
      referenceId: `PAY-SWEEP-TRON-000${i}`, invoice, merchant: em.getReference(MerchantPoint, merchant.id), status, blockchain: 'tron', network: 'MAINNET', isTestnet: false,
      cryptoCurrency: 'USDT', decimals: 6, tokenAddress: USDT, amount: '25', expectedAmount: '25', receivedAmount: '0', address: pool[i]!.address, requiredConfirmations: 19,
      transactionHash: null, blockNumber: null, contractAddress: null, externalId: null, externalIdUuid: null, metadata: {}, expiresAt: new Date(Date.now() - 60_000), completedAt: null,
    });
    await em.flush();
    await em.nativeUpdate(WalletAddress, { id: pool[i]!.id }, { status: 'LEASED', paymentId: p.id, leasedAt: new Date() });
  }
  const [d0, d1, d2] = pool.map((w) => w.address);
  sim.fund(COLD, 1_000_000n);
  sim.fund(FEE_PAYER, 20_000_000n);
  sim.stake(FEE_PAYER, 100_000_000_000n);
  sim.mintToken(USDT, d0!, 25_000_000n); // USDT only: no account, no TRX
  sim.fund(d1!, 3_000_000n); // a late TRX payment to an expired invoice
  sim.mintToken(USDT, d2!, 25_000_000n); // leased to an open payment: never swept

  const planFile = join(dir, 'plan.json');
  const planned = json<{ plan: SweepPlan; totals: { moves: Record<string, string> } }>(
    (await ok(['sweep', 'plan', '--chain', 'tron', '--to', COLD, '--fee-payer', FEE_PAYER, '--out', planFile, '--json'])).stdout,
  );
  assert.deepEqual(planned.plan.deposits.map((d) => d.derivationIndex), [0, 1]);
  assert.deepEqual(planned.totals.moves, { USDT: '25000000', TRX: '3000000' });
  assert.ok(planned.plan.skipped.some((s) => s.address === d2 && /open payment \(PENDING\)/.test(s.reason)));

  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, PHRASE, { mode: 0o600 });
  const signedFile = join(dir, 'signed.json');
  const signing = await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--yes', '--expect-to', COLD]);
  // The summary is read from the bytes: the fee payer's 1.1 TRX for the new account (its delegate and undelegate within its free points), the USDT transfer's fee limit.
  assert.match(signing.stderr, /total: 25 USDT \(token T\w+\) \+ 3 TRX to T\w+ in 5 transactions; fees at most 16\.7342 TRX/);
  assert.equal(sim.calls['/wallet/broadcasthex'] ?? 0, 0, 'signing sends nothing');

  // Signed files that are not what was signed: a forged txid, transactions swapped, a damaged raw,
  // and deposit 1's TRX transfer re-signed by its own key to pay someone else. Each is refused
  // before anything is recorded or sent; the genuine file goes through afterwards.
  const genuine = json<SignedSweep>(readFileSync(signedFile, 'utf8'));
  const trxTx = planned.plan.transactions.find((tx) => (tx.payload as TronSweepPayload).kind === 'trx')!;
  const trxRaw = decodeRaw(Buffer.from((trxTx.payload as TronSweepPayload).rawData, 'hex'));
  const thiefBytes = encodeRaw({ ...trxRaw, contract: { ...trxRaw.contract, to: `41${'66'.repeat(20)}` } as TronRaw['contract'] });
  const thiefTxid = createHash('sha256').update(thiefBytes).digest('hex');
  const thiefRaw = Buffer.from(encodeSigned(thiefBytes, [signDigest(thiefTxid, Uint8Array.from(account.derive(0).derive(1).privateKey!))])).toString('hex');
  const at = (t: SignedSweep['transactions'], id: string) => t.find((x) => x.id === id)!;
  const forgeries: Forgery[] = [
    ['forged-txid', (t) => { t[1]!.txid = t[0]!.txid; }, /tx-1's raw transaction hashes to [0-9a-f]{64}, not the txid [0-9a-f]{64} the file names/],
    ['swapped', (t) => { [t[0]!.raw, t[1]!.raw, t[0]!.txid, t[1]!.txid] = [t[1]!.raw, t[0]!.raw, t[1]!.txid, t[0]!.txid]; }, /tx-0: the signed transaction is not the plan's: it is a \w+, the plan's is a \w+/],
    ['damaged', (t) => { t[1]!.raw = '00'; }, /tx-1: not a signed Tron sweep transaction/],
    ['elsewhere', (t) => { at(t, trxTx.id).raw = thiefRaw; at(t, trxTx.id).txid = thiefTxid; }, new RegExp(`${trxTx.id}: the signed transaction is not the plan's: its to is 41(66){20}, the plan's 41(42){20}`)],
  ];
  await refusesForgeries({ genuine: genuine, forgeries, dir, env, nothingSent: (name) => {
      assert.equal(sim.calls['/wallet/broadcasthex'] ?? 0, 0, `${name}: nothing sent`);
      assert.equal(sim.accepted.length, 0, `${name}: the chain is unchanged`);
    } });
  const none = json<{ planId: string; txs: unknown[] }[]>((await ok(['sweep', 'list', '--chain', 'tron', '--json'])).stdout).find((p) => p.planId === planned.plan.id);
  assert.equal(none?.txs.length ?? 0, 0, 'nothing recorded for the refused files');

  const sent = json<{ done: boolean; transactions: { id: string; status: string }[] }>((await ok(['sweep', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout);
  assert.equal(sent.done, true);
  assert.deepEqual(sent.transactions.map((x) => x.status), ['FINAL', 'FINAL', 'FINAL', 'FINAL', 'FINAL']);
  assert.equal(sim.token(USDT, COLD), 25_000_000n);
  assert.equal(sim.trx(COLD), 4_000_000n);
  assert.equal(sim.token(USDT, d2!), 25_000_000n);
  assert.equal(sim.delegatedTo(d0!), 0n);
  const sends = sim.calls['/wallet/broadcasthex'];
  assert.equal(sends, 5);
  await ok(['sweep', 'broadcast', '--signed', signedFile]);
  assert.equal(sim.calls['/wallet/broadcasthex'], sends, 'never sent twice');

  const list = json<{ planId: string; txs: { status: string }[] }[]>((await ok(['sweep', 'list', '--chain', 'tron', '--json'])).stdout);
  assert.deepEqual(list.find((p) => p.planId === planned.plan.id)!.txs.map((x) => x.status), ['FINAL', 'FINAL', 'FINAL', 'FINAL', 'FINAL']);
  const after = await db.em().find(Payment, {}, { orderBy: { referenceId: 'asc' } });
  assert.deepEqual(after.map((p) => p.status), statuses);
  assert.equal(json<SweepPlan>(readFileSync(planFile, 'utf8')).id, planned.plan.id);
});
