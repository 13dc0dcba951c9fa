import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Address, internal, toNano } from '@ton/core';
import { UsageError } from '../../src/domain/errors.ts';
import { createLogger } from '../../src/logger.ts';
import type { RefundAsk, SweepCandidate, SweepPlan } from '../../src/families/sweep.ts';
import { encodeMessage, JETTON_TRANSFER_VALUE, jettonTransferBody, MODE_CARRY_ALL, ORDER_FEE, type TonSweepPayload } from '../../src/families/ton/sweep-messages.ts';
import { tonSweepPlanner } from '../../src/families/ton/sweep-plan.ts';
import { tonSweepStale } from '../../src/families/ton/sweep-send.ts';
import { tonSweepSigner } from '../../src/families/ton/sweep-sign.ts';
import { tonKeyAt } from '../../src/families/ton/wallet-v4.ts';
import { jettonBalanceOf, startTonNode, tonBalanceOf, tonBroadcastAll, tonKeysFor, tonPlanOf, tonWorld, type TonNode } from '../helpers/toncenter-node.ts';

// TON refunds on TON's real TVM (@ton/sandbox with TEP-74 jetton code behind a toncenter v3
// server, as the sweep tests): the planner moves exactly the refund from one wallet v4r2, the
// offline signer derives its key from a seed and checks the order, the sender broadcasts and
// follows it (and a fee payer's top-up before it) to its masterchain block.

const log = createLogger('silent');

const usdtAsk = (ton: TonNode, amount: bigint): RefundAsk => ({ symbol: 'USDT', token: ton.usdt.master.toString({ bounceable: true }), decimals: 6, amount });
const tonAsk = (amount: bigint): RefundAsk => ({ symbol: 'TON', token: null, decimals: 9, amount });
/** A buyer wallet never deployed: what it receives is its whole balance, no compute fee taken. */
const newBuyer = () => tonKeyAt(randomBytes(64), 0, false).address;

async function setup(t: { after(fn: () => unknown): void }) {
  const ton = await startTonNode();
  t.after(() => ton.close());
  const w = tonWorld(ton);
  const seed = randomBytes(64);
  /** planner → plan file → signer (keys from the seed) → sender, as `refund plan`, `sweep sign`, `refund broadcast` do. */
  const plan = async (candidate: SweepCandidate, refund: RefundAsk, to: string, feePayer: string | null = null): Promise<SweepPlan> => {
    const parts = await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [candidate], to, feePayer, min: {}, refund });
    return tonPlanOf(parts, to, feePayer, { kind: 'refund', refund: { paymentId: 'pay_test', symbol: refund.symbol, token: refund.token, decimals: refund.decimals, amount: refund.amount.toString() } });
  };
  const run = async (p: SweepPlan) => {
    assert.equal(await tonSweepStale(w.network, w.config, p), null, 'not stale before the send');
    const states = await tonBroadcastAll(w, p, tonSweepSigner.sign(p, tonKeysFor(seed, p)));
    for (const [id, s] of states) assert.equal(s.state, 'final', `${id}: ${s.error ?? ''}`);
    return states;
  };
  const at = (address: string) => Address.parse(address);
  return { ton, w, seed, plan, run, at };
}

