import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyRange, classify } from '../../src/indexer/ledger.ts';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { cancelPlan, depositConflicts, reservedDeposits } from '../../src/store/plan-reservations.ts';
import { poolReader } from '../../src/store/raw-sql.ts';
import { paymentById } from '../../src/store/records.ts';
import { recordRefund, refundedTotals, refundsOfPayment } from '../../src/store/refunds.ts';
import { ownTransfer, recordPlan, recordSignedTxs, sweepCandidates } from '../../src/store/sweeps.ts';
import { leasedPayment, regtestAddress } from '../helpers/bitcoin-pool.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { paidInvoice } from '../helpers/ledger-rows.ts';

// What a plan holds until it is broadcast, what a broadcast refuses, what the ledger calls the
// deployment's own money, and what a refund uses of its payment: the store's rows on both databases.

const POOL = { chain: 'bitcoin', isTestnet: true };
const HOUR = 3_600_000;

for (const dialect of DIALECTS) {
  describe(`plan reservations on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('reservations, cancel, broadcast conflicts, own transfers and what refunds use', async (t) => {
      const gw = await startTestDaemon(t, dialect);
      const db = gw.common.db;
      const em = db.em();
      const [d0, d1, d2, d3] = [0x61, 0x62, 0x63, 0x64].map(regtestAddress) as [string, string, string, string];
      for (const [i, address] of [d0, d1, d2, d3].entries()) em.create(WalletAddress, { chain: 'bitcoin', isTestnet: true, address, source: 'acct', derivationIndex: i, paymentId: null, leasedAt: null });
      await em.flush();
      const invoice = paidInvoice(em, gw.merchant.id, 'INV-RESERVE-1');
      const pay = (i: number, address: string, status: 'COMPLETED' | 'PROCESSING') =>
        leasedPayment(em, invoice, gw.merchant.id, { referenceId: `PAY-RESERVE-${i}`, status, address, amount: '0.0005', receivedAmount: '0.0006', requiredConfirmations: 1 });
      const p0 = await pay(0, d0, 'COMPLETED');
      await pay(1, d1, 'COMPLETED');
      const p2 = await pay(2, d2, 'PROCESSING');
      await pay(3, d3, 'COMPLETED');
      const now = new Date();
      const r = poolReader(db);

      const before = await sweepCandidates(r, POOL, now);
      assert.deepEqual(before.candidates.map((c) => c.address), [d0, d1, d3]);
      assert.match(before.skipped[0]!.reason, /leased to an open payment \(PROCESSING\)/);

      // A refund plan from d0 reserves the deposit against sweeps, and its amount (with the fee the payment pays) against refunds.
      const body = (addresses: string[]) => JSON.stringify({ deposits: addresses.map((address) => ({ address })) });
      const plan = (id: string, kind: string, addresses: string[], feePayer: string | null = null, at = now) =>
        db.write((x) => recordPlan(x, { id, chain: 'bitcoin', network: 'REGTEST', isTestnet: true, kind, toAddress: regtestAddress(0x70), feePayer, body: body(addresses), expiresAt: new Date(at.getTime() + 24 * HOUR) }, at));
      const A = 'a'.repeat(64);
      await plan(A, 'refund', [d0]);
      await db.write((x) =>
        recordRefund(x, { id: 'refund0000000000000000000000000a', paymentId: p0.id, planId: A, chain: 'bitcoin', network: 'REGTEST', isTestnet: true, symbol: 'BTC', tokenAddress: null, decimals: 8, amount: '10000', toAddress: regtestAddress(0x70), fromAddress: d0, fromKind: 'deposit', feeFromPayment: '500', createdAt: now }),
      );
      const held = await sweepCandidates(r, POOL, now);
      assert.deepEqual(held.candidates.map((c) => c.address), [d1, d3]);
      assert.ok(held.skipped.some((s) => s.address === d0 && /reserved by refund plan a{16}… \(broadcast it, or `chaingate refund cancel`\)/.test(s.reason)));
      assert.deepEqual(refundedTotals(await refundsOfPayment(r, p0.id)), { final: 0n, broadcast: 0n, committed: 10_500n }, 'a planned refund reserves its amount and the fee the payment pays');
      // A day later the reservation has lapsed.
      assert.deepEqual((await sweepCandidates(r, POOL, new Date(now.getTime() + 25 * HOUR))).candidates.map((c) => c.address), [d0, d1, d3]);
      assert.equal((await refundsOfPayment(r, p0.id))[0]!.state, 'PLANNED');

      // Cancelled: the deposit is free, the refund CANCELLED and counting nothing; a second cancel says so.
      assert.equal(await db.write((x) => cancelPlan(x, A, now)), 'cancelled');
      assert.equal(await db.write((x) => cancelPlan(x, A, now)), 'already');
      assert.equal((await reservedDeposits(r, POOL, now)).size, 0);
      const cancelled = await refundsOfPayment(r, p0.id);
      assert.equal(cancelled[0]!.state, 'CANCELLED');
      assert.deepEqual(refundedTotals(cancelled), { final: 0n, broadcast: 0n, committed: 0n });

      // Broadcast's world: a live payment's deposit, another plan's transaction on its way, a swept deposit.
      const B = 'b'.repeat(64);
      const S = 'c'.repeat(64);
      await plan(B, 'refund', [d0]);
      await db.write((x) =>
        recordRefund(x, { id: 'refund0000000000000000000000000b', paymentId: p0.id, planId: B, chain: 'bitcoin', network: 'REGTEST', isTestnet: true, symbol: 'BTC', tokenAddress: null, decimals: 8, amount: '10000', toAddress: regtestAddress(0x70), fromAddress: d0, fromKind: 'deposit', feeFromPayment: '500', createdAt: now }),
      );
      await plan(S, 'sweep', [d1, d3], regtestAddress(0x71));
      assert.deepEqual(await depositConflicts(r, POOL, [d2], S), [`the deposit ${d2} is leased to payment ${p2.id}, still PROCESSING`]);
      const tx = (planId: string, txKey: string, txid: string, deposits: string[]) => ({ planId, txKey, chain: 'bitcoin', network: 'REGTEST', isTestnet: true, txid, raw: '00', deposits, moves: { BTC: '1' }, fee: '480' });
      await db.write((x) => recordSignedTxs(x, [tx(S, 'tx-0', 'ee'.repeat(32), [d1, d3])]));
      assert.deepEqual(await depositConflicts(r, POOL, [d1], B), [`the deposit ${d1} is in a transaction of sweep plan c{16}… still on its way`.replace('c{16}', 'c'.repeat(16))]);
      assert.deepEqual(await depositConflicts(r, POOL, [d1], S), [], "a plan's own transactions are no conflict (a resumed broadcast)");
      await db.write((x) => x.run("update sweep_tx set status = 'FINAL' where plan_id = ?", [S]));
      assert.deepEqual(await depositConflicts(r, POOL, [d3], B), [`the deposit ${d3} was swept by plan ${'c'.repeat(16)}…`]);
      assert.equal(await db.write((x) => cancelPlan(x, S, now)), 'broadcast', 'a broadcast plan cannot be cancelled');
      // Funds that arrive after a sweep are the next plan's: a plan made after the sweep may spend the deposit.
      const later = new Date(Date.now() + 60_000);
      await plan('d'.repeat(64), 'sweep', [d3], null, later);
      assert.deepEqual(await depositConflicts(r, POOL, [d3], 'd'.repeat(64)), []);

      // The refund's fee counts as the chain charged it once final.
      await db.write((x) => recordSignedTxs(x, [tx(B, 'tx-0', 'ff'.repeat(32), [d0])]));
      assert.deepEqual(refundedTotals(await refundsOfPayment(r, p0.id)), { final: 0n, broadcast: 10_480n, committed: 10_480n });
      await db.write((x) => x.run("update sweep_tx set status = 'FINAL', fee = '470' where plan_id = ?", [B]));
      assert.deepEqual(refundedTotals(await refundsOfPayment(r, p0.id)), { final: 10_470n, broadcast: 10_470n, committed: 10_470n });

      // The deployment's own money: its recorded transactions, and its fee payers.
      const key = { chain: 'bitcoin', isTestnet: true };
      assert.match((await ownTransfer(r, key, 'FF'.repeat(32), null))!, /sent by this deployment's refund plan b{16}…/);
      assert.match((await ownTransfer(r, key, '11'.repeat(32), regtestAddress(0x71).toUpperCase()))!, /from the fee payer of plan c{16}…/);
      assert.equal(await ownTransfer(r, key, '11'.repeat(32), regtestAddress(0x72)), null);
      assert.equal(await ownTransfer(r, { chain: 'bitcoin', isTestnet: false }, 'ff'.repeat(32), null), null, 'another network is another ledger');
      const payment = await paymentById(r, p0.id);
      const seen = { txHash: 'ff'.repeat(32), logIndex: 1, blockNumber: 10n, blockHash: '00', blockTime: Math.floor(Date.now() / 1000), from: null, to: d0, token: null, amount: 5_000n, kind: 'native' as const, reverted: false };
      assert.equal(classify(seen, payment).status, 'EXTRA', 'without the own check, a change output to a completed deposit reads as extra funds');
      assert.deepEqual(classify(seen, payment, 'sent by this deployment'), { status: 'OWN', note: 'sent by this deployment', lateReason: null });

      // Through the ledger: a refund's change and a fee payer's top-up are OWN; a stranger's coins are the buyer's late funds.
      em.create(IndexerCursor, { chain: 'bitcoin', network: 'REGTEST', blockNumber: '9', blockHash: '09'.repeat(32), leaseOwner: 'me', leaseUntil: new Date(Date.now() + 60_000), lastError: null, lastErrorAt: null });
      await em.flush();
      const block = { number: 10n, hash: '0a'.repeat(32), parentHash: '09'.repeat(32), timestamp: Math.floor(Date.now() / 1000) };
      const arrive = (txHash: string, from: string | null, amount: bigint) => ({ ...seen, txHash, from, amount, blockHash: block.hash });
      await applyRange(db, { chain: 'bitcoin', network: 'REGTEST', isTestnet: true }, {
        from: 10n,
        to: 10n,
        blocks: [block],
        transfers: [arrive('ff'.repeat(32), null, 5_000n), arrive('12'.repeat(32), regtestAddress(0x71), 7_000n), arrive('13'.repeat(32), regtestAddress(0x72), 9_000n)],
        windowSize: 10,
        leaseOwner: 'me',
        finalized: null,
      });
      const recorded = await r.all<{ tx_hash: string; status: string; note: string | null }>('select tx_hash, status, note from observed_transfer where payment_id = ? order by tx_hash', [p0.id]);
      assert.deepEqual(recorded.map((x) => [x.tx_hash.slice(0, 2), x.status]), [['12', 'OWN'], ['13', 'EXTRA'], ['ff', 'OWN']]);
      const late = await r.all<{ payload: string }>("select payload from webhook_event where payment_id = ? and type = 'payment.late_funds'", [p0.id]);
      assert.equal(late.length, 1, 'only the stranger\'s coins are announced as late funds');
      assert.match(late[0]!.payload, /"amount":"0\.00009"/);
    });
  });
}
