import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as bitcoin from 'bitcoinjs-lib';
import { openCommon } from '../../src/cli/context.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { broadcastSweep } from '../../src/sweep/broadcast-sweep.ts';
import { planRefund } from '../../src/sweep/plan-refund.ts';
import { signSweep } from '../../src/sweep/sign-sweep.ts';
import { ACCOUNT, cliIn, leasedPayment, paidTo, PHRASE, regtest, regtestAddress, TPUB84 } from '../helpers/bitcoin-pool.ts';
import { type DialectName, DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startTestDaemon, TEST_MASTER_KEY } from '../helpers/daemon.ts';
import { startEsploraSim } from '../helpers/esplora-sim.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { paidInvoice } from '../helpers/ledger-rows.ts';

// Issue 45's double refund: two refunds of one payment that both got past planning (the second
// planned after the first's reservation would have lapsed), signed, and broadcast at the same moment
// by two processes' stores (two connection pools on one database). Exactly one reaches the node,
// every round, from the same source (both from the deposit) and from different ones (deposit and a
// merchant wallet address).

const ROUNDS = 10;
const DAY = 24 * 3_600_000;

/**
 * A regtest chain, serve's store and a second process's store (its own connections to the same
 * database), the seed file, `count` pool addresses seeded from the BIP84 account, and a paid invoice.
 */