test('ton refund: an overpaid USDT deposit without TON refunds the excess, topped up by the fee payer; the rest of the USDT stays', async (t) => {
  const { ton, seed, plan, run, at } = await setup(t);
  const payer = tonKeyAt(seed, 0, false).address;
  const deposit = tonKeyAt(seed, 1, false).address;
  const buyer = newBuyer();
  await ton.sendTon(at(payer), toNano('2'), false);
  await ton.sendJetton(ton.usdt, at(deposit), 30_000_000n, 0n);

  const p = await plan({ address: deposit, derivationIndex: 1, source: 'ab12cd34' }, usdtAsk(ton, 10_000_000n), buyer, payer);
  const d = p.deposits[0]!;
  assert.deepEqual(d.moves.map((m) => [m.symbol, m.amount]), [['USDT', '10000000']]);
  assert.equal(d.fee, (ORDER_FEE + JETTON_TRANSFER_VALUE + ORDER_FEE).toString(), 'both orders\' fees are stated, the fee payer\'s top-up order included');
  assert.deepEqual(d.leftBehind.map((l) => [l.holding.symbol, l.holding.amount, l.reason]), [['USDT', '20000000', 'not refunded: the rest of the USDT stays on the address']]);
  assert.deepEqual(p.transactions.map((tx) => [tx.id, tx.signers, tx.after]), [['tx-0', [payer], []], ['tx-1', [deposit], ['tx-0']]]);
  const [message] = (p.transactions[1]!.payload as TonSweepPayload).messages;
  assert.equal(message!.mode, 1, 'mode 1, not 128');

  const states = await run(p);
  assert.equal(await jettonBalanceOf(ton, ton.usdt, at(buyer)), 10_000_000n, 'the buyer received exactly the refund');
  assert.equal(await jettonBalanceOf(ton, ton.usdt, at(deposit)), 20_000_000n, 'the remainder stays');
  const kept = await tonBalanceOf(ton, at(deposit));
  assert.ok(kept > 0n && kept < ORDER_FEE + JETTON_TRANSFER_VALUE, `the top-up's unused gas came back to the deposit: ${kept}`);
  t.diagnostic(`fees (nanoton): top-up ${states.get('tx-0')?.fee}, refund order ${states.get('tx-1')?.fee}; the deposit kept ${kept} of the ${ORDER_FEE + JETTON_TRANSFER_VALUE} topped up`);
});

test('ton refund: an overpaid TON deposit pays its order out of what stays; the buyer receives exactly the refund', async (t) => {
  const { ton, seed, plan, run, at } = await setup(t);
  const deposit = tonKeyAt(seed, 2, false).address;
  const buyer = newBuyer();
  await ton.sendTon(at(deposit), toNano('2'), false);
  const before = await tonBalanceOf(ton, at(deposit));

  const p = await plan({ address: deposit, derivationIndex: 2, source: 'ab12cd34' }, tonAsk(toNano('0.5')), buyer);
  const d = p.deposits[0]!;
  assert.deepEqual(d.moves.map((m) => m.amount), [toNano('0.5').toString()]);
  assert.equal(d.fee, ORDER_FEE.toString());
  assert.deepEqual(d.leftBehind.map((l) => l.holding.amount), [(before - toNano('0.5') - ORDER_FEE).toString()]);
  assert.equal(p.transactions.length, 1, 'no fee payer: one order');
  await run(p);
  assert.equal(await tonBalanceOf(ton, at(buyer)), toNano('0.5'));
  const kept = await tonBalanceOf(ton, at(deposit));
  assert.ok(kept >= before - toNano('0.5') - ORDER_FEE && kept < before - toNano('0.5'), `the remainder stays, less the order's fee: ${kept}`);
});

test('ton refund: a full TON refund pays the fee out of the refund; a full USDT refund is paid by the deposit\'s own TON', async (t) => {
  const { ton, seed, plan, run, at } = await setup(t);
  const tonDeposit = tonKeyAt(seed, 3, false).address;
  const usdtDeposit = tonKeyAt(seed, 4, false).address;
  const buyer1 = newBuyer();
  const buyer2 = newBuyer();
  await ton.sendTon(at(tonDeposit), toNano('1'), false);
  await ton.sendJetton(ton.usdt, at(usdtDeposit), 5_000_000n, 0n);
  await ton.sendTon(at(usdtDeposit), toNano('1'), false);

  const all = await tonBalanceOf(ton, at(tonDeposit));
  const full = await plan({ address: tonDeposit, derivationIndex: 3, source: 'ab12cd34' }, tonAsk(all), buyer1);
  assert.deepEqual(full.deposits[0]!.moves.map((m) => m.amount), [(all - ORDER_FEE).toString()], 'the amount less the fee');
  assert.deepEqual(full.deposits[0]!.leftBehind, []);
  await run(full);
  assert.equal(await tonBalanceOf(ton, at(buyer1)), all - ORDER_FEE);
  assert.ok((await tonBalanceOf(ton, at(tonDeposit))) < ORDER_FEE, 'only what the fee did not use stays');

  const tokens = await plan({ address: usdtDeposit, derivationIndex: 4, source: 'ab12cd34' }, usdtAsk(ton, 5_000_000n), buyer2);
  assert.equal(tokens.deposits[0]!.fee, (ORDER_FEE + JETTON_TRANSFER_VALUE).toString());
  assert.deepEqual(tokens.deposits[0]!.leftBehind.map((l) => l.holding.symbol), ['TON'], 'only TON stays');
  await run(tokens);
  assert.equal(await jettonBalanceOf(ton, ton.usdt, at(buyer2)), 5_000_000n);
  assert.equal(await jettonBalanceOf(ton, ton.usdt, at(usdtDeposit)), 0n);
  assert.equal(await tonBalanceOf(ton, at(buyer2)), 0n, 'the buyer gets the jettons and no TON (no forward amount)');
  assert.ok((await tonBalanceOf(ton, at(usdtDeposit))) > toNano('0.95'), 'the transfer\'s excess gas came back to the deposit');
});

