import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Mnemonic } from 'ethers';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { hexToTron } from '../../src/families/tron/address.ts';
import { tronSweepPlanner } from '../../src/families/tron/sweep-plan.ts';
import type { TronSweepPayload } from '../../src/families/tron/sweep-payload.ts';
import { decodeRaw, decodeSigned } from '../../src/families/tron/sweep-proto.ts';
import { tronSweepSender, tronSweepStale } from '../../src/families/tron/sweep-send.ts';
import { tronSweepSigner } from '../../src/families/tron/sweep-sign.ts';
import { createLogger } from '../../src/logger.ts';
import { startTronSweepSim, USDT_ENERGY_HOLDER, USDT_ENERGY_NEW } from '../helpers/java-tron-sweep-sim.ts';
import { assertBurnedAsPlanned, assertSignedByOwners, broadcastInOrder, candidates, FEE_PAYER, keysFor, pool, signOffline, USDT, world } from '../helpers/tron-sweep.ts';

// The Tron sweep through the family's modules against a java-tron-shaped HTTP API
// (test/helpers/java-tron-sweep-sim.ts: signatures recovered, expiration and TaPoS checked,
// bandwidth, account creation and energy charged by java-tron's rules): plan, sign with keys from
// the seed as the offline machine does, broadcast in `after` order and follow to solidified.

const log = createLogger('silent');
const COLD = hexToTron(`0x${'42'.repeat(20)}`);
const THIEF = hexToTron(`0x${'66'.repeat(20)}`);

const planOf = (parts: Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>, to = COLD): SweepPlan => ({
  format: 'chaingate-sweep-plan/1',
  id: 'test',
  kind: 'sweep',
  chain: 'tron',
  family: 'tron',
  network: 'MAINNET',
  testnet: false,
  to,
  feePayer: FEE_PAYER,
  createdAt: new Date().toISOString(),
  ...parts,
});

