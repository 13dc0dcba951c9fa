import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Address, beginCell, Cell, external, internal, loadMessage, loadMessageRelaxed, storeMessage, toNano, type Message } from '@ton/core';
import { createLogger } from '../../src/logger.ts';
import { validateAddress } from '../../src/families/families.ts';
import type { DecodedSweepTx, RefundAsk, SignedSweepTx, SweepPlan } from '../../src/families/sweep.ts';
import { createHttpClient } from '../../src/families/http-client.ts';
import { ed25519Sign } from '../../src/families/ed25519-keys.ts';
import { encodeMessage, JETTON_TRANSFER_VALUE, MODE_CARRY_ALL, ORDER_FEE, walletOrder, type TonSweepPayload } from '../../src/families/ton/sweep-messages.ts';
import { tonSweepPlanner } from '../../src/families/ton/sweep-plan.ts';
import { tonSweepSigner } from '../../src/families/ton/sweep-sign.ts';
import { tonSweepVerifier } from '../../src/families/ton/sweep-verify.ts';
import { createTonSource } from '../../src/families/ton/ton-source.ts';
import { createToncenterV3 } from '../../src/families/ton/toncenter-v3.ts';
import { tonKeyAt, walletStateInit } from '../../src/families/ton/wallet-v4.ts';
import { checkDecoded } from '../../src/sweep/check-decoded.ts';
import { planId } from '../../src/sweep/plan-file.ts';
import { messageHash, normalizedMessageHash, startTonNode, tonBroadcastAll, tonKeysFor, tonPlanOf, tonWorld, type TonNode } from '../helpers/toncenter-node.ts';

// The TON verifier (src/families/ton/sweep-verify.ts) on TON's real TVM (@ton/sandbox behind the
// toncenter v3 server): every plan shape the planners make reads back from its bytes as the plan
// says, the signed messages read back as exactly the unsigned ones with their TEP-467 normalised
// hash as txid (the hash of the message the chain executed, normalised apart from the code under
// test), and tampered plans or raws are refused.

const log = createLogger('silent');
const sealed = (p: SweepPlan): SweepPlan => ({ ...p, id: planId(p) });
const decodeAll = (p: SweepPlan) => p.transactions.map((t) => tonSweepVerifier.decodeUnsigned(p, t));
const usdtAsk = (ton: TonNode, amount: bigint): RefundAsk => ({ symbol: 'USDT', token: ton.usdt.master.toString({ bounceable: true }), decimals: 6, amount });
const canonical = (a: Address | string) => validateAddress('ton', typeof a === 'string' ? a : a.toRawString(), false);

/** What a signed raw does, decoded here with @ton/core alone: the wallet, its order's fields, each message's mode, destination, value and jetton transfer. */
function independentDecode(raw: string) {
  const m = loadMessage(Cell.fromBase64(raw).beginParse());
  assert.equal(m.info.type, 'external-in');
  const body = m.body.beginParse();
  body.skip(512);
  const order = { subwallet: body.loadUint(32), validUntil: body.loadUint(32), seqno: body.loadUint(32), op: body.loadUint(8) };
  const messages = [];
  while (body.remainingRefs > 0) {
    const mode = body.loadUint(8);
    const msg = loadMessageRelaxed(body.loadRef().beginParse());
    assert.equal(msg.info.type, 'internal');
    if (msg.info.type !== 'internal') throw new Error('unreachable');
    const b = msg.body.beginParse();
    let jetton: { amount: bigint; destination: string; response: string } | null = null;
    if (b.remainingBits >= 32 && b.loadUint(32) === 0x0f8a7ea5) {
      b.loadUintBig(64);
      const amount = b.loadCoins();
      jetton = { amount, destination: canonical(b.loadAddress()), response: canonical(b.loadAddress()) };
    }
    messages.push({ mode, to: canonical(msg.info.dest), value: msg.info.value.coins, jetton });
  }
  return { wallet: canonical(m.info.dest), deploys: m.init !== null && m.init !== undefined, order, messages };
}

