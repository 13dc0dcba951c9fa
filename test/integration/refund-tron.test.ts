import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../../src/domain/errors.ts';
import type { RefundAsk, SweepCandidate, SweepPlan } from '../../src/families/sweep.ts';
import { hexToTron } from '../../src/families/tron/address.ts';
import type { TronSweepPayload } from '../../src/families/tron/sweep-payload.ts';
import { tronSweepPlanner } from '../../src/families/tron/sweep-plan.ts';
import { decodeRaw, encodeRaw, type TronRaw } from '../../src/families/tron/sweep-proto.ts';
import { tronSweepStale } from '../../src/families/tron/sweep-send.ts';
import { tronSweepSigner } from '../../src/families/tron/sweep-sign.ts';
import { createLogger } from '../../src/logger.ts';
import { startTronSweepSim, USDT_ENERGY_NEW } from '../helpers/java-tron-sweep-sim.ts';
import { account, assertSignedByOwners, broadcastInOrder, candidates, FEE_PAYER, keysFor, seed, signOffline, tronAddressOf, USDT, world } from '../helpers/tron-sweep.ts';

// Refunds on Tron (docs/sweeps/tron.md#refunds) through the family's modules against the
// java-tron-shaped node of the sweep tests (test/helpers/java-tron-sweep-sim.ts: signatures
// recovered to their owner, bandwidth, account creation and energy charged by java-tron's rules):
// plan with `refund` set, sign offline with keys from the seed, broadcast in `after` order, and read
// the buyer's and the address's balances back.

const log = createLogger('silent');
const BUYER = hexToTron(`0x${'42'.repeat(20)}`);
const NEW_BUYER = hexToTron(`0x${'43'.repeat(20)}`);
const OTHER_NEW_BUYER = hexToTron(`0x${'44'.repeat(20)}`);
const THIEF = hexToTron(`0x${'66'.repeat(20)}`);
/** A merchant wallet address on the change chain of the seed's first account (the fee payer is …/1/0). */
const WALLET = tronAddressOf(account.derive(1).derive(3).publicKey);
const TRX = (amount: bigint): RefundAsk => ({ symbol: 'TRX', token: null, decimals: 6, amount });
const USDT_OF = (amount: bigint): RefundAsk => ({ symbol: 'USDT', token: USDT, decimals: 6, amount });
const [d0, d1, d2, d3] = candidates([0, 1, 2, 3]) as [SweepCandidate, SweepCandidate, SweepCandidate, SweepCandidate];

type World = ReturnType<typeof world>;

async function plan(w: World, candidate: SweepCandidate, ask: RefundAsk, o: { to?: string; feePayer?: string | null } = {}): Promise<SweepPlan> {
  const to = o.to ?? BUYER;
  const feePayer = o.feePayer ?? null;
  const parts = await tronSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [candidate], to, feePayer, min: {}, refund: ask });
  return {
    format: 'chaingate-sweep-plan/1',
    id: 'test',
    kind: 'refund',
    chain: 'tron',
    family: 'tron',
    network: 'MAINNET',
    testnet: false,
    to,
    feePayer,
    createdAt: new Date().toISOString(),
    refund: { paymentId: 'PAY-REFUND-TEST-0001', symbol: ask.symbol, token: ask.token, decimals: ask.decimals, amount: ask.amount.toString() },
    ...parts,
  };
}

/** Sign offline, check every signature recovers its owner, check the plan is not stale, broadcast in order. */
async function refund(w: World, p: SweepPlan): Promise<Map<string, bigint>> {
  const signed = signOffline(p, keysFor(p));
  assertSignedByOwners(p, signed);
  assert.equal(await tronSweepStale(w.network, w.config, p), null);
  return broadcastInOrder(w, p, signed);
}

const kinds = (p: SweepPlan) => p.transactions.map((tx) => `${(tx.payload as TronSweepPayload).kind}${tx.after.length ? `<${tx.after.join('+')}` : ''}`);
const left = (p: SweepPlan) => p.deposits[0]!.leftBehind.map((l) => `${l.holding.amount} ${l.holding.symbol}: ${l.reason}`);

