import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { recordRefund } from '../../src/store/refunds.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { cliIn, leasedPayment, regtestAddress } from '../helpers/bitcoin-pool.ts';
import { skipUnless } from '../helpers/databases.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { paidInvoice } from '../helpers/ledger-rows.ts';

// Every amount a person reads from the CLI is in coin units with its symbol; JSON keeps atomic
// units under names that say so (docs/operations.md#amounts-in-cli-output). A ledger is written by
// hand with amounts whose atomic digits are distinctive, then `transfers list`, `status`,
// `refund list`, `sweep list`, `sweep show` and `report` run through the binary, human and JSON.

const USDC_ETHEREUM = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const COLD = regtestAddress(0x61);
const BUYER = regtestAddress(0x62);
const DEPOSITS = [regtestAddress(0x63), regtestAddress(0x64)] as const;

/** Atomic amounts of the ledger and the coin units a person must see instead. */
const AMOUNTS = {
  credited: ['4999973', '0.04999973 BTC'],
  late: ['3000071', '0.03000071 BTC'],
  usdc: ['24500017', '24.500017 USDC'],
  swept: ['4900017', '0.04900017 BTC'],
  sweepFee: ['10237', '0.00010237 BTC'],
  refund: ['1000033', '0.01000033 BTC'],
  refundFee: ['8779', '0.00008779 BTC'],
} as const;
const ATOMIC = Object.values(AMOUNTS).map(([atomic]) => atomic);

/** An atomic figure standing alone (not the tail of a decimal such as 0.04900017). */
const bare = (atomic: string) => new RegExp(`(?<![\\d.])${atomic}(?![\\d])`);
/** A whole number of four or more digits right beside a coin symbol: atomic units passed off as coins. */
const ATOMIC_BESIDE_SYMBOL = /(?<![\d.])\d{4,}\s+(BTC|ETH|USDC|USDT|SOL|TON|TRX)\b/;

function plan(kind: 'sweep' | 'refund', id: string, deposit: string, to: string, moved: string, fee: string, refundOf?: string): SweepPlan {
  return {
    format: 'chaingate-sweep-plan/1',
    id,
    kind,
    chain: 'bitcoin',
    family: 'bitcoin',
    network: 'REGTEST',
    testnet: true,
    to,
    feePayer: null,
    createdAt: new Date().toISOString(),
    deposits: [
      {
        address: deposit,
        derivationIndex: 0,
        source: 'test',
        holdings: [{ symbol: 'BTC', token: null, decimals: 8, amount: moved }],
        moves: [{ symbol: 'BTC', token: null, decimals: 8, amount: moved }],
        fee,
        leftBehind: [],
      } as SweepPlan['deposits'][number],
    ],
    ...(refundOf ? { refund: { paymentId: refundOf, symbol: 'BTC', token: null, decimals: 8, amount: moved } } : {}),
    skipped: [],
    transactions: [],
  };
}