async function regtestShop(t: { after(fn: () => Promise<void> | void): void }, dialect: DialectName, count: number) {
  const sim = await startEsploraSim();
  t.after(() => sim.close());
  sim.mineEmpty(1);
  const chains = { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', confirmations: 1, blockTimeMs: 1000 } } };
  const gw = await startTestDaemon(t, dialect, { chains });
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-race-'));
  const env = { CHAINGATE_DATABASE_URL: gw.common.config.database.url, CHAINGATE_MASTER_KEY: TEST_MASTER_KEY, CHAINGATE_CONFIG: writeConfigFile({ chains, log: { level: 'warn' } }), CHAINGATE_LOG_LEVEL: 'silent' };
  const other = await openCommon({ env, skipMigrationCheck: true });
  t.after(() => other.close());
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
  chmodSync(seedFile, 0o600);
  await cliIn(env, dir).ok(['wallets', 'seed', '--chain', 'bitcoin', '--testnet', '--xpub', TPUB84, '--count', String(count)]);
  const em = gw.common.db.em();
  const pool = (await em.find(WalletAddress, { chain: 'bitcoin', isTestnet: true }, { orderBy: { derivationIndex: 'asc' } })).map((w) => w.address);
  const invoice = paidInvoice(em, gw.merchant.id, `INV-RACE-${dialect}-${count}`);
  await em.flush();
  return { sim, gw, other, dir, seedFile, env, pool, invoice };
}

for (const dialect of DIALECTS) {
  describe(`concurrent refund broadcasts on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test(`${ROUNDS} rounds of two refunds of one payment broadcast at once: one is sent, one refused`, async (t) => {
      const { sim, gw, other, dir, seedFile, pool, invoice } = await regtestShop(t, dialect, ROUNDS);
      const em = gw.common.db.em();

      for (let round = 0; round < ROUNDS; round++) {
        const deposit = pool[round]!;
        const buyer = regtestAddress(0x80 + round);
        const sameSource = round % 2 === 0;
        // The merchant wallet: the seed's change chain m/84'/1'/0'/1/round.
        const wallet = bitcoin.payments.p2wpkh({ pubkey: Buffer.from(ACCOUNT.derive(1).derive(round).publicKey), network: regtest }).address!;
        const payment = await leasedPayment(em, invoice, gw.merchant.id, { referenceId: `PAY-RACE-${String(round).padStart(4, '0')}`, status: 'COMPLETED', address: deposit, amount: '0.0005', receivedAmount: '0.0005', requiredConfirmations: 1 });
        sim.mine([[{ address: deposit, sats: 50_000n }, { address: wallet, sats: 100_000n }]]);
        const now = new Date();
        const plan = async (name: string, at: Date, fromAddress?: string) => {
          const out = join(dir, `r${round}-${name}.json`);
          await planRefund(gw.common, { payment: payment.id, to: buyer, amount: '0.0005', fromAddress, feePayer: null, out }, at);
          const signed = `${out}.signed.json`;
          await signSweep({ plan: out, out: signed, seedFile, expectTo: buyer, yes: true, maxFee: '0.0001' }, { say: () => {}, confirm: null });
          return signed;
        };
        const a = await plan('a', now);
        // Planned as if a day had passed: the first plan's reservation no longer holds it back.
        const b = await plan('b', new Date(now.getTime() + DAY + 60_000), sameSource ? undefined : wallet);
        const postedBefore = sim.posted.length;
        const results = await Promise.allSettled([
          broadcastSweep(gw.common, { kind: 'refund', signed: a, wait: false }),
          broadcastSweep(other, { kind: 'refund', signed: b, wait: false }),
        ]);
        const sent = results.filter((r) => r.status === 'fulfilled');
        const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        assert.equal(sent.length, 1, `round ${round}: exactly one broadcast goes through (${refused.map((r) => String(r.reason)).join('; ')})`);
        // From one deposit the second sees the first's transaction on it; from a wallet, the first's refund.
        const why = sameSource
          ? /refused, nothing sent: the deposit \w+ is in a transaction of refund plan [0-9a-f]{16}… still on its way/
          : /refused, nothing sent: with this refund of 0\.0005 BTC, refunds of payment \w+ would use 0\.001 BTC, more than the 0\.0005 BTC it received/;
        assert.match(String(refused[0]!.reason), why);
        const posted = sim.posted.slice(postedBefore);
        assert.equal(posted.length, 1, `round ${round}: one transaction reaches the node`);
        const received = paidTo(posted, buyer);
        assert.ok(received > 0n && received <= 50_000n, `round ${round}: the buyer is paid once (${received} sat)`);
        sim.mine();
      }
    });

    test('a sweep and a refund of the same deposit broadcast at once: one wins, the other is refused before sending', async (t) => {
      const { sim, gw, other, dir, seedFile, env, pool, invoice } = await regtestShop(t, dialect, 4);
      const em = gw.common.db.em();
      const { ok, refused: refusedCli } = cliIn(env, dir);
      const cold = regtestAddress(0x77);
      const winners: string[] = [];
      for (let round = 0; round < 3; round++) {
        const deposit = pool[round]!;
        const buyer = regtestAddress(0x90 + round);
        const payment = await leasedPayment(em, invoice, gw.merchant.id, { referenceId: `PAY-SRACE-${round}`, status: 'COMPLETED', address: deposit, amount: '0.0005', receivedAmount: '0.0005', requiredConfirmations: 1 });
        sim.mine([[{ address: deposit, sats: 50_000n }]]);
        const sweepPlan = join(dir, `s${round}.json`);
        await ok(['sweep', 'plan', '--chain', 'bitcoin', '--testnet', '--to', cold, '--out', sweepPlan]);
        // The refund is planned as if the sweep's reservation had lapsed: both plans now exist.
        const refundPlan = join(dir, `r${round}.json`);
        await planRefund(gw.common, { payment: payment.id, to: buyer, amount: '0.0005', feePayer: null, out: refundPlan }, new Date(Date.now() + DAY + 60_000));
        const sign = async (plan: string, to: string) => {
          await signSweep({ plan, out: `${plan}.signed.json`, seedFile, expectTo: to, yes: true, maxFee: '0.0001' }, { say: () => {}, confirm: null });
          return `${plan}.signed.json`;
        };
        const [s, r] = [await sign(sweepPlan, cold), await sign(refundPlan, buyer)];
        const postedBefore = sim.posted.length;
        const results = await Promise.allSettled([broadcastSweep(gw.common, { kind: 'sweep', signed: s, wait: false }), broadcastSweep(other, { kind: 'refund', signed: r, wait: false })]);
        const sent = results.filter((x) => x.status === 'fulfilled');
        const refused = results.filter((x): x is PromiseRejectedResult => x.status === 'rejected');
        assert.equal(sent.length, 1, `round ${round}: one of the two goes through (${refused.map((x) => String(x.reason)).join('; ')})`);
        assert.match(String(refused[0]!.reason), new RegExp(`refused, nothing sent: the deposit ${deposit} is in a transaction of (sweep|refund) plan [0-9a-f]{16}… still on its way`));
        assert.equal(sim.posted.length - postedBefore, 1, `round ${round}: one transaction reaches the node`);
        winners.push(results[0]!.status === 'fulfilled' ? 'sweep' : 'refund');
        sim.mine();
      }
      assert.equal(winners.length, 3);

      // A refund plan cancelled before its broadcast: its reservation ends, its signed file is refused.
      const payment = await leasedPayment(em, invoice, gw.merchant.id, { referenceId: 'PAY-SRACE-cancel', status: 'COMPLETED', address: pool[3]!, amount: '0.0005', receivedAmount: '0.0005', requiredConfirmations: 1 });
      sim.mine([[{ address: pool[3]!, sats: 50_000n }]]);
      const planFile = join(dir, 'cancel.json');
      const planned = JSON.parse((await ok(['refund', 'plan', '--payment', payment.id, '--to', cold, '--amount', '0.0002', '--out', planFile, '--json'])).stdout) as { refundId: string; plan: { id: string } };
      await refusedCli(['refund', 'plan', '--payment', payment.id, '--to', cold, '--amount', '0.0004', '--out', join(dir, 'x.json')], /refunds already cover 0\.0002\d+ BTC; at most 0\.0002\d+ BTC can be refunded/);
      await signSweep({ plan: planFile, out: `${planFile}.signed.json`, seedFile, expectTo: cold, yes: true, maxFee: '0.0001' }, { say: () => {}, confirm: null });
      await refusedCli(['sweep', 'cancel', planned.plan.id.slice(0, 12)], /is a refund plan: cancel it with `chaingate refund cancel`/);
      assert.match((await ok(['refund', 'cancel', planned.refundId])).stdout, /cancelled refund plan [0-9a-f]{16}…/);
      await refusedCli(['refund', 'cancel', planned.refundId], /was already cancelled/);
      await refusedCli(['refund', 'broadcast', '--signed', `${planFile}.signed.json`], /refused, nothing sent: plan [0-9a-f]{16}… was cancelled on/);
      const listed = JSON.parse((await ok(['refund', 'list', '--payment', payment.id, '--json'])).stdout) as { state: string }[];
      assert.deepEqual(listed.map((x) => x.state), ['CANCELLED']);
      // The amount is free again.
      await ok(['refund', 'plan', '--payment', payment.id, '--to', cold, '--amount', '0.0004', '--out', join(dir, 'again.json')]);
      await refusedCli(['refund', 'cancel', 'nonesuch'], /no refund plan "nonesuch"/);
    });
  });
}