test('tron sweep with delegated energy: TRX and USDT from deposits that never held TRX reach the cold address; signatures recover the deposits; the energy comes back', async (t) => {
  const sim = await startTronSweepSim({ tokens: [USDT] });
  t.after(() => sim.close());
  const w = world(sim);
  const [d0, d1, d2, d3, d4] = pool.map((p) => p.address);
  sim.fund(COLD, 1_000_000n);
  sim.fund(FEE_PAYER, 50_000_000n);
  sim.stake(FEE_PAYER, 100_000_000_000n); // 100,000 TRX staked for energy (≈ 9.5 energy a TRX at mainnet's totals), lendable
  // 0: TRX only; 1, 2: USDT only (accounts that do not exist); 3: USDT and TRX; 4: never paid.
  sim.fund(d0!, 12_345_678n);
  sim.mintToken(USDT, d1!, 25_000_000n);
  sim.mintToken(USDT, d2!, 7_500_000n);
  sim.mintToken(USDT, d3!, 1_000_000n);
  sim.fund(d3!, 2_000_000n);

  const parts = await tronSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: candidates([0, 1, 2, 3, 4]), to: COLD, feePayer: FEE_PAYER, min: {} });
  const plan = planOf(parts);
  assert.deepEqual(plan.skipped, [{ address: d4, reason: 'holds nothing' }]);
  // Deposit 3's two transactions pass its 600 free bandwidth points: its TRX transfer burns its bytes at 1,000 sun.
  const d3Burn = BigInt((plan.transactions.at(-1)!.payload as TronSweepPayload).bandwidth) * 1000n;
  // A deposit's fee is every fee of its transactions, whoever pays: the token transfer's fee limit
  // (the most its energy can burn; lent energy leaves it unburned), the fee payer's 1.1 TRX for a
  // new account (1 TRX CreateNewAccountFeeInSystemContract + 0.1 TRX getCreateAccountFee: free
  // points never pay for a creation), and the fee payer's delegate and undelegate: free within its
  // 600 points for the first deposit (279 + 281 bytes), burned at 1,000 sun a byte after.
  const feeLimit = ((USDT_ENERGY_NEW * 120n + 99n) / 100n) * 100n;
  const [delegateBytes, undelegateBytes] = ['delegate', 'undelegate'].map((k) => BigInt((plan.transactions.find((tx) => (tx.payload as TronSweepPayload).kind === k)!.payload as TronSweepPayload).bandwidth));
  const lendBurn = (delegateBytes! + undelegateBytes!) * 1000n;
  assert.deepEqual(plan.deposits.map((d) => [d.derivationIndex, d.moves.map((m) => `${m.amount} ${m.symbol}`), d.fee]), [
    [0, ['12345678 TRX'], '0'],
    [1, ['25000000 USDT'], (feeLimit + 1_100_000n).toString()],
    [2, ['7500000 USDT'], (feeLimit + 1_100_000n + lendBurn).toString()],
    [3, ['1000000 USDT', `${2_000_000n - d3Burn} TRX`], (feeLimit + lendBurn + d3Burn).toString()],
  ]);
  const kinds = plan.transactions.map((tx) => `${(tx.payload as TronSweepPayload).kind}${tx.after.length ? `<${tx.after.join('+')}` : ''}`);
  assert.deepEqual(kinds, [
    'trx',
    'activate',
    'delegate<tx-1',
    'token<tx-2',
    'undelegate<tx-3',
    'activate',
    'delegate<tx-5',
    'token<tx-6',
    'undelegate<tx-7',
    'delegate',
    'token<tx-9',
    'undelegate<tx-10',
    'trx<tx-10',
  ]);

  const keys = keysFor(plan);
  const signed = signOffline(plan, keys);
  assertSignedByOwners(plan, signed);

  assert.equal(await tronSweepStale(w.network, w.config, plan), null);
  const fees = await broadcastInOrder(w, plan, signed);
  assert.equal(sim.token(USDT, COLD), 33_500_000n);
  assert.equal(sim.trx(COLD), 1_000_000n + 12_345_678n + 2_000_000n - d3Burn);
  for (const d of [d0, d1, d2, d3]) {
    assert.equal(sim.token(USDT, d!), 0n);
    assert.equal(sim.trx(d!), 0n, 'no deposit keeps a sun');
    assert.equal(sim.delegatedTo(d!), 0n, 'the energy was taken back');
  }
  assert.equal(sim.lendable(FEE_PAYER), 100_000_000_000n);
  const payerSpent = 50_000_000n - sim.trx(FEE_PAYER)!;
  assert.equal(payerSpent, 2n * 1_100_000n + [...fees.entries()].filter(([id]) => /delegate|undelegate/.test(kinds[Number(id.slice(3))]!)).reduce((s, [, f]) => s + f, 0n));
  const depositFees = [...fees.entries()].filter(([id]) => /^(trx|token)/.test(kinds[Number(id.slice(3))]!)).reduce((s, [, f]) => s + f, 0n);
  assert.equal(depositFees, d3Burn, 'the deposits burned nothing but deposit 3\'s second transaction\'s bandwidth: lent energy, free points');
  assertBurnedAsPlanned(plan, signed, sim);
  // Issue 45: the first undelegate is within the fee payer's free points, and burns nothing, as planned.
  const undelegate = plan.transactions.find((tx) => (tx.payload as TronSweepPayload).kind === 'undelegate')!;
  assert.equal((undelegate.payload as TronSweepPayload).fee, '0');
  assert.equal(fees.get(undelegate.id), 0n);
  const bandwidth = plan.transactions.map((tx) => `${(tx.payload as TronSweepPayload).kind} ${(tx.payload as TronSweepPayload).bandwidth}`);
  t.diagnostic(`fee payer spent ${payerSpent} sun (2 accounts created at 1.1 TRX, its own bandwidth burned past 600 free points); bandwidth per transaction: ${bandwidth.join(', ')}`);

  // Broadcasting again sends nothing: the node knows every transaction.
  const sends = sim.calls['/wallet/broadcasthex'] ?? 0;
  for (const s of signed) assert.deepEqual(await tronSweepSender.broadcast(w.network, w.config, s), { accepted: true });
  assert.equal(sim.calls['/wallet/broadcasthex'] ?? 0, sends, 'never sent twice');
});