/** The decoded pays agree with the independent decode, message by message (a mode-128 amount is not in the bytes). */
function assertSameAsIndependent(decoded: DecodedSweepTx, raw: string, payload: TonSweepPayload) {
  const ind = independentDecode(raw);
  assert.deepEqual(decoded.spends, [ind.wallet]);
  assert.equal(ind.deploys, payload.deploy);
  assert.deepEqual([ind.order.subwallet, ind.order.validUntil, ind.order.seqno, ind.order.op], [698983191, payload.validUntil, payload.seqno, 0]);
  assert.equal(decoded.pays.length, ind.messages.length);
  let attached = 0n;
  for (const [i, m] of ind.messages.entries()) {
    const pay = decoded.pays[i]!;
    if (m.jetton) {
      assert.deepEqual([pay.to, pay.amount, pay.token === null], [m.jetton.destination, m.jetton.amount, false]);
      attached += m.value;
    } else {
      assert.deepEqual([pay.to, pay.token], [m.to, null]);
      if (m.mode !== MODE_CARRY_ALL) assert.equal(pay.amount, m.value);
    }
  }
  assert.equal(decoded.fee, ORDER_FEE + attached, 'the fee: the order bound and the TON attached to jetton transfers');
}

/** For each signed transaction: decodeSigned is decodeUnsigned's content plus the signer's txid, which is the normalised hash of the message the chain executed. */
function assertSignedReadsBack(ton: TonNode, plan: SweepPlan, signed: SignedSweepTx[]) {
  const executed = ton.history().flatMap((tx) => (tx.inMessage?.info.type === 'external-in' ? [{ tx, message: tx.inMessage }] : []));
  for (const s of signed) {
    const tx = plan.transactions.find((t) => t.id === s.id)!;
    const decoded = tonSweepVerifier.decodeSigned(plan, tx, s.raw);
    assert.deepEqual(decoded, { ...tonSweepVerifier.decodeUnsigned(plan, tx), txid: s.txid }, `${s.id} reads back as the plan's transaction`);
    assertSameAsIndependent(decoded, s.raw, tx.payload as TonSweepPayload);
    const hits = executed.filter(({ message }) => normalizedMessageHash(message)!.toString('hex') === s.txid);
    assert.equal(hits.length, 1, `${s.id}: the chain executed one message with normalised hash ${s.txid}`);
    assert.equal(canonical(hits[0]!.message.info.dest as Address), canonical((tx.payload as TonSweepPayload).wallet));
    if ((tx.payload as TonSweepPayload).deploy) assert.notEqual(messageHash(hits[0]!.message).toString('hex'), s.txid, 'with a state_init the raw cell hash is not the normalised one');
  }
}

/** An order signed outside the signer (as an attacker with the key, or a second valid order would be). */
function signOrder(payload: TonSweepPayload, privateKey: Uint8Array, publicKey: Uint8Array, deploy: boolean): string {
  const order = walletOrder(payload);
  const body = beginCell().storeBuffer(Buffer.from(ed25519Sign(privateKey, order.hash()))).storeSlice(order.beginParse()).endCell();
  const init = walletStateInit(publicKey);
  const m: Message = external({ to: Address.parse(payload.wallet), body, ...(deploy ? { init } : {}) });
  return beginCell().store(storeMessage(m)).endCell().toBoc().toString('base64');
}

