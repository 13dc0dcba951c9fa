import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import * as bitcoin from 'bitcoinjs-lib';
import { Mnemonic } from 'ethers';
import { getNetwork } from '../../src/chains/registry.ts';
import { loadConfig } from '../../src/config/load-config.ts';
import { UsageError } from '../../src/domain/errors.ts';
import { deriveAddresses } from '../../src/families/derive.ts';
import { keyFingerprint } from '../../src/families/key-material.ts';
import { resolveChains } from '../../src/families/families.ts';
import type { BitcoinSweepPayload } from '../../src/families/bitcoin/sweep-payload.ts';
import { bitcoinSweepPlanner } from '../../src/families/bitcoin/sweep-plan.ts';
import { bitcoinSweepSender } from '../../src/families/bitcoin/sweep-send.ts';
import { bitcoinSweepSigner } from '../../src/families/bitcoin/sweep-sign.ts';
import type { RefundAsk, SweepCandidate, SweepKey, SweepPlan } from '../../src/families/sweep.ts';
import { createLogger } from '../../src/logger.ts';
import { checkDecoded } from '../../src/sweep/check-decoded.ts';
import { bitcoinSweepVerifier } from '../../src/families/bitcoin/sweep-verify.ts';
import { planId } from '../../src/sweep/plan-file.ts';
import { startEsploraSim, type EsploraSim } from '../helpers/esplora-sim.ts';

// Refunds on bitcoin (docs/sweeps/bitcoin.md#refunds) through the family's modules against a
// regtest chain served over Esplora (test/helpers/esplora-sim.ts, whose POST /tx verifies every
// signature and spends only unspent outputs): plan with `refund` set, sign with keys from the seed
// as the offline machine does, broadcast, mine, and read the buyer's and the deposit's outputs back.