test('tron sweep by TRX top-up when the fee payer has no stake: the energy burns from the top-up; the energy figures are USDT mainnet\'s', async (t) => {
  const sim = await startTronSweepSim({ tokens: [USDT] });
  t.after(() => sim.close());
  const w = world(sim);
  const [, d1, d2] = pool.map((p) => p.address);
  sim.fund(COLD, 1_000_000n);
  sim.fund(FEE_PAYER, 100_000_000n);
  sim.mintToken(USDT, d1!, 25_000_000n);
  sim.mintToken(USDT, d2!, 5_000_000n);
  const plan = planOf(await tronSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: candidates([1, 2]), to: COLD, feePayer: FEE_PAYER, min: {} }));
  assert.deepEqual(plan.transactions.map((tx) => (tx.payload as TronSweepPayload).kind), ['top-up', 'token', 'top-up', 'token']);
  const energies = plan.transactions.filter((tx) => (tx.payload as TronSweepPayload).kind === 'token').map((tx) => BigInt((tx.payload as TronSweepPayload).energy));
  assert.deepEqual(energies, [USDT_ENERGY_NEW, USDT_ENERGY_NEW], 'the cold address holds no USDT when planning');
  const signed = signOffline(plan, keysFor(plan));
  const fees = await broadcastInOrder(w, plan, signed);
  assert.equal(sim.token(USDT, COLD), 30_000_000n);
  // The top-ups create the deposits' accounts: 1.1 TRX each, as planned; the energy within the fee limits.
  assertBurnedAsPlanned(plan, signed, sim);
  assert.deepEqual(plan.transactions.filter((tx) => (tx.payload as TronSweepPayload).kind === 'top-up').map((tx) => [(tx.payload as TronSweepPayload).fee, fees.get(tx.id)]), [['1100000', 1_100_000n], ['1100000', 1_100_000n]]);
  const burned = [...fees.values()];
  // The first transfer creates the cold address's USDT balance (130,285 energy); the second finds it (64,285).
  assert.equal(sim.info(signOffline(plan, keysFor(plan))[1]!.txid)?.receipt.energy_usage_total, Number(USDT_ENERGY_NEW));
  const left = [d1, d2].map((d) => sim.trx(d!)!);
  t.diagnostic(`top-up sweep: fees per transaction ${burned.join(', ')} sun (energy at 100 sun); left on the deposits for the next plan: ${left.join(', ')} sun`);
  assert.equal(left[0], (USDT_ENERGY_NEW * 120n) / 100n * 100n - USDT_ENERGY_NEW * 100n, 'the 20 % margin stays on the deposit');
  assert.equal(left[1], (USDT_ENERGY_NEW * 120n) / 100n * 100n - USDT_ENERGY_HOLDER * 100n);
  // A later plan sweeps what the top-ups left; the same day, the token transfer has used 345 of the
  // 600 free points, so the TRX transfer burns its bytes at 1,000 sun.
  const again = planOf(await tronSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: candidates([1, 2]), to: COLD, feePayer: null, min: {} }));
  const burn = BigInt((again.transactions[0]!.payload as TronSweepPayload).bandwidth) * 1000n;
  assert.deepEqual(again.deposits.map((d) => [d.moves.map((m) => `${m.amount} ${m.symbol}`), d.fee]), left.map((l) => [[`${l - burn} TRX`], burn.toString()]));
});

