import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import * as bitcoin from 'bitcoinjs-lib';
import { Mnemonic } from 'ethers';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { openDatabase } from '../../src/store/orm.ts';
import type { PaymentStatus } from '../../src/domain/lifecycle.ts';
import { FAMILIES } from '../../src/families/families.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { bitcoinSweepVerifier } from '../../src/families/bitcoin/sweep-verify.ts';
import { checkDecoded } from '../../src/sweep/check-decoded.ts';
import { ACCOUNT, cliIn, leasedPayment, PHRASE, regtest, regtestAddress, TPUB84 } from '../helpers/bitcoin-pool.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startEsploraSim } from '../helpers/esplora-sim.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { paidInvoice } from '../helpers/ledger-rows.ts';

// The whole flow through the real binary (docs/sweeps.md): `sweep plan` on the server reads the
// ledger and a regtest chain served over Esplora, `sweep sign` signs offline from a 0600 seed file,
// `sweep broadcast` sends to the same Esplora-shaped node and follows to the confirmations, and
// list/show/status report it. Then every kind of bad input, each refused with nothing sent.

const OTHER_PHRASE = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
const COLD = regtestAddress(0x42);
const OTHER_COLD = regtestAddress(0x43);

const json = <T>(text: string): T => JSON.parse(text) as T;

