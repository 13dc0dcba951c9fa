import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Address, beginCell, Cell, internal, toNano } from '@ton/core';
import { createLogger } from '../../src/logger.ts';
import { encodeMessage, jettonTransferBody, type TonSweepPayload } from '../../src/families/ton/sweep-messages.ts';
import { ORDER_FEE, tonSweepPlanner } from '../../src/families/ton/sweep-plan.ts';
import { tonSweepSender, tonSweepStale } from '../../src/families/ton/sweep-send.ts';
import { tonSweepSigner } from '../../src/families/ton/sweep-sign.ts';
import { tonKeyAt } from '../../src/families/ton/wallet-v4.ts';
import { jettonBalanceOf, startTonNode, tonBalanceOf, tonBroadcastAll, tonKeysFor, tonPlanOf, tonWorld, type TonNode } from '../helpers/toncenter-node.ts';

// The TON sweep on TON's real TVM (@ton/sandbox with TEP-74 jetton code behind a toncenter v3
// server, test/helpers/toncenter-node.ts): plan over the API, sign with keys from a seed as the
// offline machine does, broadcast and follow each order to its masterchain block. Through the
// family's modules; the CLI drives the same three calls.

const log = createLogger('silent');

const world = tonWorld;
const planOf = tonPlanOf;
const keysFor = tonKeysFor;
const jettonBalance = (ton: TonNode, owner: Address) => jettonBalanceOf(ton, ton.usdt, owner);
const balance = tonBalanceOf;
const broadcastAll = tonBroadcastAll;

test('ton sweep: uninit deposits are deployed by their first order; TON and USDT reach the cold wallet, gas topped up by the fee payer', async (t) => {
  const ton = await startTonNode();
  t.after(() => ton.close());
  const w = world(ton);
  const seed = randomBytes(64);
  const payer = tonKeyAt(seed, 0, false);
  const deposits = Array.from({ length: 6 }, (_, i) => tonKeyAt(seed, i + 1, false).address);
  const at = (i: number) => Address.parse(deposits[i]!);
  const cold = tonKeyAt(randomBytes(64), 0, false).address; // a wallet never deployed
  await ton.sendTon(Address.parse(payer.address), toNano('3'), false);
  // 0: TON only; 1: USDT only (no TON at all); 2: USDT and enough TON for its own gas; 3: TON below the
  // order's fee; 4: a look-alike jetton only; 5: never paid.
  await ton.sendTon(at(0), toNano('2'), false);
  await ton.sendJetton(ton.usdt, at(1), 25_000_000n, 0n);
  await ton.sendJetton(ton.usdt, at(2), 40_000_000n, 0n);
  await ton.sendTon(at(2), toNano('1'), false);
  await ton.sendTon(at(3), toNano('0.005'), false);
  await ton.sendJetton(ton.lookAlike, at(4), 99_000_000n, 0n);
  const coldTonBefore = await balance(ton, Address.parse(cold));

  const candidates = deposits.map((a) => ({ address: a, derivationIndex: null, source: 'file' }));
  const parts = await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: payer.address, min: {} });
  const plan = planOf(parts, cold, payer.address);
  assert.deepEqual(
    plan.deposits.map((d) => deposits.indexOf(d.address)),
    [0, 1, 2],
  );
  assert.deepEqual(
    plan.skipped.map((s) => [deposits.indexOf(s.address), s.reason]),
    [
      [3, `less than the fee of sending it (${ORDER_FEE} nanoton)`],
      [4, 'holds nothing'],
      [5, 'holds nothing'],
    ],
  );
  // One top-up order from the fee payer (deposit 1), then one order per deposit; deposit 1's waits for the top-up.
  assert.deepEqual(
    plan.transactions.map((tx) => [tx.id, tx.deposits.map((d) => deposits.indexOf(d)), tx.after, (tx.payload as TonSweepPayload).deploy]),
    [
      ['tx-0', [], [], true],
      ['tx-1', [0], [], true],
      ['tx-2', [1], ['tx-0'], true],
      ['tx-3', [2], [], true],
    ],
  );
  const usdtMoves = plan.deposits.map((d) => d.moves.find((m) => m.symbol === 'USDT')?.amount ?? null);
  assert.deepEqual(usdtMoves, [null, '25000000', '40000000']);

  const signed = tonSweepSigner.sign(plan, keysFor(seed, plan));
  assert.equal(await tonSweepStale(w.network, w.config, plan), null);
  const states = await broadcastAll(w, plan, signed);
  for (const [id, s] of states) assert.equal(s.state, 'final', `${id}: ${s.error ?? ''}`);

  assert.equal(await jettonBalance(ton, Address.parse(cold)), 65_000_000n, 'all USDT in cold storage');
  assert.equal(await jettonBalance(ton, at(1)), 0n);
  assert.equal(await jettonBalance(ton, at(2)), 0n);
  for (const i of [0, 1, 2]) {
    const c = await ton.blockchain.getContract(at(i));
    assert.equal(c.accountState?.type, 'active', `deposit ${i} deployed by its order`);
    assert.equal(c.balance, 0n, `deposit ${i} keeps nothing (mode 128, not destroyed)`);
  }
  const coldGain = (await balance(ton, Address.parse(cold))) - coldTonBefore;
  assert.ok(coldGain > toNano('2.9') && coldGain < toNano('3.1'), `cold got ${coldGain}`);
  const fees = Object.fromEntries([...states].map(([id, s]) => [id, s.fee]));
  t.diagnostic(`fees per order (nanoton): ${JSON.stringify(fees)}; cold gained ${coldGain}`);

  // Sending again is harmless: the chain has it, nothing is sent twice.
  assert.deepEqual(await tonSweepSender.broadcast(w.network, w.config, signed[1]!), { accepted: true });
  // A late payment to a swept deposit is swept by the next plan, without a deploy this time.
  await ton.sendTon(at(0), toNano('0.5'), false);
  const again = planOf(await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: candidates.slice(0, 1), to: cold, feePayer: null, min: {} }), cold, null);
  const payload = again.transactions[0]!.payload as TonSweepPayload;
  assert.equal(payload.deploy, false);
  assert.equal(payload.seqno, 1);
  const resigned = tonSweepSigner.sign(again, keysFor(seed, again));
  const late = await broadcastAll(w, again, resigned);
  assert.equal(late.get('tx-0')?.state, 'final');
  t.diagnostic(`a later sweep (deployed wallet, TON only): fee ${late.get('tx-0')?.fee} nanoton`);
  assert.equal(await balance(ton, at(0)), 0n);
});