test('ton verifier: a sweep with a fee payer, then a later sweep of a deployed wallet, read back from their bytes; the txid is the chain\'s normalised message hash', async (t) => {
  const ton = await startTonNode();
  t.after(() => ton.close());
  const w = tonWorld(ton);
  const seed = randomBytes(64);
  const payer = tonKeyAt(seed, 0, false).address;
  const deposits = [1, 2, 3].map((i) => tonKeyAt(seed, i, false).address);
  const at = (i: number) => Address.parse(deposits[i]!);
  const cold = tonKeyAt(randomBytes(64), 0, false).address;
  await ton.sendTon(Address.parse(payer), toNano('3'), false);
  await ton.sendTon(at(0), toNano('2'), false);
  await ton.sendJetton(ton.usdt, at(1), 25_000_000n, 0n);
  await ton.sendJetton(ton.usdt, at(2), 40_000_000n, 0n);
  await ton.sendTon(at(2), toNano('1'), false);

  const candidates = deposits.map((a, i) => ({ address: a, derivationIndex: i + 1, source: 'ab12cd34' }));
  const plan = sealed(tonPlanOf(await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: payer, min: {} }), cold, payer));
  assert.deepEqual(plan.transactions.map((tx) => tx.deposits.length), [0, 1, 1, 1], 'a top-up order, then one order per deposit');
  // Each deposit states its order's fee (0.01, or 0.06 with a jetton transfer); the topped-up one also the fee payer's order.
  assert.deepEqual(plan.deposits.map((d) => d.fee), [ORDER_FEE, ORDER_FEE + JETTON_TRANSFER_VALUE + ORDER_FEE, ORDER_FEE + JETTON_TRANSFER_VALUE].map(String));
  const reading = checkDecoded(plan, decodeAll(plan), { maxFee: null });
  assert.equal(reading.fee, 4n * ORDER_FEE + 2n * JETTON_TRANSFER_VALUE, 'four orders and two jetton transfers\' attached TON');
  assert.equal(reading.moves.get(`USDT|${plan.deposits[1]!.moves[0]!.token}`)?.amount, 65_000_000n);
  const topUp = decodeAll(plan)[0]!;
  assert.deepEqual(topUp.pays.map((p) => [p.to, p.amount]), [[canonical(deposits[1]!), ORDER_FEE + JETTON_TRANSFER_VALUE]], 'the fee payer pays the deposit exactly its gas');

  const signed = tonSweepSigner.sign(plan, tonKeysFor(seed, plan));
  const states = await tonBroadcastAll(w, plan, signed);
  for (const [id, s] of states) assert.equal(s.state, 'final', `${id}: ${s.error ?? ''}`);
  assertSignedReadsBack(ton, plan, signed);

  // Deposit 0 is deployed now: its next order carries no state_init; the key comes from the plan (get_public_key) and must derive the address.
  await ton.sendTon(at(0), toNano('0.5'), false);
  const again = sealed(tonPlanOf(await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: candidates.slice(0, 1), to: cold, feePayer: null, min: {} }), cold, null));
  const payload = again.transactions[0]!.payload as TonSweepPayload;
  assert.deepEqual([payload.deploy, payload.publicKey], [false, Buffer.from(tonKeyAt(seed, 1, false).publicKey).toString('hex')]);
  const coldBefore = (await ton.blockchain.getContract(Address.parse(cold))).balance;
  checkDecoded(again, decodeAll(again), { maxFee: null });
  const resigned = tonSweepSigner.sign(again, tonKeysFor(seed, again));
  assert.equal((await tonBroadcastAll(w, again, resigned)).get('tx-0')?.state, 'final');
  assertSignedReadsBack(ton, again, resigned);
  const moved = (await ton.blockchain.getContract(Address.parse(cold))).balance - coldBefore;
  const shown = decodeAll(again)[0]!.pays[0]!.amount;
  assert.ok(moved >= shown && moved < shown + ORDER_FEE, `mode 128 moved ${moved}; the decoded amount ${shown} is what stays after the order's fee bound`);

  // The same order with another key named for the deployed wallet: that key does not derive the address.
  const stranger = tonKeyAt(randomBytes(64), 0, false);
  const forged = structuredClone(again);
  (forged.transactions[0]!.payload as TonSweepPayload).publicKey = Buffer.from(stranger.publicKey).toString('hex');
  const forgedRaw = signOrder(forged.transactions[0]!.payload as TonSweepPayload, stranger.privateKey, stranger.publicKey, false);
  assert.throws(() => tonSweepVerifier.decodeSigned(forged, forged.transactions[0]!, forgedRaw), /the public key .* does not derive .*refused/);
  assert.throws(() => tonSweepVerifier.decodeSigned(forged, forged.transactions[0]!, resigned[0]!.raw), /does not derive .*refused/);
});

