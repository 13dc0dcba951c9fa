import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { address } from '@solana/kit';
import { createLogger } from '../../src/logger.ts';
import type { SignedSweepTx } from '../../src/families/sweep.ts';
import { solanaKeyAt } from '../../src/families/solana/ed25519-keys.ts';
import { solanaSweepPlanner } from '../../src/families/solana/sweep-plan.ts';
import { solanaSweepSender, solanaSweepStale } from '../../src/families/solana/sweep-send.ts';
import { solanaSweepSigner } from '../../src/families/solana/sweep-sign.ts';
import { associatedTokenAddress } from '../../src/families/solana/sweep-message.ts';
import { broadcastAll, keysFor, planOf, startSweepCluster, sweepWorld } from '../helpers/litesvm-sweep-rpc.ts';

// The Solana sweep on Solana's real SVM (litesvm behind Agave-shaped JSON-RPC,
// test/helpers/litesvm-sweep-rpc.ts): plan over the RPC, sign with keys from a seed as the
// offline machine does, broadcast and follow to finalized. Through the family's modules; the CLI
// drives the same three calls.

const log = createLogger('silent');

const world = sweepWorld;

test('solana sweep: SOL and USDC from 14 deposits reach the cold wallet in packed transactions; rent comes back, no deposit keeps a lamport', async (t) => {
  const cluster = await startSweepCluster();
  t.after(() => cluster.close());
  const w = world(cluster);
  const seed = randomBytes(64);
  const payer = solanaKeyAt(seed, 0);
  const deposits = Array.from({ length: 17 }, (_, i) => solanaKeyAt(seed, i + 1).address);
  const cold = solanaKeyAt(randomBytes(64), 0).address; // a wallet that does not exist yet
  cluster.fund(address(payer.address), 1_000_000_000n);
  // 0..4: SOL only; 5..11: USDC only (the buyer paid the token account's rent); 12,13: both;
  // 14: a look-alike mint only; 15: SOL below --min; 16: never paid.
  for (const i of [0, 1, 2, 3, 4, 12, 13]) cluster.fund(address(deposits[i]!), 250_000_000n + BigInt(i));
  for (const i of [5, 6, 7, 8, 9, 10, 11, 12, 13]) await cluster.sendToken(cluster.usdc, address(deposits[i]!), 25_000_000n + BigInt(i));
  await cluster.sendToken(cluster.lookAlike, address(deposits[14]!), 99_000_000n);
  cluster.fund(address(deposits[15]!), 1_000n);
  const ataRent = cluster.svm.minimumBalanceForRentExemption(165n);
  const before = new Map(deposits.map((d) => [d, cluster.lamports(address(d))]));

  // A list-file pool: no derivation index, the signer searches the seed.
  const candidates = deposits.map((a) => ({ address: a, derivationIndex: null, source: 'file' }));
  const parts = await solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: payer.address, min: { SOL: 10_000n } });
  const plan = planOf(parts, cold, payer.address);

  assert.equal(plan.deposits.length, 14);
  assert.deepEqual(
    plan.skipped.map((s) => [deposits.indexOf(s.address), s.reason.replace(/mint \S+/, 'mint …')]),
    [
      [14, 'mint … is not a token of solana MAINNET in the chain registry; rent of its token account, which stays open'],
      [15, 'below --min 10000 SOL'],
      [16, 'holds nothing'],
    ],
  );
  const both = plan.deposits.find((d) => d.address === deposits[12])!;
  assert.deepEqual(both.moves, [
    { symbol: 'USDC', token: cluster.usdc.address, decimals: 6, amount: '25000012' },
    { symbol: 'SOL', token: null, decimals: 9, amount: (ataRent + 250_000_012n).toString() },
  ]);
  // The fee payer pays, but each deposit states its share of what its transaction can cost: the
  // signatures, and the cold USDC account's rent in every transaction that creates it (sweep-fee.ts).
  const creating = plan.transactions.filter((tx) => tx.deposits.some((d) => plan.deposits.find((p) => p.address === d)!.moves.some((m) => m.token !== null))).length;
  assert.equal(
    plan.deposits.reduce((s, d) => s + BigInt(d.fee), 0n),
    BigInt(plan.transactions.reduce((n, tx) => n + 5000 * tx.signers.length, 0)) + ataRent * BigInt(creating),
  );
  assert.ok(plan.transactions.length >= 2, `packed into ${plan.transactions.length} transactions`);
  for (const tx of plan.transactions) {
    assert.equal(tx.signers[0], payer.address);
    const p = tx.payload as { message: string; fee: string };
    const size = 1 + 64 * tx.signers.length + Buffer.from(p.message, 'base64').length;
    assert.ok(size <= 1232, `${tx.id}: ${size} bytes`);
    assert.equal(p.fee, String(5000 * tx.signers.length));
  }
  const perTx = plan.transactions.map((tx) => tx.deposits.length);
  t.diagnostic(`deposits per transaction: ${perTx.join(', ')}; bytes: ${plan.transactions.map((tx) => 1 + 64 * tx.signers.length + Buffer.from((tx.payload as { message: string }).message, 'base64').length).join(', ')}`);

  // Signing opens no connection: any attempt would throw here.
  const connect = net.Socket.prototype.connect;
  const realFetch = globalThis.fetch;
  let dialled = 0;
  net.Socket.prototype.connect = (() => {
    dialled++;
    throw new Error('the signer must not open a connection');
  }) as typeof connect;
  globalThis.fetch = (() => {
    dialled++;
    throw new Error('the signer must not fetch');
  }) as typeof fetch;
  let signed: SignedSweepTx[];
  try {
    signed = solanaSweepSigner.sign(plan, keysFor(seed, plan));
  } finally {
    net.Socket.prototype.connect = connect;
    globalThis.fetch = realFetch;
  }
  assert.equal(dialled, 0);
  const payerBefore = cluster.lamports(address(payer.address));
  const statuses = await broadcastAll(cluster, w, signed);
  for (const s of statuses) assert.equal(s.state, 'final');
  const fees = statuses.reduce((sum, s) => sum + BigInt(s.fee ?? '0'), 0n);
  assert.equal(fees, BigInt(plan.transactions.reduce((n, tx) => n + 5000 * tx.signers.length, 0)), 'the fee each status reports is 5,000 lamports a signature');

  // Every lamport and every USDC unit of the swept deposits is at the cold wallet.
  const swept = plan.deposits.map((d) => d.address);
  const expectedSol = swept.reduce((s, d) => s + before.get(d)!, 0n) + ataRent * 9n;
  assert.equal(cluster.lamports(address(cold)), expectedSol);
  assert.equal(cluster.tokenBalance(cluster.usdc, address(cold)), [5, 6, 7, 8, 9, 10, 11, 12, 13].reduce((s, i) => s + 25_000_000n + BigInt(i), 0n));
  for (const d of swept) {
    assert.equal(cluster.lamports(address(d)), 0n, 'no deposit keeps a lamport');
    assert.equal(cluster.tokenBalance(cluster.usdc, address(d)), null, 'its token account is closed');
  }
  assert.equal(cluster.tokenBalance(cluster.lookAlike, address(deposits[14]!)), 99_000_000n, 'a mint outside the registry stays');
  assert.equal(cluster.lamports(address(deposits[15]!)), 1_000n, 'below --min stays');
  // The fee payer paid the fees and the cold wallet's one token account, nothing else.
  assert.equal(payerBefore - cluster.lamports(address(payer.address)), fees + ataRent);
  t.diagnostic(`fees: ${fees} lamports for ${swept.length} deposits in ${signed.length} transactions, plus ${ataRent} once for the cold USDC account`);

  // Broadcasting again sends nothing: the cluster knows every signature.
  const sends = cluster.calls.sendTransaction ?? 0;
  for (const tx of signed) assert.deepEqual(await solanaSweepSender.broadcast(w.network, w.config, tx), { accepted: true });
  assert.equal(cluster.calls.sendTransaction ?? 0, sends, 'never sent twice');

  // A second plan finds nothing left to move but what stays behind.
  const again = await solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: payer.address, min: { SOL: 10_000n } });
  assert.equal(again.deposits.length, 0);
  assert.equal(again.transactions.length, 0);
});

