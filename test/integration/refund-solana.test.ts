import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { address } from '@solana/kit';
import { UsageError } from '../../src/domain/errors.ts';
import { createLogger } from '../../src/logger.ts';
import type { RefundAsk, SweepCandidate, SweepPlan } from '../../src/families/sweep.ts';
import { solanaKeyAt } from '../../src/families/solana/ed25519-keys.ts';
import { solanaSweepPlanner } from '../../src/families/solana/sweep-plan.ts';
import { solanaSweepStale } from '../../src/families/solana/sweep-send.ts';
import { solanaSweepSigner } from '../../src/families/solana/sweep-sign.ts';
import { broadcastAll, keysFor, planOf, startSweepCluster, sweepWorld, type SweepCluster } from '../helpers/litesvm-sweep-rpc.ts';

// Solana refunds on Solana's real SVM (litesvm behind Agave-shaped JSON-RPC, as the sweep tests):
// the planner moves exactly the refund from one address, the offline signer derives its key from a
// seed and checks the message, the sender broadcasts; balances are read back from the runtime.

const log = createLogger('silent');
const SOL = 1_000_000_000n;

const usdcAsk = (cluster: SweepCluster, amount: bigint): RefundAsk => ({ symbol: 'USDC', token: cluster.usdc.address, decimals: 6, amount });
const solAsk = (amount: bigint): RefundAsk => ({ symbol: 'SOL', token: null, decimals: 9, amount });

async function setup(t: { after(fn: () => unknown): void }) {
  const cluster = await startSweepCluster();
  t.after(() => cluster.close());
  const w = sweepWorld(cluster);
  const seed = randomBytes(64);
  const buyer = solanaKeyAt(randomBytes(64), 0).address;
  /** planner → plan file → signer (keys from the seed) → sender, as `refund plan`, `sweep sign`, `refund broadcast` do. */
  const plan = async (candidate: SweepCandidate, refund: RefundAsk, feePayer: string | null = null, to = buyer) => {
    const parts = await solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [candidate], to, feePayer, min: {}, refund });
    return planOf(parts, to, feePayer, { kind: 'refund', refund: { paymentId: 'pay_test', symbol: refund.symbol, token: refund.token, decimals: refund.decimals, amount: refund.amount.toString() } });
  };
  const run = async (p: SweepPlan) => {
    assert.equal(await solanaSweepStale(w.network, w.config, p), null, 'not stale before the send');
    const statuses = await broadcastAll(cluster, w, solanaSweepSigner.sign(p, keysFor(seed, p)));
    for (const s of statuses) assert.equal(s.state, 'final');
    return statuses;
  };
  return { cluster, w, seed, buyer, plan, run };
}

test('solana refund: an overpaid USDC deposit refunds the excess to the buyer\'s new token account; the rest stays in the deposit\'s open account, the fee payer pays', async (t) => {
  const { cluster, seed, buyer, plan, run } = await setup(t);
  const payer = solanaKeyAt(seed, 0).address;
  const deposit = solanaKeyAt(seed, 4).address;
  cluster.fund(address(payer), SOL);
  await cluster.sendToken(cluster.usdc, address(deposit), 25_000_000n);
  const ataRent = cluster.svm.minimumBalanceForRentExemption(165n);

  const p = await plan({ address: deposit, derivationIndex: 4, source: 'ab12cd34' }, usdcAsk(cluster, 5_000_000n), payer);
  const d = p.deposits[0]!;
  assert.deepEqual(d.moves, [{ symbol: 'USDC', token: cluster.usdc.address, decimals: 6, amount: '5000000' }]);
  assert.equal(d.fee, (10_000n + ataRent).toString(), 'what the transaction costs (the fee payer pays it): two signatures and the buyer\'s new token account');
  assert.deepEqual(d.leftBehind.map((l) => [l.holding.symbol, l.holding.amount, l.reason]), [
    ['USDC', '20000000', 'not refunded: the rest of the USDC stays on the address'],
    ['SOL', ataRent.toString(), 'not refunded: rent of its token account, which stays open'],
  ]);
  assert.deepEqual(p.transactions[0]!.signers, [payer, deposit]);

  const payerBefore = cluster.lamports(address(payer));
  const [status] = await run(p);
  assert.equal(cluster.tokenBalance(cluster.usdc, address(buyer)), 5_000_000n, 'the buyer received exactly the refund');
  assert.equal(cluster.tokenBalance(cluster.usdc, address(deposit)), 20_000_000n, 'the remainder stays, its token account open');
  assert.equal(payerBefore - cluster.lamports(address(payer)), BigInt(status!.fee!) + ataRent, 'the fee payer paid the fee and the buyer\'s token account');
});