for (const dialect of DIALECTS) {
  describe(`bitcoin sweep through the CLI on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('plan, sign offline, broadcast, follow to 2 confirmations; re-runs send nothing twice; bad input refused', async (t) => {
      const sim = await startEsploraSim();
      t.after(() => sim.close());
      sim.mineEmpty(1);
      const tdb = await createTestDatabase(dialect, { migrated: dialect === 'postgresql' });
      t.after(() => tdb.drop());
      const dir = mkdtempSync(join(tmpdir(), 'chaingate-sweep-'));
      const config = writeConfigFile({ chains: { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', confirmations: 2, blockTimeMs: 1000 } } }, log: { level: 'warn' } });
      const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: config };
      const { cli, ok, refused } = cliIn(env, dir);

      const merchant = json<{ id: string }>((await ok(['merchant', 'create', '--name', 'Acme', '--json'])).stdout);
      await ok(['wallets', 'seed', '--chain', 'bitcoin', '--testnet', '--xpub', TPUB84, '--count', '6']);

      // The ledger: deposits 0 and 1 ended (COMPLETED, EXPIRED), 2 is still PENDING, 3 FAILED and empty, 4 and 5 never leased.
      const db = await openDatabase(tdb.url);
      t.after(() => db.close());
      const em = db.em();
      const pool = await em.find(WalletAddress, { chain: 'bitcoin', isTestnet: true }, { orderBy: { derivationIndex: 'asc' } });
      const invoice = paidInvoice(em, merchant.id, 'INV-SWEEP-TEST-0001');
      const statuses: PaymentStatus[] = ['COMPLETED', 'EXPIRED', 'PENDING', 'FAILED'];
      for (const [i, status] of statuses.entries()) {
        await leasedPayment(em, invoice, merchant.id, { referenceId: `PAY-SWEEP-TEST-000${i}`, status, address: pool[i]!.address, amount: '0.001', receivedAmount: '0', requiredConfirmations: 2 });
      }
      const [d0, d1, d2, d3, d4] = pool.map((w) => w.address);
      const [, fundedD4] = sim.mine([[{ address: d0!, sats: 60_000n }, { address: d1!, sats: 40_000n }], [{ address: d2!, sats: 30_000n }, { address: d4!, sats: 10_000n }]]);
      sim.mineEmpty(1);

      // What depends on no database (the summary, the signer's refusals) runs once, on SQLite.
      const offlineChecks = dialect === 'sqlite';
      if (offlineChecks) {
        const humanFile = join(dir, 'plan-human.json');
        const human = await ok(['sweep', 'plan', '--chain', 'bitcoin', '--testnet', '--to', COLD, '--out', humanFile]);
        assert.match(human.stdout, /#0 bcrt1q\S+: moves 0\.0005\d+ BTC, fee 0\.00000\d+ BTC/);
        assert.match(human.stdout, /1 × leased to an open payment \(PENDING\)/);
        // That plan reserves its deposits until cancelled: the next one would find none.
        const humanId = json<SweepPlan>(readFileSync(humanFile, 'utf8')).id;
        assert.match((await ok(['sweep', 'cancel', humanId.slice(0, 12)])).stdout, new RegExp(`cancelled sweep plan ${humanId.slice(0, 16)}`));
      }

      // A plan: deposits 0 and 1 only; 2 is leased to an open payment; the never-leased 4 is not looked at.
      const planFile = join(dir, 'plan.json');
      const planned = json<{ written: boolean; plan: SweepPlan; totals: { moves: Record<string, string>; fee: string } }>(
        (await ok(['sweep', 'plan', '--chain', 'bitcoin', '--testnet', '--to', COLD, '--out', planFile, '--json'])).stdout,
      );
      assert.equal(planned.written, true);
      const plan = planned.plan;
      assert.deepEqual(plan.deposits.map((d) => d.derivationIndex), [0, 1]);
      assert.deepEqual(plan.skipped.map((s) => s.reason), ['leased to an open payment (PENDING)', 'nothing to move']);
      assert.equal(BigInt(planned.totals.moves.BTC!) + BigInt(planned.totals.fee), 100_000n);
      assert.deepEqual(json<SweepPlan>(readFileSync(planFile, 'utf8')), plan);
      // A second plan now finds both deposits reserved by this one.
      const again = json<{ written: boolean; plan: SweepPlan }>((await ok(['sweep', 'plan', '--chain', 'bitcoin', '--testnet', '--to', COLD, '--out', join(dir, 'plan-again.json'), '--json'])).stdout);
      assert.equal(again.written, false);
      assert.equal(again.plan.skipped.filter((x) => x.reason.startsWith(`reserved by sweep plan ${plan.id.slice(0, 16)}`)).length, 2);

      // Offline signing: the seed file must be private; the wrong seed, the wrong destination and a tampered plan are refused.
      const seedFile = join(dir, 'seed.txt');
      writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o644 });
      chmodSync(seedFile, 0o644);
      const signedFile = join(dir, 'signed.json');
      const sign = ['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--yes', '--expect-to', COLD];
      await refused(sign, /can be read by others \(mode 0644\): run `chmod 600/);
      chmodSync(seedFile, 0o600);
      if (offlineChecks) {
        const otherSeed = join(dir, 'other-seed.txt');
        writeFileSync(otherSeed, OTHER_PHRASE, { mode: 0o600 });
        await refused(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', otherSeed, '--yes', '--expect-to', COLD], /deposit #0 \(key [0-9a-f]{16}\): no account/);
        await refused([...sign.slice(0, -1), OTHER_COLD], /the plan sends to bcrt1q\S+, which --expect-to bcrt1q\S+ does not name: refused, nothing signed/);
        await refused(sign.slice(0, -2), /--yes signs without asking, so it needs --expect-to/);
        const tampered = join(dir, 'tampered.json');
        writeFileSync(tampered, JSON.stringify({ ...plan, to: OTHER_COLD }));
        await refused(['sweep', 'sign', '--plan', tampered, '--out', signedFile, '--seed-file', seedFile, '--yes', '--expect-to', COLD], /was changed after `sweep plan` wrote it/);
        const noTerminal = await cli(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile]);
        assert.equal(noTerminal.code, 2);
        assert.match(noTerminal.stderr, /no terminal to ask on: check the summary above and pass --yes/);
      }
      assert.equal(existsSync(signedFile), false, 'nothing was signed by any refused attempt');
      const signedOut = await ok([...sign, '--json']);
      // The summary is read from the PSBT: what it pays, and its fee as a share of what moves.
      assert.match(signedOut.stderr, /tx-0: pays 0\.000\d+ BTC to bcrt1q\S+; fee at most 0\.0000\d+ BTC \(\d\.\d\d % of the BTC it moves\) paid by bcrt1q\S+\n {2}total: 0\.000\d+ BTC to bcrt1q\S+ in 1 transaction; fees at most 0\.0000\d+ BTC \(\d\.\d\d % of the BTC moved\)/);
      assert.equal(statSync(signedFile).mode & 0o777, 0o600);
      const signed = json<{ transactions: { id: string; raw: string; txid: string }[] }>(readFileSync(signedFile, 'utf8'));
      assert.equal(sim.posted.length, 0, 'signing sends nothing');

      // Broadcasts that must not happen: a signed file for another network, or for a plan this database never made.
      const wrongNet = join(dir, 'wrong-net.json');
      writeFileSync(wrongNet, JSON.stringify({ ...signed, format: 'chaingate-sweep-signed/1', planId: plan.id, chain: 'bitcoin', network: 'TESTNET4', testnet: true }));
      await refused(['sweep', 'broadcast', '--signed', wrongNet], /says bitcoin TESTNET4, but its plan is for bitcoin REGTEST: refused/);
      const unknown = join(dir, 'unknown.json');
      writeFileSync(unknown, JSON.stringify({ ...json<object>(readFileSync(signedFile, 'utf8')), planId: 'f'.repeat(64) }));
      await refused(['sweep', 'broadcast', '--signed', unknown], /which this database never made/);
      await refused(['sweep', 'broadcast', '--signed', planFile], /is an unsigned plan: sign it first/);
      assert.equal(sim.posted.length, 0);

      // Signed files that are not what was signed: each refused before anything is recorded or sent.
      const forged = (name: string, tx: { raw?: string; txid?: string }) => {
        const file = join(dir, name);
        writeFileSync(file, JSON.stringify({ ...signed, transactions: [{ ...signed.transactions[0]!, ...tx }] }));
        return ['sweep', 'broadcast', '--signed', file];
      };
      await refused(forged('forged-txid.json', { txid: 'ab'.repeat(32) }), /tx-0's raw transaction hashes to [0-9a-f]{64}, not the txid (ab){32} the file names/);
      await refused(forged('garbage.json', { raw: '00' }), /tx-0: the signed raw is not a bitcoin transaction/);
      const redirected = bitcoin.Transaction.fromHex(signed.transactions[0]!.raw);
      redirected.outs[0]!.script = bitcoin.address.toOutputScript(OTHER_COLD, regtest);
      await refused(forged('redirected.json', { raw: redirected.toHex(), txid: redirected.getId() }), /tx-0: the signed transaction is not the plan's: output 0 pays another script/);
      // A validly signed transaction of the same wallet (the never-leased d4 to the cold address), under its own txid.
      const another = new bitcoin.Psbt({ network: regtest });
      another.addInput({ hash: fundedD4!, index: 1, witnessUtxo: { script: bitcoin.address.toOutputScript(d4!, regtest), value: 10_000n } });
      another.addOutput({ address: COLD, value: 9_000n });
      another.signInput(0, ACCOUNT.derive(0).derive(4)).finalizeAllInputs();
      const anotherTx = another.extractTransaction();
      await refused(forged('another.json', { raw: anotherTx.toHex(), txid: anotherTx.getId() }), /tx-0: the signed transaction is not the plan's: 1 input, planned 2: refused/);
      assert.equal(sim.posted.length, 0, 'nothing was sent');
      assert.equal(json<{ txs: unknown[] }[]>((await ok(['sweep', 'list', '--chain', 'bitcoin', '--json'])).stdout).flatMap((p) => p.txs).length, 0, 'nothing was recorded');

      // The broadcast: the node receives exactly the planned spend.
      const sent = json<{ transactions: { id: string; txid: string; status: string }[]; done: boolean }>((await ok(['sweep', 'broadcast', '--signed', signedFile, '--plan', planFile, '--json'])).stdout);
      assert.deepEqual(sent.transactions.map((x) => [x.id, x.status]), [['tx-0', 'SENT']]);
      assert.deepEqual(sim.posted, [signed.transactions[0]!.raw]);
      const tx = bitcoin.Transaction.fromHex(sim.posted[0]!);
      const psbt = bitcoin.Psbt.fromBase64((plan.transactions[0]!.payload as { psbt: string }).psbt, { network: regtest });
      assert.deepEqual(
        tx.ins.map((i) => `${Buffer.from(i.hash).reverse().toString('hex')}:${i.index}`),
        psbt.txInputs.map((i) => `${Buffer.from(i.hash).reverse().toString('hex')}:${i.index}`),
      );
      assert.equal(tx.outs.length, 1);
      assert.equal(bitcoin.address.fromOutputScript(tx.outs[0]!.script, regtest), COLD);
      assert.equal(100_000n - tx.outs[0]!.value, BigInt(planned.totals.fee), 'the planned fee, to the satoshi');

      // Running it again while the transaction waits in the mempool sends nothing.
      await ok(['sweep', 'broadcast', '--signed', signedFile]);
      assert.equal(sim.posted.length, 1);
      // A plan made now leaves the swept deposits alone: they are in a sweep not yet final.
      const during = json<{ plan: SweepPlan }>((await ok(['sweep', 'plan', '--chain', 'bitcoin', '--testnet', '--to', COLD, '--out', join(dir, 'p3.json'), '--json'])).stdout).plan;
      assert.equal(during.skipped.filter((s) => /in a sweep transaction not yet final/.test(s.reason)).length, 2);

      sim.mine();
      sim.mineEmpty(1);
      const final = json<{ transactions: { status: string }[]; done: boolean }>((await ok(['sweep', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout);
      assert.equal(final.done, true);
      assert.equal(sim.posted.length, 1, 'never sent twice');
      await ok(['sweep', 'broadcast', '--signed', signedFile]);
      assert.equal(sim.posted.length, 1);

      // What the operator sees.
      const list = json<{ planId: string; txs: { status: string; moves: Record<string, string> }[] }[]>((await ok(['sweep', 'list', '--chain', 'bitcoin', '--json'])).stdout);
      const row = list.find((p) => p.planId === plan.id)!;
      assert.deepEqual(row.txs.map((x) => x.status), ['FINAL']);
      assert.equal(row.txs[0]!.moves.BTC, tx.outs[0]!.value.toString());
      const byTxid = json<{ plan: SweepPlan; transactions: { txid: string }[] }>((await ok(['sweep', 'show', signed.transactions[0]!.txid, '--json'])).stdout);
      assert.equal(byTxid.plan.id, plan.id);
      assert.match((await ok(['sweep', 'show', plan.id.slice(0, 12)])).stdout, /tx-0 +[0-9a-f]{64} +FINAL/);
      const status = json<{ sweeps: { chain: string; symbol: string; swept: string; pending: string }[] }>((await ok(['status', '--json'])).stdout);
      const swept = status.sweeps.find((s) => s.chain === 'bitcoin')!;
      assert.equal(swept.swept, (Number(tx.outs[0]!.value) / 1e8).toFixed(8).replace(/0+$/, ''));
      assert.equal(swept.pending, '0');
      assert.match((await ok(['status'])).stdout, /swept to cold storage\n.*\nbitcoin +REGTEST +BTC/);

      // Payments keep their statuses: a sweep changes nothing about them.
      const after = await db.em().find(Payment, {}, { orderBy: { referenceId: 'asc' } });
      assert.deepEqual(after.map((p) => p.status), statuses);

      // Nothing left: exit 0, a message, no file.
      const empty = await ok(['sweep', 'plan', '--chain', 'bitcoin', '--testnet', '--to', COLD, '--out', join(dir, 'empty.json')]);
      assert.match(empty.stdout, /nothing to sweep: no deposit holds anything worth moving; no file written/);
      assert.equal(existsSync(join(dir, 'empty.json')), false);

      // A stale plan: made and signed, then its coins spent outside chaingate (the wallet itself) before it was broadcast.
      // (d3: its payment FAILED and it was never swept; d1, swept above, is refused at broadcast as "swept by plan …" even with new coins.)
      const [funding] = sim.mine([[{ address: d3!, sats: 20_000n }]]);
      const stalePlan = join(dir, 'stale-plan.json');
      await ok(['sweep', 'plan', '--chain', 'bitcoin', '--testnet', '--to', COLD, '--out', stalePlan]);
      await ok(['sweep', 'sign', '--plan', stalePlan, '--out', join(dir, 'stale-signed.json'), '--seed-file', seedFile, '--yes', '--expect-to', COLD]);
      const elsewhere = new bitcoin.Psbt({ network: regtest });
      elsewhere.addInput({ hash: funding!, index: 0, witnessUtxo: { script: bitcoin.address.toOutputScript(d3!, regtest), value: 20_000n } });
      elsewhere.addOutput({ address: OTHER_COLD, value: 19_000n });
      elsewhere.signInput(0, ACCOUNT.derive(0).derive(3)).finalizeAllInputs();
      const spentElsewhere = await fetch(`${sim.url}/tx`, { method: 'POST', body: elsewhere.extractTransaction().toHex() });
      assert.equal(spentElsewhere.status, 200, await spentElsewhere.text());
      sim.mine();
      const posted = sim.posted.length;
      const stale = await cli(['sweep', 'broadcast', '--signed', join(dir, 'stale-signed.json'), '--json']);
      assert.equal(stale.code, 1, `${stale.stdout}${stale.stderr}`);
      const staleTx = json<{ transactions: { status: string; error: string }[] }>(stale.stdout).transactions[0]!;
      assert.equal(staleTx.status, 'FAILED');
      assert.match(staleTx.error, /^stale plan \(the planner's check\): tx-0 spends [0-9a-f]{64}:\d, which is spent already/);
      assert.equal(sim.posted.length, posted, 'a stale plan is not sent');
    });
  });
}

describe('bitcoin sweep of a mixed BIP84/BIP86 pool through the CLI', () => {
  test('--xpub given once per account: every input carries its derivation and a hardware-wallet-style signer completes the PSBT', async (t) => {
    const sim = await startEsploraSim();
    t.after(() => sim.close());
    const tdb = await createTestDatabase('sqlite');
    t.after(() => tdb.drop());
    const dir = mkdtempSync(join(tmpdir(), 'chaingate-sweep-'));
    const config = writeConfigFile({ chains: { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', confirmations: 1 } } }, log: { level: 'warn' } });
    const { ok, refused } = cliIn({ CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: config }, dir);
    const hd = BIP32Factory(ecc).fromSeed(Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex'), bitcoin.networks.testnet);
    const tpub86 = hd.derivePath("m/86'/1'/0'").neutered().toBase58();
    const merchant = json<{ id: string }>((await ok(['merchant', 'create', '--name', 'Acme', '--json'])).stdout);
    await ok(['wallets', 'seed', '--chain', 'bitcoin', '--testnet', '--xpub', TPUB84, '--count', '2']);
    await ok(['wallets', 'seed', '--chain', 'bitcoin', '--testnet', '--xpub', tpub86, '--script', 'p2tr', '--count', '2']);
    const db = await openDatabase(tdb.url);
    t.after(() => db.close());
    const em = db.em();
    const pool = await em.find(WalletAddress, { chain: 'bitcoin', isTestnet: true }, { orderBy: { address: 'asc' } });
    assert.deepEqual(pool.map((w) => w.address.slice(0, 6)).sort(), ['bcrt1p', 'bcrt1p', 'bcrt1q', 'bcrt1q']);
    const invoice = paidInvoice(em, merchant.id, 'INV-SWEEP-MIXED-0001');
    for (const [i, w] of pool.entries()) {
      await leasedPayment(em, invoice, merchant.id, { referenceId: `PAY-SWEEP-MIXED-000${i}`, status: 'COMPLETED', address: w.address, amount: '0.0005', receivedAmount: '0.0005', requiredConfirmations: 1 });
    }
    sim.mine([pool.map((w) => ({ address: w.address, sats: 50_000n }))]);

    const plan = (extra: string[]) => ['sweep', 'plan', '--chain', 'bitcoin', '--testnet', '--to', COLD, '--out', join(dir, 'plan.json'), '--json', ...extra];
    // One key of a two-key pool: the taproot inputs could not be signed by the wallet, so no plan.
    await refused(plan(['--xpub', TPUB84, '--fingerprint', '73c5da0a']), /deposit #0 \(key [0-9a-f]{16}\) was seeded from an account key not given: pass every account key of the pool, one --xpub each/);
    assert.equal(existsSync(join(dir, 'plan.json')), false);
    const swept = json<{ plan: SweepPlan }>((await ok(plan(['--xpub', TPUB84, '--xpub', tpub86, '--fingerprint', '73c5da0a']))).stdout).plan;
    checkDecoded(swept, swept.transactions.map((tx) => bitcoinSweepVerifier.decodeUnsigned(swept, tx)), { maxFee: null });
    const psbt = bitcoin.Psbt.fromBase64((swept.transactions[0]!.payload as { psbt: string }).psbt, { network: regtest });
    assert.equal(psbt.inputCount, 4);
    // The external signer holds only the HD root: bitcoinjs signInputHD for P2WPKH; for P2TR the key at the tap derivation, tweaked (BIP86).
    for (const [i, input] of psbt.data.inputs.entries()) {
      if (input.witnessUtxo!.script[0] === 0x00) {
        assert.match(input.bip32Derivation![0]!.path, /^m\/84'\/1'\/0'\/0\/[01]$/);
        psbt.signInputHD(i, hd);
      } else {
        const [d] = input.tapBip32Derivation!;
        assert.match(d!.path, /^m\/86'\/1'\/0'\/0\/[01]$/);
        assert.equal(Buffer.compare(d!.masterFingerprint, hd.fingerprint), 0);
        const node = hd.derivePath(d!.path);
        assert.equal(Buffer.compare(node.publicKey.subarray(1, 33), input.tapInternalKey!), 0);
        psbt.signTaprootInput(i, node.tweak(bitcoin.crypto.taggedHash('TapTweak', node.publicKey.subarray(1, 33))));
      }
    }
    psbt.finalizeAllInputs();
    const raw = psbt.extractTransaction().toHex();
    const decoded = bitcoinSweepVerifier.decodeSigned(swept, swept.transactions[0]!, raw);
    const res = await fetch(`${sim.url}/tx`, { method: 'POST', body: raw });
    assert.equal(await res.text(), decoded.txid, 'the node accepts it, under the txid the verifier computed');
    assert.equal(decoded.pays[0]!.amount + decoded.fee, 200_000n);
  });
});

describe('sweep refusals that need no chain', () => {
  test('an invalid or pool --to, a chain switched off, a family without sweeps: clear errors, no file', async (t) => {
    const tdb = await createTestDatabase('sqlite');
    t.after(() => tdb.drop());
    const dir = mkdtempSync(join(tmpdir(), 'chaingate-sweep-'));
    const config = writeConfigFile({ chains: { bitcoin: { testnet: { rpcUrl: 'http://127.0.0.1:9', network: 'REGTEST' } }, tron: { enabled: false } } });
    const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: config };
    const out = join(dir, 'plan.json');
    const plan = (args: string[]) => runCli(['sweep', 'plan', ...args, '--out', out], env, { cwd: dir });
    const cases: [string[], RegExp][] = [
      [['--chain', 'bitcoin', '--testnet', '--to', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'], /--to: not a valid bitcoin testnet address: expected bcrt1…/],
      [['--chain', 'dogecoin', '--to', 'x'], /unknown chain slug "dogecoin"/],
      [['--chain', 'tron', '--to', 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH'], /tron is switched off in the configuration/],
      [['--chain', 'ethereum', '--to', COLD, '--xpub', TPUB84], /--xpub and --fingerprint are for bitcoin PSBTs only/],
    ];
    const unsupported = Object.values(FAMILIES).find((f) => !f.sweep);
    if (unsupported) {
      const slug = { evm: 'ethereum', tron: 'tron', solana: 'solana', ton: 'ton', bitcoin: 'bitcoin' }[unsupported.family];
      if (slug !== 'tron') cases.push([['--chain', slug, '--to', 'x'], new RegExp(`sweeps are not yet supported on ${slug}`)]);
    }
    for (const [args, pattern] of cases) {
      const r = await plan(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, pattern);
    }
    await runCli(['wallets', 'seed', '--chain', 'bitcoin', '--testnet', '--xpub', TPUB84, '--count', '1'], env, { cwd: dir });
    const first = bitcoin.payments.p2wpkh({ pubkey: ACCOUNT.derive(0).derive(0).publicKey, network: regtest }).address!;
    const r = await plan(['--chain', 'bitcoin', '--testnet', '--to', first]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--to is an address of the bitcoin deposit pool/);
    assert.equal(existsSync(out), false);
  });
});