test('ton verifier: refunds (USDT topped up by a fee payer, TON paid by the address) read back; the fee payer\'s top-up is seen by the reader from the fee payer', async (t) => {
  const ton = await startTonNode();
  t.after(() => ton.close());
  const w = tonWorld(ton);
  const seed = randomBytes(64);
  const payer = tonKeyAt(seed, 0, false).address;
  const deposit = tonKeyAt(seed, 1, false).address;
  const tonDeposit = tonKeyAt(seed, 2, false).address;
  const buyer = tonKeyAt(randomBytes(64), 0, false).address;
  await ton.sendTon(Address.parse(payer), toNano('2'), false);
  await ton.sendJetton(ton.usdt, Address.parse(deposit), 30_000_000n, 0n);
  await ton.sendTon(Address.parse(tonDeposit), toNano('2'), false);
  const refundPlan = async (address: string, index: number, ask: RefundAsk, feePayer: string | null) =>
    sealed(
      tonPlanOf(await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [{ address, derivationIndex: index, source: 'ab12cd34' }], to: buyer, feePayer, min: {}, refund: ask }), buyer, feePayer, {
        kind: 'refund',
        refund: { paymentId: 'pay_test', symbol: ask.symbol, token: ask.token, decimals: ask.decimals, amount: ask.amount.toString() },
      }),
    );

  const from = BigInt(ton.seqno()) + 1n;
  const usdt = await refundPlan(deposit, 1, usdtAsk(ton, 10_000_000n), payer);
  const reading = checkDecoded(usdt, decodeAll(usdt), { maxFee: null });
  assert.equal(reading.fee, BigInt(usdt.deposits[0]!.fee));
  assert.equal(reading.fee, 2n * ORDER_FEE + JETTON_TRANSFER_VALUE, 'the fee payer\'s order, the refund order and the TON attached to the transfer');
  const signed = tonSweepSigner.sign(usdt, tonKeysFor(seed, usdt));
  for (const [id, s] of await tonBroadcastAll(w, usdt, signed)) assert.equal(s.state, 'final', `${id}: ${s.error ?? ''}`);
  assertSignedReadsBack(ton, usdt, signed);

  const native = await refundPlan(tonDeposit, 2, { symbol: 'TON', token: null, decimals: 9, amount: toNano('0.5') }, null);
  checkDecoded(native, decodeAll(native), { maxFee: null });
  const signedNative = tonSweepSigner.sign(native, tonKeysFor(seed, native));
  assert.equal((await tonBroadcastAll(w, native, signedNative)).get('tx-0')?.state, 'final');
  assertSignedReadsBack(ton, native, signedNative);

  // The TON reader sees the top-up to the deposit with `from` in the canonical form the ledger compares with the plan's fee payer.
  const source = createTonSource({ api: createToncenterV3(createHttpClient({ baseUrl: ton.url, timeoutMs: 10_000, log })), jettonMasters: [ton.usdt.master.toString()], testnet: false });
  const range = await source.fetchRange(from, BigInt(ton.seqno()), { addresses: new Set([deposit]), paymentContract: null });
  const topUps = range.transfers.filter((x) => x.token === null && x.amount === ORDER_FEE + JETTON_TRANSFER_VALUE);
  assert.equal(topUps.length, 1, JSON.stringify(range.transfers, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
  assert.equal(topUps[0]!.from, validateAddress('ton', payer, false));
  assert.equal(topUps[0]!.from, usdt.feePayer, 'the same string as the plan\'s fee payer');
});