test('solana sweep: the signer refuses a tampered destination, a foreign instruction and a deposit the seed does not derive; an expired blockhash or a moved balance is stale and nothing is sent', async (t) => {
  const cluster = await startSweepCluster();
  t.after(() => cluster.close());
  const w = world(cluster);
  const seed = randomBytes(64);
  const payer = solanaKeyAt(seed, 0);
  const deposit = solanaKeyAt(seed, 3).address;
  const cold = solanaKeyAt(randomBytes(64), 0).address;
  const thief = solanaKeyAt(randomBytes(64), 0).address;
  cluster.fund(address(payer.address), 100_000_000n);
  cluster.fund(address(deposit), 500_000_000n);
  await cluster.sendToken(cluster.usdc, address(deposit), 7_000_000n);
  const candidates = [{ address: deposit, derivationIndex: 3, source: 'file' }];

  // The planner's own refusals: a token account as the destination, a fee payer with no SOL.
  const buyerAta = associatedTokenAddress(deposit, cluster.usdc.address, cluster.usdc.program);
  await assert.rejects(solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: buyerAta, feePayer: payer.address, min: {} }), /destination is a token account/);
  await assert.rejects(solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: thief, min: {} }), /fee payer .* holds no SOL/);
  await assert.rejects(solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: null, min: {} }), /needs --fee-payer/);

  const plan = planOf(await solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: payer.address, min: {} }), cold, payer.address);
  const keys = keysFor(seed, plan);

  // The plan's `to` changed by hand: the messages still pay the old cold wallet, so nothing matches.
  assert.throws(() => solanaSweepSigner.sign({ ...plan, to: thief }, keys), /not to the plan's destination/);
  // A plan built by a compromised server for the thief, summary and all: the signer refuses unless the
  // operator's --expect-to (the framework's check) catches it first; here the moves are redirected inside one message.
  const evil = planOf(await solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: thief, feePayer: payer.address, min: {} }), thief, payer.address);
  const spliced = { ...plan, transactions: plan.transactions.map((tx, i) => ({ ...tx, payload: evil.transactions[i]!.payload })) };
  assert.throws(() => solanaSweepSigner.sign(spliced, keys), /goes to .*, not to the plan's destination/);
  // Amounts that differ from the summary.
  const inflated = { ...plan, deposits: plan.deposits.map((d) => ({ ...d, moves: d.moves.map((m) => (m.token ? { ...m, amount: '1' } : m)) })) };
  assert.throws(() => solanaSweepSigner.sign(inflated, keys), /the summary shows 1: refused/);
  // A message byte flipped into another program's instruction data.
  const tx0 = plan.transactions[0]!;
  const bytes = Buffer.from((tx0.payload as { message: string }).message, 'base64');
  const tampered = Buffer.from(bytes);
  tampered[tampered.length - 1] = (tampered[tampered.length - 1]! + 1) % 256; // the last instruction's amount
  assert.throws(() => solanaSweepSigner.sign({ ...plan, transactions: [{ ...tx0, payload: { ...(tx0.payload as object), message: tampered.toString('base64') } }] }, keys), /refused/);

  // Keys: a deposit the seed does not derive at its index, or at all.
  assert.throws(() => solanaSweepSigner.deriveKey(seed, { address: deposit, derivationIndex: 4, source: 'file' }, plan, 50), /m\/44'\/501'\/4'\/0' is another address/);
  assert.throws(() => solanaSweepSigner.deriveKey(randomBytes(64), { address: deposit, derivationIndex: null, source: 'file' }, plan, 20), /not among the seed's first 20 accounts/);

  // Signed, then held too long: the blockhash expires and broadcast refuses, sending nothing.
  const signed = solanaSweepSigner.sign(plan, keys);
  assert.equal(await solanaSweepStale(w.network, w.config, plan), null, 'fresh');
  cluster.expireBlockhash();
  assert.match((await solanaSweepStale(w.network, w.config, plan)) ?? '', /blockhash has expired/);
  const sends = cluster.calls.sendTransaction ?? 0;
  const answer = await solanaSweepSender.broadcast(w.network, w.config, signed[0]!);
  assert.equal(answer.accepted, false);
  assert.match((answer as { error: string }).error, /blockhash has expired .* run sweep plan again/);
  assert.equal(cluster.calls.sendTransaction ?? 0, sends);
  assert.equal((await solanaSweepSender.status(w.network, w.config, signed[0]!.txid)).state, 'unknown');

  // Planned again, then the fee payer is emptied before the broadcast: the node's preflight refuses
  // with the runtime's reason, which is what the framework records; nothing lands.
  const fresh = planOf(await solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: payer.address, min: {} }), cold, payer.address);
  const freshSigned = solanaSweepSigner.sign(fresh, keysFor(seed, fresh));
  // A late USDC payment after planning: closeAccount would fail on the remainder, so the plan is stale.
  await cluster.sendToken(cluster.usdc, address(deposit), 1_000_000n);
  assert.match((await solanaSweepStale(w.network, w.config, fresh)) ?? '', /holds 8000000 USDC \(atomic\), the plan moves 7000000: plan again/);
  cluster.fund(address(payer.address), 1_000n); // the fee payer cannot pay any more
  const refused = await solanaSweepSender.broadcast(w.network, w.config, freshSigned[0]!);
  assert.equal(refused.accepted, false);
  assert.match((refused as { error: string }).error, /^-32002 Transaction simulation failed/);
});

