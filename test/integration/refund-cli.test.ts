import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as bitcoin from 'bitcoinjs-lib';
import XLSX from 'xlsx';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { WebhookDelivery } from '../../src/store/entities/webhook-delivery.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import type { PaymentStatus } from '../../src/domain/lifecycle.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { ACCOUNT, cliIn, leasedPayment, paidTo, PHRASE, regtest, regtestAddress, TPUB84 } from '../helpers/bitcoin-pool.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { startEsploraSim } from '../helpers/esplora-sim.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { paidInvoice } from '../helpers/ledger-rows.ts';

// Refunds through the real binary (docs/refunds.md), on a regtest chain served over Esplora:
// an over-payment refunded from its deposit (the rest stays), a refund above what is left refused,
// late funds to an expired payment refunded in full (REFUNDED, payment.refunded once), a swept
// deposit refused without --from-address; the refunds on GET /api/v1/payments/{id}/refunds; and the
// accountant's CSV read back by a spreadsheet library as numbers.

const BUYER = regtestAddress(0x51);
const LATE_BUYER = regtestAddress(0x52);

const json = <T>(text: string): T => JSON.parse(text) as T;

for (const dialect of DIALECTS) {
  describe(`bitcoin refunds through the CLI on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('over-payment, too much refused, late funds refunded in full (REFUNDED, event once), swept deposit refused, API, report', async (t) => {
      const sim = await startEsploraSim();
      t.after(() => sim.close());
      sim.mineEmpty(1);
      const chains = { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', confirmations: 1, blockTimeMs: 1000 } } };
      const gw = await startTestDaemon(t, dialect, { chains });
      const dir = mkdtempSync(join(tmpdir(), 'chaingate-refund-'));
      const config = writeConfigFile({ chains, log: { level: 'warn' } });
      const env = { CHAINGATE_DATABASE_URL: gw.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: config };
      const { ok, refused } = cliIn(env, dir);
      const seedFile = join(dir, 'seed.txt');
      writeFileSync(seedFile, `${PHRASE}\n`, { mode: 0o600 });
      chmodSync(seedFile, 0o600);
      // A signed refund handed to `sweep broadcast` is refused by the file's kind: checked once, on SQLite.
      let kindChecked = dialect !== 'sqlite';
      const signAndSend = async (planFile: string, to: string) => {
        const signedFile = `${planFile}.signed.json`;
        await ok(['sweep', 'sign', '--plan', planFile, '--out', signedFile, '--seed-file', seedFile, '--expect-to', to, '--yes']);
        if (!kindChecked) {
          kindChecked = true;
          await refused(['sweep', 'broadcast', '--signed', signedFile], /is a signed refund plan: broadcast it with `chaingate refund broadcast`/);
        }
        // Coin units with the symbol, never satoshi labelled BTC (the fee likewise).
        const human = (await ok(['refund', 'broadcast', '--signed', signedFile])).stdout;
        assert.match(human, /\b0\.000\d+ BTC\b/, human);
        assert.doesNotMatch(human, /\b[1-9]\d{3,} BTC\b/, human);
        sim.mine();
        return json<{ done: boolean }>((await ok(['refund', 'broadcast', '--signed', signedFile, '--wait', '--json'])).stdout);
      };

      await ok(['wallets', 'seed', '--chain', 'bitcoin', '--testnet', '--xpub', TPUB84, '--count', '4']);
      const em = gw.common.db.em();
      const pool = await em.find(WalletAddress, { chain: 'bitcoin', isTestnet: true }, { orderBy: { derivationIndex: 'asc' } });
      const [d0, d1, d2] = pool.map((w) => w.address) as [string, string, string];
      const invoice = paidInvoice(em, gw.merchant.id, 'INV-REFUND-0001');
      const pricing = { mode: 'convert', rate: '65000.5', source: 'static', fiat: 'USD', at: new Date().toISOString() };
      const open = (i: number, address: string, status: PaymentStatus, received: string) =>
        leasedPayment(em, invoice, gw.merchant.id, {
          referenceId: `PAY-REFUND-000${i}`,
          status,
          address,
          amount: '0.0005',
          receivedAmount: received,
          requiredConfirmations: 1,
          transactionHash: status === 'COMPLETED' ? 'ab'.repeat(32) : null,
          completedAt: status === 'COMPLETED' ? new Date() : null,
          metadata: { pricing },
        });
      // d0: 0.0006 for 0.0005 (over-paid); d1: completed, since swept; d2: expired, then 0.0003 arrived late.
      const over = await open(0, d0, 'COMPLETED', '0.0006');
      const swept = await open(1, d1, 'COMPLETED', '0.0005');
      const late = await open(2, d2, 'EXPIRED', '0');
      const [lateTx] = sim.mine([[{ address: d0, sats: 60_000n }, { address: d2, sats: 30_000n }]]);
      em.create(ObservedTransfer, { chain: 'bitcoin', network: 'REGTEST', txHash: lateTx!, logIndex: 1, blockNumber: String(sim.height()), blockHash: '00'.repeat(32), fromAddress: null, toAddress: d2, tokenAddress: null, symbol: 'BTC', amount: '30000', paymentId: late.id, status: 'LATE', note: 'sent after the payment window closed' });
      await em.flush();
      // d1's coins went to cold storage in a sweep that is final.
      await gw.common.db.write(async (x) => {
        await x.run(`insert into sweep_plan (id, chain, network, is_testnet, kind, to_address, fee_payer, body, created_at) values (?, 'bitcoin', 'REGTEST', ?, 'sweep', ?, null, '{}', ?)`, ['c'.repeat(64), true, BUYER, new Date()]);
        await x.run(
          `insert into sweep_tx (id, plan_id, tx_key, chain, network, is_testnet, txid, raw, deposits, moves, fee, status, error, attempts, sent_at, final_at, created_at, updated_at)
           values ('sweeptx0000000000000000000000001', ?, 'tx-0', 'bitcoin', 'REGTEST', ?, ?, '00', ?, '{"BTC":"49000"}', '1000', 'FINAL', null, 1, ?, ?, ?, ?)`,
          ['c'.repeat(64), true, 'dd'.repeat(32), JSON.stringify([d1]), new Date(), new Date(), new Date(), new Date()],
        );
      });

      // 1. The over-payment by default: 0.0001 BTC to the buyer, the fee from what stays on the deposit.
      const planFile = join(dir, 'refund-over.json');
      const planned = json<{ plan: SweepPlan; amount: string; received: string }>((await ok(['refund', 'plan', '--payment', over.id, '--to', BUYER, '--out', planFile, '--json'])).stdout);
      assert.equal(planned.plan.kind, 'refund');
      assert.deepEqual(planned.plan.refund, { paymentId: over.id, symbol: 'BTC', token: null, decimals: 8, amount: '10000' });
      assert.equal(planned.received, '60000');
      assert.deepEqual(json<SweepPlan>(readFileSync(planFile, 'utf8')).id, planned.plan.id);
      assert.equal((await signAndSend(planFile, BUYER)).done, true);
      assert.equal(paidTo(sim.posted, BUYER), 10_000n, 'the buyer receives exactly the over-payment');
      const change = paidTo(sim.posted, d0);
      assert.ok(change > 49_000n && change < 50_000n, `the rest less the fee stays on the deposit (${change})`);
      await em.refresh(over);
      assert.equal(over.status, 'COMPLETED', 'a partial refund leaves the payment as it was');

      // 2. More than is left of what the payment received: the first refund used its amount and the fee the deposit paid.
      await refused(['refund', 'plan', '--payment', over.id, '--to', BUYER, '--amount', '0.00050001', '--out', join(dir, 'x.json')], /more than was received: the payment received 0\.0006 BTC, of which refunds already cover 0\.0001\d{4} BTC; at most 0\.0004\d{4} BTC can be refunded/);
      await refused(['refund', 'plan', '--payment', over.id, '--to', BUYER, '--out', join(dir, 'x.json')], /no over-payment to refund .*give --amount/);

      // 3. Late funds to an expired payment, refunded in full: the fee comes out of the refund; REFUNDED, one event.
      const latePlan = join(dir, 'refund-late.json');
      const lateOut = json<{ plan: SweepPlan }>((await ok(['refund', 'plan', '--payment', late.id, '--to', LATE_BUYER, '--out', latePlan, '--json'])).stdout);
      assert.equal(lateOut.plan.refund!.amount, '30000');
      const lateFee = BigInt(lateOut.plan.deposits[0]!.fee);
      assert.ok(lateFee > 0n);
      assert.equal(BigInt(lateOut.plan.deposits[0]!.moves[0]!.amount), 30_000n - lateFee);
      await signAndSend(latePlan, LATE_BUYER);
      assert.equal(paidTo(sim.posted, LATE_BUYER), 30_000n - lateFee);
      await em.refresh(late);
      assert.equal(late.status, 'REFUNDED');
      const events = await em.find(WebhookEvent, { paymentId: late.id, type: 'payment.refunded' });
      assert.equal(events.length, 1);
      const data = json<{ data: { payment: { status: string }; refunds: { amount: string; status: string }[] } }>(events[0]!.payload).data;
      assert.equal(data.payment.status, 'REFUNDED');
      assert.deepEqual(data.refunds.map((r) => [r.amount, r.status]), [['0.0003', 'CONFIRMED']]);
      await ok(['refund', 'broadcast', '--signed', `${latePlan}.signed.json`]);
      assert.equal((await em.find(WebhookEvent, { paymentId: late.id, type: 'payment.refunded' })).length, 1, 'the event is written once');
      assert.equal(await em.count(WebhookDelivery, { event: events[0]!.id }), 0, 'this merchant has no webhook URL: the event is kept for replay');
      await refused(['refund', 'plan', '--payment', late.id, '--to', LATE_BUYER, '--amount', '0.0001', '--out', join(dir, 'x.json')], /already REFUNDED in full/);

      // 4. A swept deposit holds nothing to refund from.
      await refused(['refund', 'plan', '--payment', swept.id, '--to', BUYER, '--amount', '0.0001', '--out', join(dir, 'x.json')], /was swept on \d{4}-\d\d-\d\d \(sweep plan c{16}…\): its funds are in your cold wallet, not on the deposit; refund from a wallet address with --from-address/);

      // The merchant's view of the payment's refunds: our addition, a route of its own (the
      // payment itself keeps the specification's shape).
      const got = await gw.signed('GET', `/api/v1/payments/${over.id}/refunds`);
      assert.equal(got.status, 200);
      assert.ok(!('refunds' in (await gw.signed('GET', `/api/v1/payments/${over.id}`)).json.data));
      const refunds = got.json.data.items as { amount: string; status: string; address: string; from: string; transactionHash: string; fee: string; feeCurrency: string }[];
      assert.equal(refunds.length, 1);
      assert.deepEqual([refunds[0]!.amount, refunds[0]!.status, refunds[0]!.address, refunds[0]!.from, refunds[0]!.feeCurrency], ['0.0001', 'CONFIRMED', BUYER, 'deposit', 'BTC']);
      assert.match(refunds[0]!.transactionHash, /^[0-9a-f]{64}$/);
      assert.ok(Number(refunds[0]!.fee) > 0);
      assert.equal((await gw.signed('GET', `/api/v1/payments/${late.id}`)).json.data.status, 'REFUNDED');

      if (dialect !== 'sqlite') return;
      // 5. The swept payment refunded from a wallet address of the same seed (its change chain, m/84'/1'/0'/1/0).
      const wallet = bitcoin.payments.p2wpkh({ pubkey: Buffer.from(ACCOUNT.derive(1).derive(0).publicKey), network: regtest }).address!;
      sim.mine([[{ address: wallet, sats: 80_000n }]]);
      const fromWallet = join(dir, 'refund-wallet.json');
      const walletPlan = json<{ plan: SweepPlan }>((await ok(['refund', 'plan', '--payment', swept.id, '--to', BUYER, '--amount', '0.0002', '--from-address', wallet, '--out', fromWallet, '--json'])).stdout).plan;
      assert.deepEqual([walletPlan.deposits[0]!.address, walletPlan.deposits[0]!.source, walletPlan.deposits[0]!.derivationIndex], [wallet, 'wallet', null]);
      await signAndSend(fromWallet, BUYER);
      assert.equal(paidTo(sim.posted, BUYER), 30_000n, 'the buyer now has both refunds');
      await refused(['refund', 'plan', '--payment', swept.id, '--to', BUYER, '--amount', '0.0001', '--from-address', d0, '--out', join(dir, 'x.json')], /is a deposit address of the pool/);

      const list = json<{ paymentId: string; state: string; fromKind: string }[]>((await ok(['refund', 'list', '--json'])).stdout);
      assert.deepEqual(list.map((r) => [r.paymentId, r.state, r.fromKind]), [[over.id, 'CONFIRMED', 'deposit'], [late.id, 'CONFIRMED', 'deposit'], [swept.id, 'CONFIRMED', 'wallet']]);

      // The accountant's export, read back as a spreadsheet reads a CSV: amounts are numbers.
      const day = new Date().toISOString().slice(0, 10);
      const csv = (await ok(['report', '--from', day, '--to', day])).stdout;
      const sheet = XLSX.read(csv, { type: 'string', raw: false }).Sheets.Sheet1!;
      const rows = XLSX.utils.sheet_to_json<Record<string, unknown>>(sheet, { raw: true });
      const kinds = rows.map((r) => r.kind).filter((k) => k !== 'total');
      assert.deepEqual([...kinds].sort(), ['late_funds', 'payment', 'payment', 'refund', 'refund', 'refund', 'sweep']);
      const paymentRow = rows.find((r) => r.payment_id === over.id && r.kind === 'payment')!;
      assert.equal(paymentRow.amount, 0.0006);
      // What was asked, what arrived and the difference, in coins and at the priced rate.
      assert.deepEqual([paymentRow.expected, paymentRow.difference, paymentRow.expected_fiat, paymentRow.difference_fiat], [0.0005, 0.0001, 32.5, 6.5]);
      assert.deepEqual([paymentRow.invoice_id, paymentRow.invoice_reference, paymentRow.invoice_currency], [invoice.id, 'INV-REFUND-0001', invoice.currency]);
      assert.equal(paymentRow.order_id, invoice.orderId);
      // A refund carries its payment's references and its fiat value at the payment's rate.
      const overRefund = rows.find((r) => r.payment_id === over.id && r.kind === 'refund')!;
      assert.deepEqual([overRefund.reference, overRefund.invoice_id, overRefund.order_id, overRefund.fiat_currency, overRefund.fiat_amount, overRefund.rate], ['PAY-REFUND-0000', invoice.id, invoice.orderId, 'USD', 6.5, 65000.5]);
      // The totals block: summing the rows as a spreadsheet would gives the total line (received + late − refunded).
      const btc = rows.filter((r) => r.coin === 'BTC' && r.kind !== 'total');
      const sumOf = (kind: string, col: string) => btc.filter((r) => r.kind === kind).reduce((a, r) => a + Number(r[col] ?? 0), 0);
      const coinTotal = rows.find((r) => r.kind === 'total' && r.coin === 'BTC')!;
      assert.equal(Number((sumOf('payment', 'amount') + sumOf('late_funds', 'amount') - sumOf('refund', 'amount')).toFixed(8)), coinTotal.amount);
      const usdTotal = rows.find((r) => r.kind === 'total' && r.fiat_currency === 'USD' && !r.coin)!;
      const usd = (kind: string) => rows.filter((r) => r.kind === kind && r.fiat_currency === 'USD').reduce((a, r) => a + Number(r.fiat_amount ?? 0), 0);
      assert.equal(Number((usd('payment') + usd('late_funds') - usd('refund')).toFixed(2)), usdTotal.fiat_amount);
      assert.equal(paymentRow.fiat_amount, 39.0, '0.0006 BTC at 65000.5 USD = 39.0003, rounded to the cent');
      assert.equal(paymentRow.rate, 65000.5);
      assert.equal(paymentRow.rate_source, 'static');
      const refundRow = rows.find((r) => r.payment_id === late.id && r.kind === 'refund')!;
      assert.equal(refundRow.amount, 0.0003);
      assert.equal(typeof refundRow.fee, 'number');
      for (const r of rows.filter((x) => x.coin)) assert.equal(typeof r.amount, 'number', `${r.kind}: amount is a number cell`);
      // Exact in the file: the text is the decimal string, whatever a spreadsheet's floats do with it.
      assert.match(csv, /^kind,time,chain,network,coin,amount,fiat_currency,fiat_amount,rate,/);
      assert.match(csv, /payment,[^,]+,bitcoin,REGTEST,BTC,0\.0006,USD,39\.00,65000\.5,static,/);
      const asJson = json<{ rows: { kind: string; amount: string }[]; totals: { coins: { coin: string; net: string }[]; fiat: { currency: string; net: string }[] } }>((await ok(['report', '--from', day, '--to', day, '--format', 'json'])).stdout);
      assert.deepEqual(asJson.rows.map((r) => r.kind).sort(), [...kinds].sort());
      assert.ok(asJson.rows.every((r) => typeof r.amount === 'string'));
      assert.equal(Number(asJson.totals.coins.find((c) => c.coin === 'BTC')!.net), coinTotal.amount);
      await refused(['report', '--from', 'yesterday', '--to', day], /--from yesterday: not a date/);
    });
  });
}