test('solana refund: an overpaid SOL deposit pays its own fee out of what stays; the buyer receives exactly the refund', async (t) => {
  const { cluster, seed, buyer, plan, run } = await setup(t);
  const deposit = solanaKeyAt(seed, 2).address;
  cluster.fund(address(deposit), 500_000_000n);
  cluster.fund(address(buyer), 10_000_000n);

  const p = await plan({ address: deposit, derivationIndex: 2, source: 'ab12cd34' }, solAsk(120_000_000n));
  const d = p.deposits[0]!;
  assert.deepEqual(d.moves, [{ symbol: 'SOL', token: null, decimals: 9, amount: '120000000' }]);
  assert.equal(d.fee, '5000');
  assert.deepEqual(d.leftBehind.map((l) => [l.holding.amount, l.reason]), [['379995000', 'not refunded: it stays on the address for the next sweep']]);
  assert.deepEqual(p.transactions[0]!.signers, [deposit], 'no fee payer: the deposit signs alone');
  await run(p);
  assert.equal(cluster.lamports(address(buyer)), 10_000_000n + 120_000_000n);
  assert.equal(cluster.lamports(address(deposit)), 500_000_000n - 120_000_000n - 5_000n);
});

test('solana refund: a full refund of SOL pays the fee out of the refund; a full refund of USDC leaves the emptied token account open', async (t) => {
  const { cluster, seed, buyer, plan, run } = await setup(t);
  const payer = solanaKeyAt(seed, 0).address;
  const solDeposit = solanaKeyAt(seed, 5).address;
  const usdcDeposit = solanaKeyAt(seed, 6).address;
  cluster.fund(address(payer), SOL);
  cluster.fund(address(solDeposit), 300_000_000n);
  await cluster.sendToken(cluster.usdc, address(usdcDeposit), 12_345_678n);

  const full = await plan({ address: solDeposit, derivationIndex: 5, source: 'ab12cd34' }, solAsk(300_000_000n));
  assert.deepEqual(full.deposits[0]!.moves.map((m) => m.amount), ['299995000'], 'the amount less the fee');
  assert.equal(full.deposits[0]!.fee, '5000');
  assert.deepEqual(full.deposits[0]!.leftBehind, []);
  await run(full);
  assert.equal(cluster.lamports(address(buyer)), 300_000_000n - 5_000n);
  assert.equal(cluster.lamports(address(solDeposit)), 0n, 'nothing stays');

  const tokens = await plan({ address: usdcDeposit, derivationIndex: 6, source: 'ab12cd34' }, usdcAsk(cluster, 12_345_678n), payer);
  assert.deepEqual(tokens.deposits[0]!.leftBehind.map((l) => l.reason), ['not refunded: rent of its token account, which stays open']);
  await run(tokens);
  assert.equal(cluster.tokenBalance(cluster.usdc, address(buyer)), 12_345_678n);
  assert.equal(cluster.tokenBalance(cluster.usdc, address(usdcDeposit)), 0n, 'the token account is empty and still open');
});