test('solana sweep: a Token-2022 mint\'s deposits are swept through Token-2022 and their 170-byte accounts\' rent comes back', async (t) => {
  const cluster = await startSweepCluster();
  t.after(() => cluster.close());
  const w = world(cluster, cluster.usdc2022.address);
  const seed = randomBytes(64);
  const payer = solanaKeyAt(seed, 0);
  const deposit = solanaKeyAt(seed, 1).address;
  const cold = solanaKeyAt(randomBytes(64), 0).address;
  cluster.fund(address(payer.address), 100_000_000n);
  cluster.fund(address(cold), 5_000_000n);
  await cluster.sendToken(cluster.usdc2022, address(deposit), 12_500_000n);
  const rent = cluster.svm.minimumBalanceForRentExemption(170n);
  const candidates = [{ address: deposit, derivationIndex: 1, source: 'file' }];
  const plan = planOf(await solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to: cold, feePayer: payer.address, min: {} }), cold, payer.address);
  assert.deepEqual(plan.deposits[0]!.moves.map((m) => [m.symbol, m.amount]), [['USDC', '12500000'], ['SOL', rent.toString()]]);
  const statuses = await broadcastAll(cluster, w, solanaSweepSigner.sign(plan, keysFor(seed, plan)));
  assert.equal(statuses[0]!.state, 'final');
  assert.equal(cluster.tokenBalance(cluster.usdc2022, address(cold)), 12_500_000n);
  assert.equal(cluster.tokenBalance(cluster.usdc2022, address(deposit)), null);
  assert.equal(cluster.lamports(address(cold)), 5_000_000n + rent);
  assert.equal(cluster.lamports(address(deposit)), 0n);
});