test('ton verifier: a payload paying elsewhere, burning fees, with a refund\'s mode 128 or a relabelled network is refused; a raw that is not the plan\'s, garbage or a broken signature too', async (t) => {
  const ton = await startTonNode();
  t.after(() => ton.close());
  const w = tonWorld(ton);
  const seed = randomBytes(64);
  const payer = tonKeyAt(seed, 0, false).address;
  const deposit = tonKeyAt(seed, 1, false).address;
  const other = tonKeyAt(seed, 2, false).address;
  const cold = tonKeyAt(randomBytes(64), 0, false).address;
  const thief = ton.attacker.address;
  await ton.sendTon(Address.parse(payer), toNano('2'), false);
  await ton.sendTon(Address.parse(deposit), toNano('1'), false);
  await ton.sendJetton(ton.usdt, Address.parse(deposit), 7_000_000n, 0n);
  await ton.sendJetton(ton.usdt, Address.parse(other), 3_000_000n, 0n);
  const candidates = [deposit, other].map((a, i) => ({ address: a, derivationIndex: i + 1, source: 'ab12cd34' }));
  const plan = sealed(tonPlanOf(await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: payer, min: {} }), cold, payer));
  checkDecoded(plan, decodeAll(plan), { maxFee: null });
  const di = plan.transactions.findIndex((x) => x.deposits[0] === deposit);
  const fi = plan.transactions.findIndex((x) => x.deposits.length === 0);
  assert.deepEqual([fi, di], [0, 1], 'the fee payer tops up the deposit without TON first');
  const edited = (edit: (p: SweepPlan) => void) => {
    const copy = structuredClone(plan);
    edit(copy);
    return sealed(copy);
  };
  const payloadOf = (p: SweepPlan, i: number) => p.transactions[i]!.payload as TonSweepPayload;
  const check = (p: SweepPlan) => () => checkDecoded(p, decodeAll(p), { maxFee: null });

  // The rest of a deposit's TON to the attacker (plan id recomputed): refused, naming the recipient.
  const elsewhere = edited((p) => {
    const last = payloadOf(p, di).messages.length - 1;
    payloadOf(p, di).messages[last]!.message = encodeMessage(internal({ to: thief, value: 0n, bounce: false }));
  });
  assert.throws(check(elsewhere), new RegExp(`pays .* to ${canonical(thief)}, which is neither the plan's destination`));
  // The jetton transfer's attached TON raised to 0.95 (burnt, or sent back to the excess address): the fee no longer matches the summary.
  const burning = edited((p) => {
    const m = payloadOf(p, di).messages[0]!;
    const msg = loadMessageRelaxed(Cell.fromBase64(m.message).beginParse());
    if (msg.info.type !== 'internal') throw new Error('unreachable');
    m.message = encodeMessage(internal({ to: msg.info.dest, value: toNano('0.95'), bounce: true, body: msg.body }));
  });
  assert.throws(check(burning), /refused, nothing signed/);
  // …and with the summary edited to match, the fee bound refuses it.
  const matched = edited((p) => {
    Object.assign(p.transactions[di]!, burning.transactions[di]!);
    const d = p.deposits.find((x) => x.address === deposit)!;
    d.fee = (BigInt(d.fee) + toNano('0.9')).toString();
    const tonMove = d.moves.find((m) => m.token === null)!;
    tonMove.amount = (BigInt(tonMove.amount) - toNano('0.9')).toString();
  });
  assert.doesNotThrow(() => checkDecoded(matched, decodeAll(matched), { maxFee: toNano('2') }), 'the summary now says what the bytes do');
  assert.throws(check(matched), /can pay 1\.03 TON in fees, more than 0\.5 TON per deposit moved \(2\): refused/);
  // Another send mode (1 + 2: ignore errors; 128 + 32: destroy the account).
  assert.throws(check(edited((p) => void (payloadOf(p, di).messages[0]!.mode = 3))), /is sent with mode 3; the plan's messages use mode 1/);
  assert.throws(check(edited((p) => void (payloadOf(p, di).messages.at(-1)!.mode = 160))), /is sent with mode 160/);
  // A fee payer's order carrying everything (mode 128): only a deposit's last message may.
  assert.throws(check(edited((p) => void (payloadOf(p, fi).messages[0]!.mode = MODE_CARRY_ALL))), /only the last message of a deposit's sweep order is: refused/);
  // A relabelled network: mainnet addresses in a plan that says testnet; a network the registry does not name.
  assert.throws(check(edited((p) => Object.assign(p, { testnet: true, network: 'TESTNET' }))), /is written for mainnet, but the plan says ton TESTNET/);
  assert.throws(check(edited((p) => Object.assign(p, { network: 'DEVNET' }))), /the registry's mainnet is MAINNET/);
  // A jetton the plan does not hold.
  assert.throws(check(edited((p) => void (payloadOf(p, di).messages[0]!.jetton = ton.lookAlike.master.toString()))), /moves jetton .*which no address of the plan holds: refused/);

  // A refund never sends with mode 128.
  const refund = sealed(
    tonPlanOf(
      await tonSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [candidates[0]!], to: cold, feePayer: null, min: {}, refund: { symbol: 'TON', token: null, decimals: 9, amount: toNano('0.2') } }),
      cold,
      null,
      { kind: 'refund', refund: { paymentId: 'pay_test', symbol: 'TON', token: null, decimals: 9, amount: toNano('0.2').toString() } },
    ),
  );
  checkDecoded(refund, decodeAll(refund), { maxFee: null });
  const carryAll = structuredClone(refund);
  payloadOf(carryAll, 0).messages[0] = { mode: MODE_CARRY_ALL, message: encodeMessage(internal({ to: Address.parse(cold), value: 0n, bounce: false })) };
  assert.throws(() => tonSweepVerifier.decodeUnsigned(carryAll, carryAll.transactions[0]!), /mode 128 \(carry the whole balance\); a refund sends with mode 1 only: refused/);

  // Signed raws: the genuine ones read back; anything else is refused.
  const signed = tonSweepSigner.sign(plan, tonKeysFor(seed, plan));
  const txOf = (id: string) => plan.transactions.find((x) => x.id === id)!;
  for (const s of signed) tonSweepVerifier.decodeSigned(plan, txOf(s.id), s.raw);
  const depositTx = plan.transactions.find((x) => x.deposits[0] === deposit)!;
  const genuine = signed.find((s) => s.id === depositTx.id)!;
  const otherSigned = signed.find((s) => s.id !== depositTx.id && txOf(s.id).deposits.length === 1)!;
  // Another valid transaction of the plan given for this one.
  assert.throws(() => tonSweepVerifier.decodeSigned(plan, depositTx, otherSigned.raw), /the signed message goes to .*the plan's order to .*refused/);
  // The deposit's key signing an order that pays the attacker, or the same order at another seqno.
  const key = tonKeyAt(seed, 1, false);
  const thiefPayload = payloadOf(elsewhere, di);
  assert.throws(() => tonSweepVerifier.decodeSigned(plan, depositTx, signOrder(thiefPayload, key.privateKey, key.publicKey, true)), /the signed order is not the plan's: message 1 is not the plan's .*refused/);
  const later = { ...(depositTx.payload as TonSweepPayload), seqno: 5 };
  assert.throws(() => tonSweepVerifier.decodeSigned(plan, depositTx, signOrder(later, key.privateKey, key.publicKey, true)), /its seqno is 5, the plan's 0: refused/);
  // The plan's order signed by another key, with that key's state_init: the key does not derive the deposit's address.
  const stranger = tonKeyAt(randomBytes(64), 0, false);
  assert.throws(() => tonSweepVerifier.decodeSigned(plan, depositTx, signOrder(depositTx.payload as TonSweepPayload, stranger.privateKey, stranger.publicKey, true)), /does not derive .*refused/);
  // The plan's order and state_init, signed by another key: the signature does not verify.
  const wrongSignature = (() => {
    const m = loadMessage(Cell.fromBase64(genuine.raw).beginParse());
    const body = m.body.beginParse();
    const signature = Buffer.from(body.loadBuffer(64));
    signature[7]! ^= 0x01;
    const broken: Message = { ...m, body: beginCell().storeBuffer(signature).storeSlice(body).endCell() };
    return beginCell().store(storeMessage(broken)).endCell().toBoc().toString('base64');
  })();
  assert.throws(() => tonSweepVerifier.decodeSigned(plan, depositTx, wrongSignature), /the signature does not verify against .*refused/);
  // Garbage, an internal message, a deploy dropped.
  assert.throws(() => tonSweepVerifier.decodeSigned(plan, depositTx, '00'), /the signed raw is not a TON message .*refused/);
  assert.throws(() => tonSweepVerifier.decodeSigned(plan, depositTx, Cell.EMPTY.toBoc().toString('base64')), /the signed raw is not a TON message/);
  const noInit = (() => {
    const m = loadMessage(Cell.fromBase64(genuine.raw).beginParse());
    return beginCell().store(storeMessage({ ...m, init: null })).endCell().toBoc().toString('base64');
  })();
  assert.throws(() => tonSweepVerifier.decodeSigned(plan, depositTx, noInit), /the plan deploys the wallet, but the signed message carries no state_init: refused/);
  // Still, the genuine raw reads back, and the chain takes it.
  assert.equal(tonSweepVerifier.decodeSigned(plan, depositTx, genuine.raw).txid, genuine.txid);
  for (const [id, s] of await tonBroadcastAll(w, plan, signed)) assert.equal(s.state, 'final', `${id}: ${s.error ?? ''}`);
});