test('solana refund: more than the address holds, a token refund without SOL for its fee, or a remainder below rent is refused by the planner; the fee moves into the refund when what stays cannot carry it', async (t) => {
  const { cluster, seed, plan } = await setup(t);
  const payer = solanaKeyAt(seed, 0).address;
  const deposit = solanaKeyAt(seed, 1).address;
  cluster.fund(address(payer), SOL);
  cluster.fund(address(deposit), 2_000_000n);
  await cluster.sendToken(cluster.usdc, address(deposit), 25_000_000n);
  const candidate = { address: deposit, derivationIndex: 1, source: 'ab12cd34' };
  const refused = (pattern: RegExp) => (err: unknown) => err instanceof UsageError && pattern.test(err.message);

  await assert.rejects(plan(candidate, usdcAsk(cluster, 25_000_001n), payer), refused(/holds 25000000 USDC \(atomic\), less than the refund of 25000001$/));
  await assert.rejects(plan(candidate, solAsk(2_000_001n)), refused(/holds 2000000 SOL \(atomic\), less than the refund of 2000001$/));
  // 2,000,000 lamports cannot pay 5,000 and the buyer's token account (2,039,280).
  await assert.rejects(plan(candidate, usdcAsk(cluster, 1_000_000n)), refused(/holds 2000000 lamports, too little to pay the refund's fee .*: pass --fee-payer/));
  // A new buyer wallet must receive at least the rent-exempt minimum.
  await assert.rejects(plan(candidate, solAsk(500_000n), payer), refused(/the buyer's wallet would hold 500000 lamports, below the 890880/));
  // 1,000,000 stays, 995,000 after the fee: still rent-exempt, so the buyer gets the whole refund.
  assert.deepEqual((await plan(candidate, solAsk(1_000_000n))).deposits[0]!.moves.map((m) => m.amount), ['1000000']);
  // 894,000 stays but only 889,000 after the fee, below rent: the fee comes out of the refund.
  assert.deepEqual((await plan(candidate, solAsk(1_106_000n))).deposits[0]!.moves.map((m) => m.amount), ['1101000']);
  // 500,000 would stay, below rent either way.
  await assert.rejects(plan(candidate, solAsk(1_500_000n), payer), refused(/holds 2000000 lamports: a refund of 1500000 would leave it between 0 and 890880, which Solana refuses .*: refund all 2000000, or at most 1109120$/));
  await assert.rejects(plan(candidate, solAsk(1_500_000n)), refused(/a refund of 1500000 and its fee of 5000 would leave it between 0 and 890880/));
});

test('solana refund: from a merchant wallet (source "wallet", no derivation index) the signer finds the key by searching the seed', async (t) => {
  const { cluster, seed, buyer, plan, run } = await setup(t);
  const merchant = solanaKeyAt(seed, 23).address;
  cluster.fund(address(merchant), 2n * SOL);
  const wallet = { address: merchant, derivationIndex: null, source: 'wallet' };

  const p = await plan(wallet, solAsk(250_000_000n));
  assert.equal(solanaSweepSigner.deriveKey(seed, wallet, p, 50).address, merchant);
  assert.throws(() => solanaSweepSigner.deriveKey(seed, wallet, p, 20), /is not among the seed's first 20 accounts \(m\/44'\/501'\/0'\/0' … m\/44'\/501'\/19'\/0'\)/);
  await run(p);
  assert.equal(cluster.lamports(address(buyer)), 250_000_000n);
  assert.equal(cluster.lamports(address(merchant)), 2n * SOL - 250_000_000n - 5_000n);
});

test('solana refund: the signer refuses a refund plan whose destination, amount or message was changed, or that closes an account', async (t) => {
  const { cluster, seed, plan } = await setup(t);
  const payer = solanaKeyAt(seed, 0).address;
  const deposit = solanaKeyAt(seed, 3).address;
  const thief = solanaKeyAt(randomBytes(64), 0).address;
  cluster.fund(address(payer), SOL);
  cluster.fund(address(deposit), 400_000_000n);
  await cluster.sendToken(cluster.usdc, address(deposit), 9_000_000n);
  const candidate = { address: deposit, derivationIndex: 3, source: 'ab12cd34' };
  const usdc = await plan(candidate, usdcAsk(cluster, 4_000_000n), payer);
  const sol = await plan(candidate, solAsk(100_000_000n));
  const keys = keysFor(seed, usdc);
  assert.equal(solanaSweepSigner.sign(usdc, keys).length, 1, 'the untouched plan signs');

  // The plan's buyer changed by hand: the message still pays the first buyer's token account.
  assert.throws(() => solanaSweepSigner.sign({ ...usdc, to: thief }, keys), /not to the plan's destination/);
  // The message swapped for one made for the thief (summary unchanged).
  const forThief = await plan(candidate, usdcAsk(cluster, 4_000_000n), payer, thief);
  assert.throws(() => solanaSweepSigner.sign({ ...usdc, transactions: forThief.transactions }, keys), /goes to .*, not to the plan's destination/);
  // The amount raised in the summary and the refund, the message left as it was.
  const raised = { ...usdc, refund: { ...usdc.refund!, amount: '9000000' }, deposits: usdc.deposits.map((d) => ({ ...d, moves: d.moves.map((m) => ({ ...m, amount: '9000000' })) })) };
  assert.throws(() => solanaSweepSigner.sign(raised, keys), /move 4000000 of mint .*, the summary shows 9000000: refused/);
  // The message's amount raised, the summary left as it was (transferChecked's u64 sits before its decimals byte, last in the message).
  const tx0 = usdc.transactions[0]!;
  const bytes = Buffer.from((tx0.payload as { message: string }).message, 'base64');
  bytes.writeBigUInt64LE(9_000_000n, bytes.length - 9);
  assert.throws(() => solanaSweepSigner.sign({ ...usdc, transactions: [{ ...tx0, payload: { ...(tx0.payload as object), message: bytes.toString('base64') } }] }, keys), /the transactions move 9000000 of mint .*, the summary shows 4000000: refused/);
  // A SOL refund whose summary shows less than its message sends.
  assert.throws(() => solanaSweepSigner.sign({ ...sol, deposits: sol.deposits.map((d) => ({ ...d, moves: [{ ...d.moves[0]!, amount: '1' }] })) }, keysFor(seed, sol)), /send 100000000 lamports, the summary shows 1: refused/);
  // A sweep's message (it closes the token account and takes every lamport) under a refund's summary.
  const sweep = planOf(await solanaSweepPlanner.plan({ network: sweepWorld(cluster).network, config: sweepWorld(cluster).config, log, candidates: [candidate], to: usdc.to, feePayer: payer, min: {} }), usdc.to, payer);
  assert.throws(() => solanaSweepSigner.sign({ ...usdc, transactions: sweep.transactions }, keys), /a refund closes no token account: refused/);
});