describe('tron refunds: plan, sign offline, broadcast on a java-tron-shaped node', () => {
  test('an overpayment refunded, in TRX and in USDT with lent energy: the buyer receives exactly the refund; the rest stays', async (t) => {
    const sim = await startTronSweepSim({ tokens: [USDT] });
    t.after(() => sim.close());
    const w = world(sim);
    sim.fund(BUYER, 1_000_000n);
    sim.fund(d0.address, 12_000_000n);
    sim.mintToken(USDT, d1.address, 25_000_000n);
    sim.fund(FEE_PAYER, 50_000_000n);
    sim.stake(FEE_PAYER, 100_000_000_000n);

    // TRX: one transfer; its bandwidth is within the address's free points, so the buyer gets 2 TRX and 10 stay.
    const trx = await plan(w, d0, TRX(2_000_000n));
    assert.deepEqual(kinds(trx), ['trx']);
    assert.deepEqual([trx.deposits[0]!.moves.map((m) => `${m.amount} ${m.symbol}`), trx.deposits[0]!.fee], [['2000000 TRX'], '0']);
    assert.deepEqual(left(trx), ['10000000 TRX: not refunded: stays on the address']);
    await refund(w, trx);
    assert.equal(sim.trx(BUYER), 1_000_000n + 2_000_000n, 'the buyer received exactly the refund');
    assert.equal(sim.trx(d0.address), 10_000_000n, 'the rest is still on the deposit');

    // USDT from a deposit that never held TRX: the fee payer creates its account, lends energy, takes it back.
    const usdt = await plan(w, d1, USDT_OF(5_000_000n), { feePayer: FEE_PAYER });
    assert.deepEqual(kinds(usdt), ['activate', 'delegate<tx-0', 'token<tx-1', 'undelegate<tx-2']);
    // Its fee: the fee payer's 1.1 TRX for the new account (its delegate and undelegate within its free points) and the transfer's fee limit, which lent energy leaves unburned.
    const feeLimit = ((USDT_ENERGY_NEW * 120n + 99n) / 100n) * 100n;
    assert.deepEqual([usdt.deposits[0]!.moves.map((m) => `${m.amount} ${m.symbol}`), usdt.deposits[0]!.fee], [['5000000 USDT'], (1_100_000n + feeLimit).toString()]);
    assert.deepEqual(left(usdt), ['20000000 USDT: not refunded: stays on the address']);
    const fees = await refund(w, usdt);
    assert.deepEqual([...fees.values()], [1_100_000n, 0n, 0n, 0n], 'the node burned 1.1 TRX for the account and nothing for energy or bandwidth');
    assert.equal(sim.token(USDT, BUYER), 5_000_000n);
    assert.equal(sim.token(USDT, d1.address), 20_000_000n);
    assert.equal(sim.trx(d1.address), 0n, 'the deposit burned nothing');
    assert.equal(sim.delegatedTo(d1.address), 0n, 'the energy was taken back');
  });

  test('full refunds: TRX to a new account pays its creation out of the refund, or the fee payer creates it; USDT by a TRX top-up', async (t) => {
    const sim = await startTronSweepSim({ tokens: [USDT] });
    t.after(() => sim.close());
    const w = world(sim);
    sim.fund(d0.address, 5_000_000n);
    sim.fund(d3.address, 5_000_000n);
    sim.mintToken(USDT, d2.address, 7_500_000n);
    sim.fund(FEE_PAYER, 100_000_000n);

    // Nothing stays to pay the 1.1 TRX that creating the buyer's account burns: the refund pays it.
    const own = await plan(w, d0, TRX(5_000_000n), { to: NEW_BUYER });
    assert.deepEqual([own.deposits[0]!.moves[0]!.amount, own.deposits[0]!.fee], ['3900000', '1100000']);
    assert.deepEqual(left(own), []);
    const fees = await refund(w, own);
    assert.deepEqual([...fees.values()], [1_100_000n], 'the node burned what the plan said');
    assert.equal(sim.trx(NEW_BUYER), 3_900_000n);
    assert.equal(sim.trx(d0.address), 0n);

    // With a fee payer, it creates the buyer's account first and the buyer receives the whole refund.
    const paid = await plan(w, d3, TRX(5_000_000n), { to: OTHER_NEW_BUYER, feePayer: FEE_PAYER });
    assert.deepEqual(kinds(paid), ['activate', 'trx<tx-0']);
    assert.deepEqual([paid.deposits[0]!.moves[0]!.amount, paid.deposits[0]!.fee], ['5000000', '1100000']);
    assert.deepEqual([...(await refund(w, paid)).values()], [1_100_000n, 0n], 'the fee payer burned the creation, the address nothing (free points)');
    assert.equal(sim.trx(OTHER_NEW_BUYER), 5_000_000n);
    assert.equal(sim.trx(d3.address), 0n);

    // USDT: the fee payer has no stake to lend, so it tops the deposit up with the energy's TRX.
    const usdt = await plan(w, d2, USDT_OF(7_500_000n), { feePayer: FEE_PAYER });
    assert.deepEqual(kinds(usdt), ['top-up', 'token<tx-0']);
    assert.deepEqual(usdt.deposits[0]!.moves.map((m) => `${m.amount} ${m.symbol}`), ['7500000 USDT']);
    await refund(w, usdt);
    assert.equal(sim.token(USDT, BUYER), 7_500_000n);
    assert.equal(sim.token(USDT, d2.address), 0n);
    assert.equal(sim.trx(d2.address), ((USDT_ENERGY_NEW * 120n) / 100n) * 100n - USDT_ENERGY_NEW * 100n, 'the top-up\'s 20 % margin stays, as the plan said');
  });

  test('a refund larger than the address holds, or a token refund with no TRX and no fee payer, is refused by the planner', async (t) => {
    const sim = await startTronSweepSim({ tokens: [USDT] });
    t.after(() => sim.close());
    const w = world(sim);
    sim.fund(BUYER, 1_000_000n);
    sim.fund(d0.address, 12_000_000n);
    sim.mintToken(USDT, d1.address, 25_000_000n);
    const refused = (p: Promise<unknown>, pattern: RegExp) => assert.rejects(p, (err: unknown) => err instanceof UsageError && pattern.test(err.message));
    await refused(plan(w, d0, TRX(13_000_000n)), /holds 12 TRX: less than the refund of 13 TRX$/);
    await refused(plan(w, d1, USDT_OF(25_000_001n), { feePayer: FEE_PAYER }), /holds 25 USDT: less than the refund of 25\.000001 USDT$/);
    await refused(plan(w, d1, USDT_OF(5_000_000n)), /holds 0 TRX, and its USDT transfer may burn up to 15\.6342 TRX of energy and bandwidth: pass --fee-payer/);
    await refused(plan(w, d0, TRX(1_000_000n), { to: d0.address }), /goes back to the address it comes from/);
    assert.equal(sim.accepted.length, 0);
  });

  test("a refund from a merchant wallet address (no derivation index): the signer finds its key on the seed's change chain; the address burns its own TRX for energy", async (t) => {
    const sim = await startTronSweepSim({ tokens: [USDT] });
    t.after(() => sim.close());
    const w = world(sim);
    const wallet: SweepCandidate = { address: WALLET, derivationIndex: null, source: 'wallet' };
    sim.fund(WALLET, 40_000_000n);
    sim.mintToken(USDT, WALLET, 10_000_000n);
    const p = await plan(w, wallet, USDT_OF(4_000_000n));
    const feeLimit = ((USDT_ENERGY_NEW * 120n + 99n) / 100n) * 100n;
    assert.deepEqual(kinds(p), ['token']);
    assert.equal(p.deposits[0]!.fee, feeLimit.toString());
    assert.deepEqual(left(p), ['6000000 USDT: not refunded: stays on the address', `40000000 TRX: not refunded: stays on the address, less at most ${Number(feeLimit) / 1e6} TRX the transfer burns`]);
    assert.equal(tronSweepSigner.deriveKey(seed(), wallet, p, 20).address, WALLET);
    assert.equal(tronSweepSigner.deriveKeyFromAccount!(account.toBase58(), wallet, p, 20).address, WALLET);
    assert.throws(() => tronSweepSigner.deriveKey(seed(), wallet, p, 3), /the wallet address T\w+ is not an address of this seed \(looked at m\/44'\/195'\/0'\/0\/i and m\/44'\/195'\/0'\/1\/i for i < 3, and m\/44'\/195'\/N'\/0\/0 for N < 20\)/);
    const fees = await refund(w, p);
    assert.equal(sim.token(USDT, BUYER), 4_000_000n);
    assert.equal(sim.token(USDT, WALLET), 6_000_000n);
    assert.equal(sim.trx(WALLET), 40_000_000n - USDT_ENERGY_NEW * 100n, 'the energy burned, within the planned fee; bandwidth from free points');
    assert.ok([...fees.values()][0]! <= feeLimit);
  });

  test('a tampered refund plan is refused by the signer: another buyer, a larger amount, another refund, another account created', async (t) => {
    const sim = await startTronSweepSim({ tokens: [USDT] });
    t.after(() => sim.close());
    const w = world(sim);
    sim.fund(BUYER, 1_000_000n);
    sim.fund(THIEF, 1_000_000n);
    sim.fund(d0.address, 12_000_000n);
    sim.mintToken(USDT, d1.address, 25_000_000n);
    sim.fund(FEE_PAYER, 50_000_000n);
    sim.stake(FEE_PAYER, 100_000_000_000n);
    const trx = await plan(w, d0, TRX(2_000_000n));
    const keys = keysFor(trx);
    const withRaw = (p: SweepPlan, id: string, edit: (raw: TronRaw) => TronRaw): SweepPlan => ({
      ...p,
      transactions: p.transactions.map((tx) => {
        if (tx.id !== id) return tx;
        const payload = tx.payload as TronSweepPayload;
        return { ...tx, payload: { ...payload, rawData: Buffer.from(encodeRaw(edit(decodeRaw(Buffer.from(payload.rawData, 'hex'))))).toString('hex') } };
      }),
    });
    const moves = (p: SweepPlan, amount: string): SweepPlan => ({ ...p, deposits: p.deposits.map((d) => ({ ...d, moves: d.moves.map((m) => ({ ...m, amount })) })) });

    // The summary names another buyer than the transaction pays.
    assert.throws(() => tronSweepSigner.sign({ ...trx, to: THIEF }, keys), /pays T\w+, not the plan's destination/);
    // The transaction pays more than the refund, the summary changed to match.
    const more = moves(withRaw(trx, 'tx-0', (raw) => ({ ...raw, contract: { ...raw.contract, amount: 3_000_000n } as TronRaw['contract'] })), '3000000');
    assert.throws(() => tronSweepSigner.sign(more, keys), /pays the buyer 3000000 TRX \(atomic\), but the refund is 2000000 \(less its fee at most\): refused/);
    // The refund's amount changed alone.
    assert.throws(() => tronSweepSigner.sign({ ...trx, refund: { ...trx.refund!, amount: '1000000' } }, keys), /pays the buyer 2000000 TRX \(atomic\), but the refund is 1000000/);

    const usdt = await plan(w, d1, USDT_OF(5_000_000n), { feePayer: FEE_PAYER });
    const usdtKeys = keysFor(usdt);
    // The token transfer's amount raised in its raw_data: the transactions no longer match the summary.
    const token = usdt.transactions.find((tx) => (tx.payload as TronSweepPayload).kind === 'token')!;
    const all = withRaw(usdt, token.id, (raw) => ({ ...raw, contract: { ...raw.contract, data: (raw.contract as { data: string }).data.slice(0, 72) + (25_000_000n).toString(16).padStart(64, '0') } as TronRaw['contract'] }));
    assert.throws(() => tronSweepSigner.sign(all, usdtKeys), /its transactions move 25000000 USDT \(atomic\), the summary shows 5000000: refused/);
    // ...and with the summary changed too, the refund check refuses it.
    assert.throws(() => tronSweepSigner.sign(moves(all, '25000000'), usdtKeys), /pays the buyer 25000000 USDT \(atomic\), but the refund is 5000000: refused/);
    // The fee payer creating some other account than the deposit (or, for TRX, the buyer).
    const stranger = withRaw(usdt, 'tx-0', (raw) => ({ ...raw, contract: { ...raw.contract, account: `41${'66'.repeat(20)}` } as TronRaw['contract'] }));
    assert.throws(() => tronSweepSigner.sign(stranger, usdtKeys), /the new account T\w+ is not one of the plan's deposits/);
    // The untouched plans sign, and nothing was sent.
    assert.equal(tronSweepSigner.sign(trx, keys).length, 1);
    assert.equal(tronSweepSigner.sign(usdt, usdtKeys).length, 4);
    assert.equal(sim.accepted.length, 0);
  });
});