test('ton sweep signer: a plan that pays anyone but its destination, or more than its summary, is refused', async (t) => {
  const ton = await startTonNode();
  t.after(() => ton.close());
  const w = world(ton);
  const seed = randomBytes(64);
  const payer = tonKeyAt(seed, 0, false);
  const deposit = tonKeyAt(seed, 1, false).address;
  const poor = tonKeyAt(seed, 2, false).address;
  const cold = tonKeyAt(randomBytes(64), 0, false).address;
  const thief = ton.attacker.address;
  await ton.sendTon(Address.parse(payer.address), toNano('2'), false);
  await ton.sendTon(Address.parse(deposit), toNano('1'), false);
  await ton.sendJetton(ton.usdt, Address.parse(deposit), 7_000_000n, 0n);
  await ton.sendJetton(ton.usdt, Address.parse(poor), 3_000_000n, 0n);
  const candidates = [deposit, poor].map((a, i) => ({ address: a, derivationIndex: i + 1, source: 'file' }));
  const plan = planOf(await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: payer.address, min: {} }), cold, payer.address);
  const keys = keysFor(seed, plan);
  assert.equal(tonSweepSigner.sign(plan, keys).length, plan.transactions.length, 'the honest plan signs');
  const depositTx = plan.transactions.findIndex((tx) => tx.deposits[0] === deposit);
  const topUpTx = plan.transactions.findIndex((tx) => tx.deposits.length === 0);

  const tamper = (edit: (p: TonSweepPayload) => void, txIndex = depositTx) => {
    const copy = structuredClone(plan);
    edit(copy.transactions[txIndex]!.payload as TonSweepPayload);
    return () => tonSweepSigner.sign(copy, keys);
  };
  const swap = (p: TonSweepPayload, i: number, message: string) => {
    p.messages[i] = { ...p.messages[i]!, message };
  };
  const jettonWallet = await ton.usdt.walletOf(Address.parse(deposit));
  // The rest of the TON to another address.
  assert.throws(
    tamper((p) => swap(p, p.messages.length - 1, encodeMessage(internal({ to: thief, value: 0n, bounce: false })))),
    /the remaining TON goes to .*not to the plan's destination .*refused/,
  );
  // The jettons to another owner.
  const transferTo = (destination: Address, amount: bigint, response: Address = Address.parse(cold)) =>
    encodeMessage(internal({ to: jettonWallet, value: toNano('0.05'), bounce: true, body: jettonTransferBody({ queryId: 1n, amount, destination, responseDestination: response, forwardTonAmount: 1n }) }));
  assert.throws(tamper((p) => swap(p, 0, transferTo(thief, 7_000_000n))), /the jettons go to .*not to the plan's destination .*refused/);
  // The excess to another address.
  assert.throws(tamper((p) => swap(p, 0, transferTo(Address.parse(cold), 7_000_000n, thief))), /the excess TON goes elsewhere .*refused/);
  // Fewer jettons than the summary shows (the rest would stay for another plan to take).
  assert.throws(tamper((p) => swap(p, 0, transferTo(Address.parse(cold), 1_000_000n))), /move 1000000 of jetton .*the summary shows 7000000: refused/);
  // A body that is not a jetton transfer (a contract call through the deposit).
  assert.throws(tamper((p) => swap(p, 0, encodeMessage(internal({ to: jettonWallet, value: toNano('0.05'), body: beginCell().storeUint(0x595f07bc, 32).endCell() })))), /does not read as the plan's .*refused/);
  // The fee payer pays someone outside the plan, or more than the deposit's gas.
  assert.throws(tamper((p) => swap(p, 0, encodeMessage(internal({ to: thief, value: toNano('1'), bounce: false }))), topUpTx), /not a deposit of the plan: refused/);
  assert.throws(tamper((p) => swap(p, 0, encodeMessage(internal({ to: Address.parse(poor), value: toNano('1.5'), bounce: false }))), topUpTx), /more than its fee .*refused/);
  // A message that is not a cell at all.
  assert.throws(tamper((p) => swap(p, 0, Cell.EMPTY.toBoc().toString('base64'))), /refused/);
  // A seed that did not make the deposit.
  assert.throws(() => tonSweepSigner.deriveKey(randomBytes(64), { address: deposit, derivationIndex: null, source: 'file' }, plan, 20), /not the wallet v4r2 of any of the seed's first 20 keys/);
  assert.throws(() => tonSweepSigner.deriveKey(seed, { address: deposit, derivationIndex: 5, source: 'file' }, plan, 20), /gives another wallet/);
});

test('ton sweep: an expired plan is refused before sending ("plan again"), and a stale one is caught', async (t) => {
  const ton = await startTonNode();
  t.after(() => ton.close());
  const w = world(ton);
  const seed = randomBytes(64);
  const deposit = tonKeyAt(seed, 1, false).address;
  const cold = tonKeyAt(randomBytes(64), 0, false).address;
  await ton.sendTon(Address.parse(deposit), toNano('1'), false);
  await ton.sendJetton(ton.usdt, Address.parse(deposit), 5_000_000n, 0n);
  const candidates = [{ address: deposit, derivationIndex: 1, source: 'file' }];
  const plan = planOf(await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: null, min: {} }), cold, null);
  const expiredPlan = structuredClone(plan);
  (expiredPlan.transactions[0]!.payload as TonSweepPayload).validUntil = Math.floor(Date.now() / 1000) - 10;
  assert.match((await tonSweepStale(w.network, w.config, expiredPlan)) ?? '', /expired .*plan again/);
  const [old] = tonSweepSigner.sign(expiredPlan, keysFor(seed, expiredPlan));
  const refused = await tonSweepSender.broadcast(w.network, w.config, old!);
  assert.equal(refused.accepted, false);
  assert.match((refused as { error: string }).error, /expired .*nothing was sent; run sweep plan again/);
  assert.equal((await ton.blockchain.getContract(Address.parse(deposit))).accountState?.type, 'uninit', 'nothing reached the chain');
  assert.equal((await tonSweepSender.status(w.network, w.config, old!.txid)).state, 'unknown');

  // A late payment raised the balance: fine. The wallet sent something since (seqno moved): stale.
  const [good] = tonSweepSigner.sign(plan, keysFor(seed, plan));
  assert.deepEqual(await tonSweepSender.broadcast(w.network, w.config, good!), { accepted: true });
  assert.match((await tonSweepStale(w.network, w.config, plan)) ?? '', /was deployed after planning .*plan again/);
  assert.equal((await tonSweepSender.status(w.network, w.config, good!.txid)).state, 'final');
  assert.equal(await jettonBalance(ton, Address.parse(cold)), 5_000_000n);
});