test('transfers, status, refund, sweep and report print coin units with the symbol; JSON keeps atomic units, named so', { skip: await skipUnless('sqlite') }, async (t) => {
  const gw = await startTestDaemon(t, 'sqlite');
  const { ok } = cliIn({ CHAINGATE_DATABASE_URL: gw.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64) }, mkdtempSync(join(tmpdir(), 'chaingate-units-')));
  await gw.seedPool('bitcoin', [...DEPOSITS], true);
  const em = gw.common.db.em();
  const invoice = paidInvoice(em, gw.merchant.id, 'INV-UNITS-0001');
  const pricing = { mode: 'convert', rate: '65000.5', source: 'static', fiat: 'USD', at: new Date().toISOString() };
  const paid = await leasedPayment(em, invoice, gw.merchant.id, { referenceId: 'PAY-UNITS-0001', status: 'COMPLETED', address: DEPOSITS[0], amount: '0.05', receivedAmount: '0.04999973', requiredConfirmations: 1, transactionHash: 'ab'.repeat(32), completedAt: new Date(), metadata: { pricing } });
  const late = await leasedPayment(em, invoice, gw.merchant.id, { referenceId: 'PAY-UNITS-0002', status: 'EXPIRED', address: DEPOSITS[1], amount: '0.05', receivedAmount: '0', requiredConfirmations: 1, metadata: { pricing } });
  const transfer = (txHash: string, fields: Partial<ObservedTransfer>) =>
    em.create(ObservedTransfer, { chain: 'bitcoin', network: 'REGTEST', txHash, logIndex: 0, blockNumber: '7', blockHash: '00'.repeat(32), fromAddress: null, tokenAddress: null, paymentId: null, note: null, ...fields } as ObservedTransfer);
  transfer('ab'.repeat(32), { toAddress: DEPOSITS[0], symbol: 'BTC', amount: AMOUNTS.credited[0], paymentId: paid.id, status: 'CREDITED' });
  transfer('cd'.repeat(32), { toAddress: DEPOSITS[1], symbol: 'BTC', amount: AMOUNTS.late[0], paymentId: late.id, status: 'LATE', note: 'sent after the payment window closed' });
  transfer(`0x${'ef'.repeat(32)}`, { chain: 'ethereum', network: 'MAINNET', toAddress: `0x${'11'.repeat(20)}`, tokenAddress: USDC_ETHEREUM, symbol: 'USDC', amount: AMOUNTS.usdc[0], status: 'UNMATCHED' });
  await em.flush();

  // A final sweep of the first deposit, and a confirmed refund to the buyer from the second.
  const sweep = plan('sweep', '5e'.repeat(32), DEPOSITS[0], COLD, AMOUNTS.swept[0], AMOUNTS.sweepFee[0]);
  const refund = plan('refund', 'fd'.repeat(32), DEPOSITS[1], BUYER, AMOUNTS.refund[0], AMOUNTS.refundFee[0], late.id);
  const now = new Date();
  await gw.common.db.write(async (x) => {
    for (const [p, txid, fee] of [[sweep, '77'.repeat(32), AMOUNTS.sweepFee[0]], [refund, '88'.repeat(32), AMOUNTS.refundFee[0]]] as const) {
      await x.run('insert into sweep_plan (id, chain, network, is_testnet, kind, to_address, fee_payer, body, created_at) values (?, ?, ?, ?, ?, ?, null, ?, ?)', [p.id, 'bitcoin', 'REGTEST', true, p.kind, p.to, JSON.stringify(p), now]);
      await x.run(
        `insert into sweep_tx (id, plan_id, tx_key, chain, network, is_testnet, txid, raw, deposits, moves, fee, status, error, attempts, sent_at, final_at, created_at, updated_at)
         values (?, ?, 'tx-0', 'bitcoin', 'REGTEST', ?, ?, '00', ?, ?, ?, 'FINAL', null, 1, ?, ?, ?, ?)`,
        [`sweeptx${p.kind}`.padEnd(32, '0'), p.id, true, txid, JSON.stringify(p.deposits.map((d) => d.address)), JSON.stringify({ BTC: p.deposits[0]!.moves[0]!.amount }), fee, now, now, now, now],
      );
    }
    await recordRefund(x, { id: 'refund0000000000000000000000001', paymentId: late.id, planId: refund.id, chain: 'bitcoin', network: 'REGTEST', isTestnet: true, symbol: 'BTC', tokenAddress: null, decimals: 8, amount: AMOUNTS.refund[0], toAddress: BUYER, fromAddress: DEPOSITS[1], fromKind: 'deposit', feeFromPayment: '0', createdAt: now });
  });

  const day = now.toISOString().slice(0, 10);
  const human: Record<string, string> = {};
  for (const args of [['transfers', 'list'], ['status'], ['refund', 'list'], ['sweep', 'list'], ['sweep', 'show', sweep.id.slice(0, 12)], ['report', '--from', day, '--to', day]]) {
    human[args.slice(0, 2).join(' ')] = (await ok(args)).stdout;
  }
  // The coin units each command must show.
  const shows: Record<string, string[]> = {
    'transfers list': [AMOUNTS.credited[1], AMOUNTS.late[1], AMOUNTS.usdc[1]],
    status: [AMOUNTS.swept[1]],
    'refund list': [AMOUNTS.refund[1], AMOUNTS.refundFee[1]],
    'sweep list': [AMOUNTS.swept[1], AMOUNTS.sweepFee[1]],
    'sweep show': [AMOUNTS.swept[1], AMOUNTS.sweepFee[1]],
  };
  for (const [command, text] of Object.entries(human)) {
    assert.doesNotMatch(text, ATOMIC_BESIDE_SYMBOL, `${command}:\n${text}`);
    for (const atomic of ATOMIC) assert.doesNotMatch(text, bare(atomic), `${command} prints the atomic ${atomic}:\n${text}`);
    for (const coins of shows[command] ?? []) assert.ok(text.includes(coins), `${command} shows ${coins}:\n${text}`);
  }
  // The accountant's CSV: amounts in coin units in their own column, the coin beside them.
  const csv = human['report --from']!.split('\n').map((line) => line.split(','));
  const [head, ...rows] = csv;
  const col = (name: string) => head!.indexOf(name);
  const cells = (kind: string) => rows.filter((r) => r[col('kind')] === kind).map((r) => [r[col('coin')], r[col('amount')], r[col('fee')], r[col('fee_coin')]]);
  assert.deepEqual(cells('payment'), [['BTC', '0.04999973', '', '']]);
  assert.deepEqual(cells('sweep'), [['BTC', '0.04900017', '0.00010237', 'BTC']]);
  assert.deepEqual(cells('refund'), [['BTC', '0.01000033', '0.00008779', 'BTC']]);

  // JSON: atomic strings, under names that say so.
  type Json = Record<string, unknown>;
  const json = async <T>(args: string[]): Promise<T> => JSON.parse((await ok([...args, '--json'])).stdout) as T;
  const transfers = await json<Json[]>(['transfers', 'list']);
  const lateRow = transfers.find((r) => r.status === 'LATE')!;
  assert.deepEqual([lateRow.amountAtomic, lateRow.symbol, lateRow.decimals, 'amount' in lateRow], [AMOUNTS.late[0], 'BTC', 8, false]);
  const usdcRow = transfers.find((r) => r.symbol === 'USDC')!;
  assert.deepEqual([usdcRow.amountAtomic, usdcRow.decimals], [AMOUNTS.usdc[0], 6]);

  const status = await json<{ sweeps: Json[] }>(['status']);
  assert.deepEqual(status.sweeps, [{ chain: 'bitcoin', network: 'TESTNET4', isTestnet: true, symbol: 'BTC', decimals: 8, swept: '0.04900017', pending: '0', sweptAtomic: AMOUNTS.swept[0], pendingAtomic: '0' }]);

  const [refundRow] = await json<Json[]>(['refund', 'list']);
  assert.deepEqual([refundRow!.amountAtomic, refundRow!.feeAtomic, refundRow!.feeSymbol, refundRow!.symbol, refundRow!.decimals, 'amount' in refundRow!, 'fee' in refundRow!], [AMOUNTS.refund[0], AMOUNTS.refundFee[0], 'BTC', 'BTC', 8, false, false]);

  const [listed] = await json<{ units: Json; txs: { moves: Json; fee: string; amounts: Json }[]; amounts: Json }[]>(['sweep', 'list']);
  assert.deepEqual(listed!.units, { moves: 'atomic', fee: 'atomic' });
  assert.deepEqual([listed!.txs[0]!.moves, listed!.txs[0]!.fee], [{ BTC: AMOUNTS.swept[0] }, AMOUNTS.sweepFee[0]]);
  assert.deepEqual(listed!.txs[0]!.amounts, { moves: [AMOUNTS.swept[1]], fee: AMOUNTS.sweepFee[1] });
  assert.deepEqual(listed!.amounts, { moved: [AMOUNTS.swept[1]], fees: AMOUNTS.sweepFee[1] });

  const shown = await json<{ units: Json; plan: SweepPlan; transactions: { moves: Json; amounts: Json }[] }>(['sweep', 'show', sweep.id]);
  assert.deepEqual(shown.units, { plan: 'atomic', moves: 'atomic', fee: 'atomic' });
  assert.equal(shown.plan.deposits[0]!.fee, AMOUNTS.sweepFee[0]);
  assert.deepEqual(shown.transactions[0]!.moves, { BTC: AMOUNTS.swept[0] });
  assert.deepEqual(shown.transactions[0]!.amounts, { moves: [AMOUNTS.swept[1]], fee: AMOUNTS.sweepFee[1] });
});