bitcoin.initEccLib(ecc);
const regtest = bitcoin.networks.regtest;
const seedOf = (phrase: string) => Uint8Array.from(Buffer.from(Mnemonic.fromPhrase(phrase).computeSeed().slice(2), 'hex'));
const SEED = seedOf('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const OTHER_SEED = seedOf('legal winner thank year wave sausage worth useful legal winner thank yellow');
const root = BIP32Factory(ecc).fromSeed(Buffer.from(SEED), bitcoin.networks.testnet);
const TPUB84 = root.derivePath("m/84'/1'/0'").neutered().toBase58();
const BUYER = bitcoin.payments.p2wpkh({ hash: Buffer.alloc(20, 0x42), network: regtest }).address!;
const ATTACKER = bitcoin.payments.p2wpkh({ hash: Buffer.alloc(20, 0x66), network: regtest }).address!;
const pool: SweepCandidate[] = deriveAddresses({ family: 'bitcoin', testnet: true, network: 'REGTEST', xpub: TPUB84, start: 0, count: 4 }).map((a) => ({
  address: a.address,
  derivationIndex: a.index,
  source: keyFingerprint(TPUB84),
}));
/** A merchant wallet address on the change chain of the seed's first BIP86 account: only a search that looks at change keys finds it. */
const WALLET_P2TR = bitcoin.payments.p2tr({ internalPubkey: root.derivePath("m/86'/1'/0'/1/2").publicKey.subarray(1, 33), network: regtest }).address!;
const FOREIGN = bitcoin.payments.p2wpkh({ pubkey: BIP32Factory(ecc).fromSeed(Buffer.from(OTHER_SEED)).derivePath("m/84'/1'/0'/0/0").publicKey, network: regtest }).address!;
const log = createLogger('silent');
const btc = (amount: bigint): RefundAsk => ({ symbol: 'BTC', token: null, decimals: 8, amount });

async function world(t: { after(fn: () => Promise<void>): void }) {
  const sim = await startEsploraSim();
  t.after(() => sim.close());
  const config = loadConfig({ env: {}, overrides: { chains: { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', confirmations: 1 } } }, log: { level: 'silent' } } }).config;
  const network = getNetwork(resolveChains(config.chains), 'bitcoin', true);
  // The buyer already holds something, so "rose by" is measured, not assumed.
  sim.mine([[{ address: BUYER, sats: 1_000n }]]);
  return { sim, config, network };
}

/** Satoshis an address holds in confirmed outputs, as Esplora's GET /address/:address/utxo lists them. */
async function balance(sim: EsploraSim, address: string): Promise<bigint> {
  const rows = (await (await fetch(`${sim.url}/address/${address}/utxo`)).json()) as { value: number; status: { confirmed: boolean } }[];
  return rows.filter((r) => r.status.confirmed).reduce((s, r) => s + BigInt(r.value), 0n);
}

function refundPlan(body: Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>, amount: bigint, to = BUYER): SweepPlan {
  const plan = {
    format: 'chaingate-sweep-plan/1',
    kind: 'refund',
    chain: 'bitcoin',
    family: 'bitcoin',
    network: 'REGTEST',
    testnet: true,
    to,
    feePayer: null,
    createdAt: '2026-11-25T00:00:00.000Z',
    refund: { paymentId: 'PAY-REFUND-TEST-0001', symbol: 'BTC', token: null, decimals: 8, amount: amount.toString() },
    ...body,
  } as Omit<SweepPlan, 'id'>;
  return { ...plan, id: planId(plan) } as SweepPlan;
}

async function plan(w: Awaited<ReturnType<typeof world>>, candidate: SweepCandidate, amount: bigint, to = BUYER): Promise<SweepPlan> {
  const body = await bitcoinSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [candidate], to, feePayer: null, min: {}, refund: btc(amount) });
  return refundPlan(body, amount, to);
}

function keysFor(plan: SweepPlan, seed = SEED): Map<string, SweepKey> {
  return new Map(plan.deposits.map((d) => [d.address, bitcoinSweepSigner.deriveKey(seed, d, plan, 20)]));
}

/** Sign, broadcast, mine a block: the node accepted exactly the signed transaction. */
async function refund(w: Awaited<ReturnType<typeof world>>, plan: SweepPlan): Promise<bitcoin.Transaction> {
  const [signed] = bitcoinSweepSigner.sign(plan, keysFor(plan));
  assert.deepEqual(await bitcoinSweepSender.broadcast(w.network, w.config, signed!), { accepted: true });
  assert.deepEqual(w.sim.mempool(), [signed!.txid]);
  w.sim.mine();
  assert.deepEqual(await bitcoinSweepSender.status(w.network, w.config, signed!.txid), { state: 'final' });
  return bitcoin.Transaction.fromHex(signed!.raw);
}

const payload = (plan: SweepPlan) => plan.transactions[0]!.payload as BitcoinSweepPayload;

describe('bitcoin refunds: plan (Esplora), sign offline, broadcast', () => {
  test('an overpayment refunded: the buyer receives exactly the refund; the rest stays on the deposit as change, less the fee', async (t) => {
    const w = await world(t);
    const d0 = pool[0]!;
    w.sim.mine([[{ address: d0.address, sats: 60_000n }], [{ address: d0.address, sats: 40_000n }]]);
    const p = await plan(w, d0, 30_000n);
    const deposit = p.deposits[0]!;
    // Two P2WPKH inputs, the buyer's output and the change at 7 sat/vB (the sim's 6-block estimate, rounded up).
    assert.equal(payload(p).vsize, 209);
    assert.equal(deposit.fee, String(209 * 7));
    assert.deepEqual(deposit.moves.map((m) => [m.symbol, m.amount]), [['BTC', '30000']]);
    assert.deepEqual(deposit.holdings.map((h) => h.amount), ['100000']);
    assert.deepEqual(deposit.leftBehind.map((l) => [l.holding.amount, l.reason]), [[String(70_000 - 209 * 7), 'not refunded: stays on the address as the change output']]);
    const psbt = bitcoin.Psbt.fromBase64(payload(p).psbt, { network: regtest });
    assert.deepEqual(psbt.txOutputs.map((o) => [bitcoin.address.fromOutputScript(o.script, regtest), o.value]), [[BUYER, 30_000n], [d0.address, BigInt(70_000 - 209 * 7)]]);

    const buyerBefore = await balance(w.sim, BUYER);
    const tx = await refund(w, p);
    assert.ok(tx.virtualSize() <= payload(p).vsize, 'the signed transaction is no larger than planned');
    assert.equal((await balance(w.sim, BUYER)) - buyerBefore, 30_000n, 'the buyer received exactly the refund');
    assert.equal(await balance(w.sim, d0.address), BigInt(70_000 - 209 * 7), 'the remainder less the fee is still on the deposit');
  });

  test('a full refund: the whole deposit goes to the buyer less the fee; nothing is left', async (t) => {
    const w = await world(t);
    const d1 = pool[1]!;
    w.sim.mine([[{ address: d1.address, sats: 50_000n }]]);
    const p = await plan(w, d1, 50_000n);
    // One input, one output: 110 vB at 7 sat/vB, paid out of the refund since nothing else stays.
    assert.equal(p.deposits[0]!.fee, '770');
    assert.deepEqual(p.deposits[0]!.moves.map((m) => m.amount), ['49230']);
    assert.deepEqual(p.deposits[0]!.leftBehind, []);
    const buyerBefore = await balance(w.sim, BUYER);
    const tx = await refund(w, p);
    assert.equal(tx.outs.length, 1);
    assert.equal((await balance(w.sim, BUYER)) - buyerBefore, 49_230n);
    assert.equal(await balance(w.sim, d1.address), 0n);
  });

  test('a remainder too small for a change output: the fee takes it, and the summary says so', async (t) => {
    const w = await world(t);
    const [, , d2, d3] = pool;
    w.sim.mine([[{ address: d2!.address, sats: 50_000n }, { address: d3!.address, sats: 50_000n }]]);
    // 1,000 sat left covers the 770 sat one-output fee but not a change output (its 217 sat fee and the 294 sat dust limit): the buyer gets the refund whole.
    const covered = await plan(w, d2!, 49_000n);
    assert.deepEqual([covered.deposits[0]!.moves[0]!.amount, covered.deposits[0]!.fee], ['49000', '1000']);
    assert.deepEqual(covered.deposits[0]!.leftBehind.map((l) => [l.holding.amount, l.reason]), [['230', 'not refunded: below the 294 sat dust limit as change, so it goes to the miners with the fee']]);
    // 100 sat left covers no fee: the refund pays it and the 100 sat go to the miners too.
    const short = await plan(w, d3!, 49_900n);
    assert.deepEqual([short.deposits[0]!.moves[0]!.amount, short.deposits[0]!.fee], [String(49_900 - 770), '870']);
    const buyerBefore = await balance(w.sim, BUYER);
    await refund(w, covered);
    await refund(w, short);
    assert.equal((await balance(w.sim, BUYER)) - buyerBefore, 49_000n + 49_130n);
    assert.equal((await balance(w.sim, d2!.address)) + (await balance(w.sim, d3!.address)), 0n);
  });

  test('a payment refunded in two steps: the over-payment, then the rest as the store counts it (less the first fee), leaves the deposit empty', async (t) => {
    const w = await world(t);
    const d0 = pool[0]!;
    // 100,000 sat asked, 150,000 received: the over-payment first, out of which the change pays the fee.
    w.sim.mine([[{ address: d0.address, sats: 150_000n }]]);
    const read = (p: SweepPlan) => checkDecoded(p, p.transactions.map((tx) => bitcoinSweepVerifier.decodeUnsigned(p, tx)), { maxFee: null });
    const over = await plan(w, d0, 50_000n);
    const firstFee = read(over).fee;
    assert.equal(firstFee, BigInt(over.deposits[0]!.fee));
    const [signed] = bitcoinSweepSigner.sign(over, keysFor(over));
    assert.deepEqual(await bitcoinSweepSender.broadcast(w.network, w.config, signed!), { accepted: true });
    // Until the change confirms, the rest cannot be planned: the address holds nothing confirmed.
    const rest = 150_000n - 50_000n - firstFee;
    await assert.rejects(plan(w, d0, rest), new RegExp(`holds 0 sat \\(0 BTC\\) confirmed \\(and ${rest} sat \\(0\\.\\d+ BTC\\) unconfirmed\\): less than the refund`));
    w.sim.mine();
    // Counting the first refund's fee as refunded too would ask for more than the address holds.
    await assert.rejects(plan(w, d0, 100_000n), new RegExp(`holds ${rest} sat \\(0\\.\\d+ BTC\\) confirmed: less than the refund of 100000 sat`));
    // The rest (what the store says is left: received − refunded − the fee the deposit paid): the fee now comes out of it.
    const second = await plan(w, d0, rest);
    const reading = read(second);
    assert.deepEqual(second.deposits[0]!.leftBehind, []);
    assert.equal(reading.nativeMoved + reading.fee, rest);
    const buyerBefore = await balance(w.sim, BUYER);
    await refund(w, second);
    assert.equal((await balance(w.sim, BUYER)) - buyerBefore, rest - reading.fee);
    assert.equal(await balance(w.sim, d0.address), 0n, 'nothing is left on the deposit');
    // What the buyer received in all, plus both fees, is what they sent.
    assert.equal(50_000n + (rest - reading.fee) + firstFee + reading.fee, 150_000n);
  });

  test('a refund larger than the address holds is refused by the planner, saying how much it holds', async (t) => {
    const w = await world(t);
    const d0 = pool[0]!;
    w.sim.mine([[{ address: d0.address, sats: 20_000n }]]);
    const refused = bitcoinSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [d0], to: BUYER, feePayer: null, min: {}, refund: btc(20_001n) });
    await assert.rejects(refused, (err: unknown) => err instanceof UsageError && /holds 20000 sat \(0\.0002 BTC\) confirmed: less than the refund of 20001 sat/.test(err.message));
    await assert.rejects(
      bitcoinSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [d0], to: BUYER, feePayer: d0.address, min: {}, refund: btc(1_000n) }),
      (err: unknown) => err instanceof UsageError && /leave out --fee-payer/.test(err.message),
    );
    assert.equal(w.sim.posted.length, 0);
  });

  test("a refund from a merchant wallet address (no derivation index): the signer finds its key among the seed's change keys", async (t) => {
    const w = await world(t);
    const wallet: SweepCandidate = { address: WALLET_P2TR, derivationIndex: null, source: 'wallet' };
    w.sim.mine([[{ address: WALLET_P2TR, sats: 80_000n }]]);
    const p = await plan(w, wallet, 25_000n);
    assert.equal(p.deposits[0]!.source, 'wallet');
    assert.equal(bitcoinSweepSigner.deriveKey(SEED, wallet, p, 20).address, WALLET_P2TR);
    // An account-level key finds it the same way.
    assert.equal(bitcoinSweepSigner.deriveKeyFromAccount!(root.derivePath("m/86'/1'/0'").toBase58(), wallet, p, 20).address, WALLET_P2TR);
    const buyerBefore = await balance(w.sim, BUYER);
    await refund(w, p);
    assert.equal((await balance(w.sim, BUYER)) - buyerBefore, 25_000n);
    assert.equal(await balance(w.sim, WALLET_P2TR), 80_000n - 25_000n - BigInt(p.deposits[0]!.fee));
    // Three keys searched on each chain are not enough; another wallet's address is not found, and the error says where it looked.
    assert.throws(() => bitcoinSweepSigner.deriveKey(SEED, wallet, p, 2), /the wallet address bcrt1p\S+: none of the first 2 receive \(m\/86'\/1'\/0'\/0\/…\) or change \(m\/86'\/1'\/0'\/1\/…\) keys of this secret gives it/);
    const foreign: SweepCandidate = { address: FOREIGN, derivationIndex: null, source: 'wallet' };
    assert.throws(() => bitcoinSweepSigner.deriveKey(SEED, foreign, p, 20), /none of the first 20 receive \(m\/84'\/1'\/0'\/0\/…\) or change/);
  });

  test('a tampered refund plan is refused by the signer: another destination, change to someone else, a larger amount', async (t) => {
    const w = await world(t);
    const d0 = pool[0]!;
    w.sim.mine([[{ address: d0.address, sats: 100_000n }]]);
    const p = await plan(w, d0, 30_000n);
    const sign = (tampered: Omit<SweepPlan, 'id'>) => {
      const withId = { ...tampered, id: planId(tampered) } as SweepPlan;
      return () => bitcoinSweepSigner.sign(withId, keysFor(withId));
    };
    const { id: _, ...body } = p;
    // The summary names another buyer than the PSBT pays.
    assert.throws(sign({ ...body, to: ATTACKER }), /pays somewhere other than the plan's destination bcrt1q\S+ \(and at most one change output back to the refunding address\)/);
    // The PSBT's change goes to another address.
    const psbt = bitcoin.Psbt.fromBase64(payload(p).psbt, { network: regtest });
    const rebuilt = (outputs: { address: string; value: bigint }[]) => {
      const copy = new bitcoin.Psbt({ network: regtest });
      copy.setVersion(2);
      for (const [i, input] of psbt.txInputs.entries()) copy.addInput({ hash: input.hash, index: input.index, sequence: input.sequence, witnessUtxo: psbt.data.inputs[i]!.witnessUtxo! });
      for (const o of outputs) copy.addOutput({ address: o.address, value: o.value });
      return { ...body, transactions: [{ ...body.transactions[0]!, payload: { ...payload(p), psbt: copy.toBase64() } }] };
    };
    const [buyerOut, changeOut] = psbt.txOutputs;
    assert.throws(sign(rebuilt([{ address: BUYER, value: buyerOut!.value }, { address: ATTACKER, value: changeOut!.value }])), /pays somewhere other/);
    // The buyer's output raised and the change lowered, with the summary changed to match: more than the refund.
    const more = rebuilt([{ address: BUYER, value: buyerOut!.value + 5_000n }, { address: d0.address, value: changeOut!.value - 5_000n }]);
    const deposit = { ...body.deposits[0]!, moves: [{ ...body.deposits[0]!.moves[0]!, amount: String(buyerOut!.value + 5_000n) }] };
    assert.throws(sign({ ...more, deposits: [deposit] }), /pays the buyer 35000 sat, but the refund is 30000 sat .*: refused/);
    // The refund's amount in the plan changed alone: the PSBT no longer matches it.
    assert.throws(sign({ ...body, refund: { ...body.refund!, amount: '25000' } }), /pays the buyer 30000 sat, but the refund is 25000 sat/);
    // A second spender slipped into the plan's one transaction.
    assert.throws(sign({ ...body, transactions: [body.transactions[0]!, { ...body.transactions[0]!, id: 'tx-1' }] }), /a refund plan spends one address in one transaction/);
    // The untouched plan signs.
    assert.equal(bitcoinSweepSigner.sign(p, keysFor(p)).length, 1);
    assert.equal(w.sim.posted.length, 0);
  });
});