test('tron signer refuses a tampered destination, a foreign top-up and a wrong seed; an expired plan is refused by signer and broadcast, nothing sent', async (t) => {
  const sim = await startTronSweepSim({ tokens: [USDT] });
  t.after(() => sim.close());
  const w = world(sim);
  const [d0, d1] = pool.map((p) => p.address);
  sim.fund(COLD, 1_000_000n);
  sim.fund(FEE_PAYER, 100_000_000n);
  sim.fund(d0!, 5_000_000n);
  sim.mintToken(USDT, d1!, 9_000_000n);
  const parts = await tronSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: candidates([0, 1]), to: COLD, feePayer: FEE_PAYER, min: {} });
  const plan = planOf(parts);
  const keys = keysFor(plan);

  await assert.rejects(tronSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: candidates([1]), to: COLD, feePayer: null, min: {} }), /needs --fee-payer/);
  // The summary's destination changed by hand: the transactions still pay the old one.
  assert.throws(() => tronSweepSigner.sign({ ...plan, to: THIEF }, keys), /not the plan's destination/);
  // A plan built for the thief, spliced under the honest summary.
  sim.fund(THIEF, 1_000_000n);
  const evil = planOf(await tronSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: candidates([0, 1]), to: THIEF, feePayer: FEE_PAYER, min: {} }), THIEF);
  const spliced = { ...plan, transactions: plan.transactions.map((tx, i) => ({ ...tx, payload: evil.transactions[i]!.payload })) };
  assert.throws(() => tronSweepSigner.sign(spliced, keys), /pays T\w+, not the plan's destination/);
  // A top-up larger than the transfer after it may burn (the fee payer's TRX drained to a deposit).
  const topUp = plan.transactions.find((tx) => (tx.payload as TronSweepPayload).kind === 'top-up')!;
  const raw = decodeRaw(Buffer.from((topUp.payload as TronSweepPayload).rawData, 'hex'));
  const { encodeRaw } = await import('../../src/families/tron/sweep-proto.ts');
  const big = encodeRaw({ ...raw, contract: { ...raw.contract, amount: 90_000_000n } as typeof raw.contract });
  const drained = { ...plan, transactions: plan.transactions.map((tx) => (tx.id === topUp.id ? { ...tx, payload: { ...(tx.payload as object), rawData: Buffer.from(big).toString('hex') } } : tx)) };
  assert.throws(() => tronSweepSigner.sign(drained, keys), /a top-up of 90000000 sun, more than/);
  // Amounts that differ from the summary.
  const inflated = { ...plan, deposits: plan.deposits.map((d) => ({ ...d, moves: d.moves.map((m) => ({ ...m, amount: '1' })) })) };
  assert.throws(() => tronSweepSigner.sign(inflated, keys), /the summary shows 1: refused/);
  // A seed that is not the pool's.
  const other = Uint8Array.from(Buffer.from(Mnemonic.fromPhrase('legal winner thank year wave sausage worth useful legal winner thank yellow').computeSeed().slice(2), 'hex'));
  assert.throws(() => tronSweepSigner.deriveKey(other, plan.deposits[0]!, plan, 20), /no account m\/44'\/195'\/N'/);

  // Signed, then held for more than 24 hours: the node's head passes the expiration.
  const signed = tronSweepSigner.sign(plan, keys);
  sim.advance(25n * 3_600_000n);
  assert.match((await tronSweepStale(w.network, w.config, plan)) ?? '', /expired .* plan again/);
  const sends = sim.calls['/wallet/broadcasthex'] ?? 0;
  const answer = await tronSweepSender.broadcast(w.network, w.config, signed[0]!);
  assert.equal(answer.accepted, false);
  assert.match((answer as { error: string }).error, /expired .*nothing was sent; run sweep plan again/);
  assert.equal(sim.calls['/wallet/broadcasthex'] ?? 0, sends);
  assert.throws(() => tronSweepSigner.signAt(plan, keys, Date.now() + 25 * 3_600_000), /the plan expired .* plan again/);

  // A node's refusal comes back with its code and message: a signature by another key.
  const forged = signed[0]!;
  const { raw: rawBytes } = decodeSigned(Buffer.from(forged.raw, 'hex'));
  const wrongKey = keys.get(d1!)!;
  const { signDigest } = await import('../../src/families/tron/sweep-sign.ts');
  const { encodeSigned } = await import('../../src/families/tron/sweep-proto.ts');
  const sim2 = await startTronSweepSim({ tokens: [USDT] });
  t.after(() => sim2.close());
  const w2 = world(sim2);
  sim2.fund(d0!, 5_000_000n);
  const fresh = planOf(await tronSweepPlanner.plan({ network: w2.network, config: w2.config, log, candidates: candidates([0]), to: COLD, feePayer: null, min: {} }).catch(() => ({ deposits: [], skipped: [], transactions: [] })));
  assert.equal(fresh.transactions.length, 0, 'a cold address without an account is refused for TRX moves');
  sim2.fund(COLD, 1n);
  const ok = planOf(await tronSweepPlanner.plan({ network: w2.network, config: w2.config, log, candidates: candidates([0]), to: COLD, feePayer: null, min: {} }));
  const okRaw = Buffer.from((ok.transactions[0]!.payload as TronSweepPayload).rawData, 'hex');
  const badSig = { id: 'tx-0', txid: createHash('sha256').update(okRaw).digest('hex'), raw: Buffer.from(encodeSigned(okRaw, [signDigest(createHash('sha256').update(okRaw).digest('hex'), wrongKey.privateKey)])).toString('hex') };
  const refused = await tronSweepSender.broadcast(w2.network, w2.config, badSig);
  assert.equal(refused.accepted, false);
  assert.match((refused as { error: string }).error, /^SIGERROR: Validate signature error/);
  assert.ok(rawBytes.length > 0);
});