test('ton refund: more than the address holds, a USDT refund without TON for gas, or a TON refund smaller than its fee is refused by the planner', async (t) => {
  const { ton, seed, plan, at } = await setup(t);
  const deposit = tonKeyAt(seed, 5, false).address;
  const poor = tonKeyAt(seed, 6, false).address;
  const buyer = newBuyer();
  await ton.sendJetton(ton.usdt, at(deposit), 25_000_000n, 0n);
  await ton.sendTon(at(deposit), toNano('0.02'), false);
  await ton.sendTon(at(poor), toNano('0.005'), false);
  const candidate = { address: deposit, derivationIndex: 5, source: 'ab12cd34' };
  const refused = (pattern: RegExp) => (err: unknown) => err instanceof UsageError && pattern.test(err.message);

  await assert.rejects(plan(candidate, usdtAsk(ton, 25_000_001n), buyer), refused(/holds 25000000 USDT \(atomic\), less than the refund of 25000001$/));
  await assert.rejects(plan(candidate, tonAsk(toNano('0.03')), buyer), refused(/holds \d+ TON \(atomic\), less than the refund of 30000000$/));
  await assert.rejects(plan(candidate, usdtAsk(ton, 1_000_000n), buyer), refused(/less than the 60000000 a jetton transfer's order needs .*: pass --fee-payer/));
  const poorBalance = await tonBalanceOf(ton, at(poor));
  await assert.rejects(plan({ address: poor, derivationIndex: 6, source: 'ab12cd34' }, tonAsk(poorBalance), buyer), refused(/leaves too little for the order's fee of 10000000, and is itself smaller: pass --fee-payer/));
});

test('ton refund: from a merchant wallet (source "wallet", no derivation index) the signer finds the key by searching the seed; a fee payer tops it up', async (t) => {
  const { ton, seed, plan, run, at } = await setup(t);
  const payer = tonKeyAt(seed, 0, false).address;
  const merchant = tonKeyAt(seed, 17, false).address;
  const buyer = newBuyer();
  await ton.sendTon(at(payer), toNano('1'), false);
  await ton.sendTon(at(merchant), toNano('3'), false);
  const wallet = { address: merchant, derivationIndex: null, source: 'wallet' };

  const p = await plan(wallet, tonAsk(toNano('1')), buyer, payer);
  assert.equal(p.deposits[0]!.fee, (2n * ORDER_FEE).toString(), 'the refund order and the fee payer\'s');
  assert.throws(() => tonSweepSigner.deriveKey(seed, wallet, p, 10), /is not the wallet v4r2 of any of the seed's first 10 keys \(m\/44'\/607'\/0' … m\/44'\/607'\/9'\)/);
  assert.equal(tonSweepSigner.deriveKey(seed, wallet, p, 20).address, merchant);
  await run(p);
  assert.equal(await tonBalanceOf(ton, at(buyer)), toNano('1'));
  assert.ok((await tonBalanceOf(ton, at(merchant))) >= toNano('2'), 'the top-up paid the order: the merchant keeps all the rest');
});

test('ton refund signer: a refund plan whose destination, amount, mode or excess was changed, or whose top-up grew, is refused', async (t) => {
  const { ton, seed, plan, at } = await setup(t);
  const payer = tonKeyAt(seed, 0, false).address;
  const deposit = tonKeyAt(seed, 7, false).address;
  const buyer = newBuyer();
  const thief = ton.attacker.address;
  await ton.sendTon(at(payer), toNano('1'), false);
  await ton.sendTon(at(deposit), toNano('1'), false);
  await ton.sendJetton(ton.usdt, at(deposit), 9_000_000n, 0n);
  const candidate = { address: deposit, derivationIndex: 7, source: 'ab12cd34' };
  const usdt = await plan(candidate, usdtAsk(ton, 4_000_000n), buyer, payer);
  const native = await plan(candidate, tonAsk(toNano('0.3')), buyer);
  const keys = tonKeysFor(seed, usdt);
  assert.equal(tonSweepSigner.sign(usdt, keys).length, 2, 'the untouched plan signs');
  assert.equal(tonSweepSigner.sign(native, tonKeysFor(seed, native)).length, 1);

  const tamper = (p: SweepPlan, edit: (payload: TonSweepPayload) => void, tx = p.transactions.length - 1) => {
    const copy = structuredClone(p);
    edit(copy.transactions[tx]!.payload as TonSweepPayload);
    return () => tonSweepSigner.sign(copy, tonKeysFor(seed, copy));
  };
  const swap = (message: string, mode = 1) => (payload: TonSweepPayload) => {
    payload.messages[0] = { ...payload.messages[0]!, message, mode };
  };
  const jettonWallet = await ton.usdt.walletOf(at(deposit));
  const transfer = (destination: Address, amount: bigint, response: Address = at(deposit), forward = 0n) =>
    encodeMessage(internal({ to: jettonWallet, value: JETTON_TRANSFER_VALUE, bounce: true, body: jettonTransferBody({ queryId: 1n, amount, destination, responseDestination: response, forwardTonAmount: forward }) }));

  // The buyer changed in the plan: the order still pays the first one.
  assert.throws(() => tonSweepSigner.sign({ ...usdt, to: thief.toString() }, keys), /the jettons go to .*not to the plan's destination .*refused/);
  assert.throws(() => tonSweepSigner.sign({ ...native, to: thief.toString() }, tonKeysFor(seed, native)), /the TON goes to .*not to the plan's destination .*refused/);
  // The jettons to someone else, more of them, the excess elsewhere, or TON forwarded beside them.
  assert.throws(tamper(usdt, swap(transfer(thief, 4_000_000n))), /the jettons go to .*refused/);
  assert.throws(tamper(usdt, swap(transfer(at(buyer), 9_000_000n))), /moves 9000000 of jetton .*the summary shows 4000000 and the refund is 4000000: refused/);
  assert.throws(tamper(usdt, swap(transfer(at(buyer), 4_000_000n, thief))), /the excess TON goes elsewhere .*refused/);
  assert.throws(tamper(usdt, swap(transfer(at(buyer), 4_000_000n, at(deposit), 1n))), /forwards TON to the buyer .*refused/);
  // The summary and the refund raised together: the order still moves 4 USDT.
  const raised = { ...usdt, refund: { ...usdt.refund!, amount: '9000000' }, deposits: usdt.deposits.map((d) => ({ ...d, moves: d.moves.map((m) => ({ ...m, amount: '9000000' })) })) };
  assert.throws(() => tonSweepSigner.sign(raised, keys), /moves 4000000 of jetton .*the summary shows 9000000 .*refused/);
  // TON: more than the summary, or everything with mode 128.
  assert.throws(tamper(native, swap(encodeMessage(internal({ to: at(buyer), value: toNano('0.9'), bounce: false })))), /sends 900000000 nanoton, the summary shows 300000000: refused/);
  assert.throws(tamper(native, swap(encodeMessage(internal({ to: at(buyer), value: 0n, bounce: false })), MODE_CARRY_ALL)), /never sends with mode 128 .*refused/);
  // The fee payer's top-up grown, or sent elsewhere.
  assert.throws(tamper(usdt, swap(encodeMessage(internal({ to: at(deposit), value: toNano('0.5'), bounce: false }))), 0), /sends the address 500000000 nanoton, more than the refund's gas 60000000: refused/);
  assert.throws(tamper(usdt, swap(encodeMessage(internal({ to: thief, value: toNano('0.01'), bounce: false }))), 0), /which is not the refund's address: refused/);
});
