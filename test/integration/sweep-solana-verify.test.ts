import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  address,
  compileTransaction,
  decompileTransactionMessage,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  prependTransactionMessageInstructions,
  type AccountMeta,
  type Address,
  type Instruction,
  type Signature,
} from '@solana/kit';
import { identifySystemInstruction, parseTransferSolInstruction, SYSTEM_PROGRAM_ADDRESS, SystemInstruction } from '@solana-program/system';
import {
  ASSOCIATED_TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  identifyTokenInstruction,
  parseCloseAccountInstruction,
  parseCreateAssociatedTokenIdempotentInstruction,
  parseTransferCheckedInstruction,
  TokenInstruction,
} from '@solana-program/token';
import { createLogger } from '../../src/logger.ts';
import type { DecodedSweepTx, RefundAsk, SignedSweepTx, SweepCandidate, SweepPlan } from '../../src/families/sweep.ts';
import { solanaKeyAt } from '../../src/families/solana/ed25519-keys.ts';
import { solanaSweepPlanner } from '../../src/families/solana/sweep-plan.ts';
import { solanaSweepSigner } from '../../src/families/solana/sweep-sign.ts';
import { solanaSweepVerifier } from '../../src/families/solana/sweep-verify.ts';
import { checkDecoded } from '../../src/sweep/check-decoded.ts';
import { planId } from '../../src/sweep/plan-file.ts';
import { broadcastAll, keysFor, planOf, startSweepCluster, sweepWorld, type SweepCluster } from '../helpers/litesvm-sweep-rpc.ts';

// The Solana verifier (src/families/solana/sweep-verify.ts) on Solana's real SVM (litesvm): every
// plan shape the planners make reads back, from its bytes alone, as exactly what its summary says
// (checkDecoded); the signer's output reads back as the same content with the txid the runtime
// files it under; an independent decode with @solana/kit and the programs' own parsers agrees; and
// tampered payloads and raws are refused.

const log = createLogger('silent');
const SOL = 1_000_000_000n;
const verifier = solanaSweepVerifier;
const COMPUTE_BUDGET = address('ComputeBudget111111111111111111111111111111');

const withId = (plan: SweepPlan): SweepPlan => ({ ...plan, id: planId(plan) });
const readAll = (plan: SweepPlan) => plan.transactions.map((t) => verifier.decodeUnsigned(plan, t));
const byPay = (a: { to: string; token: string | null; amount: bigint }, b: typeof a) => `${a.to}${a.token}${a.amount}`.localeCompare(`${b.to}${b.token}${b.amount}`);

/**
 * What a signed transaction does, decoded without the family's code: @solana/kit's decoders and the
 * System, Token and Associated Token programs' parsers. Closed accounts pay what the runtime says
 * they held (`held`, read before the broadcast); token transfers pay the owner of the associated
 * token account they credit among `owners`.
 */
async function independent(raw: string, held: (account: Address) => bigint, owners: Address[]) {
  const tx = getTransactionDecoder().decode(Buffer.from(raw, 'base64'));
  const compiled = getCompiledTransactionMessageDecoder().decode(tx.messageBytes);
  const message = decompileTransactionMessage(compiled);
  const pays: { to: string; token: string | null; amount: bigint }[] = [];
  const creates: { owner: string; mint: string; program: string }[] = [];
  for (const ix of message.instructions as unknown as (Instruction & { accounts: readonly AccountMeta[]; data: Uint8Array })[]) {
    if (ix.programAddress === SYSTEM_PROGRAM_ADDRESS) {
      assert.equal(identifySystemInstruction(ix), SystemInstruction.TransferSol);
      const p = parseTransferSolInstruction(ix);
      pays.push({ to: p.accounts.destination.address, token: null, amount: p.data.amount });
    } else if (ix.programAddress === ASSOCIATED_TOKEN_PROGRAM_ADDRESS) {
      const p = parseCreateAssociatedTokenIdempotentInstruction(ix);
      creates.push({ owner: p.accounts.owner.address, mint: p.accounts.mint.address, program: p.accounts.tokenProgram.address });
    } else if (identifyTokenInstruction(ix) === TokenInstruction.TransferChecked) {
      const p = parseTransferCheckedInstruction(ix);
      let to: string = p.accounts.destination.address;
      for (const owner of owners) {
        const [ata] = await findAssociatedTokenPda({ owner, mint: p.accounts.mint.address, tokenProgram: ix.programAddress });
        if (ata === p.accounts.destination.address) to = owner;
      }
      pays.push({ to, token: p.accounts.mint.address, amount: p.data.amount });
    } else {
      assert.equal(identifyTokenInstruction(ix), TokenInstruction.CloseAccount);
      const p = parseCloseAccountInstruction(ix);
      pays.push({ to: p.accounts.destination.address, token: null, amount: held(p.accounts.account.address) });
    }
  }
  const signatures = Object.values(tx.signatures);
  return { feePayer: compiled.staticAccounts[0], signers: Object.keys(tx.signatures), signatureCount: signatures.length, pays: pays.sort(byPay), creates };
}

/** The signer's output: each raw reads back as its unsigned content, with the signer's txid; the runtime agrees with the family's independent reading. */
async function checkSigned(cluster: SweepCluster, plan: SweepPlan, signed: SignedSweepTx[], owners: Address[]) {
  const tokenAccountLamports = new Map<string, bigint>();
  const held = (account: Address) => {
    if (!tokenAccountLamports.has(account)) tokenAccountLamports.set(account, cluster.lamports(account));
    return tokenAccountLamports.get(account)!;
  };
  const reads: DecodedSweepTx[] = [];
  for (const [i, tx] of plan.transactions.entries()) {
    const s = signed[i]!;
    const unsigned = verifier.decodeUnsigned(plan, tx);
    const read = verifier.decodeSigned(plan, tx, s.raw);
    assert.deepEqual(read, { ...unsigned, txid: s.txid }, `${tx.id}: the signed bytes do what the payload does; the txid is the signer's`);
    const other = await independent(s.raw, held, owners);
    assert.equal(read.feePaidBy, other.feePayer);
    assert.deepEqual([...read.spends].sort(), [...other.signers].sort(), 'spends: the signers (every account whose funds move signs)');
    assert.deepEqual(read.pays.map((p) => ({ to: p.to, token: p.token, amount: p.amount })).sort(byPay), other.pays, `${tx.id}: pays as an independent decode reads them`);
    const rent = (program: string) => cluster.svm.minimumBalanceForRentExemption(program === 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' ? 165n : 170n);
    assert.equal(read.fee, 5000n * BigInt(other.signatureCount) + other.creates.reduce((s, c) => s + rent(c.program), 0n), `${tx.id}: fee`);
    reads.push(read);
  }
  return reads;
}

async function setup(t: { after(fn: () => unknown): void }) {
  const cluster = await startSweepCluster();
  t.after(() => cluster.close());
  const w = sweepWorld(cluster);
  const seed = randomBytes(64);
  const payer = solanaKeyAt(seed, 0).address;
  cluster.fund(address(payer), SOL);
  const sweep = async (candidates: SweepCandidate[], to: string) =>
    withId(planOf(await solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates, to, feePayer: payer, min: {} }), to, payer));
  const refund = async (candidate: SweepCandidate, ask: RefundAsk, feePayer: string | null, to: string) => {
    const parts = await solanaSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [candidate], to, feePayer, min: {}, refund: ask });
    return withId(planOf(parts, to, feePayer, { kind: 'refund', refund: { paymentId: 'pay_test', symbol: ask.symbol, token: ask.token, decimals: ask.decimals, amount: ask.amount.toString() } }));
  };
  return { cluster, w, seed, payer, sweep, refund };
}

test('solana verifier: a sweep reads back as its summary, before and after signing, with the txid the runtime files it under; the fee is what the chain takes', async (t) => {
  const { cluster, w, seed, payer, sweep } = await setup(t);
  const deposits = [1, 2, 3].map((i) => solanaKeyAt(seed, i).address);
  const cold = solanaKeyAt(randomBytes(64), 0).address;
  cluster.fund(address(deposits[0]!), 300_000_000n);
  await cluster.sendToken(cluster.usdc, address(deposits[1]!), 40_000_000n);
  cluster.fund(address(deposits[2]!), 200_000_000n);
  await cluster.sendToken(cluster.usdc, address(deposits[2]!), 3_000_000n);
  const candidates = deposits.map((a, i) => ({ address: a, derivationIndex: i + 1, source: 'file' }));
  const plan = await sweep(candidates, cold);
  assert.equal(plan.transactions.length, 1);

  const reading = checkDecoded(plan, readAll(plan), { maxFee: null });
  const ataRent = cluster.svm.minimumBalanceForRentExemption(165n);
  const tokenRent = 2n * ataRent; // the two deposits' USDC accounts, closed to the cold wallet
  assert.equal(reading.moves.get(`USDC|${cluster.usdc.address}`)?.amount, 43_000_000n);
  assert.equal(reading.nativeMoved, 500_000_000n + tokenRent);
  assert.equal(reading.fee, 4n * 5000n + ataRent, 'four signatures and the cold USDC account created');

  const signed = solanaSweepSigner.sign(plan, keysFor(seed, plan));
  await checkSigned(cluster, plan, signed, [address(cold)]);
  const payerBefore = cluster.lamports(address(payer));
  const statuses = await broadcastAll(cluster, w, signed);
  assert.equal(statuses[0]!.state, 'final');
  assert.ok(cluster.svm.getTransaction(signed[0]!.txid as Signature), 'the runtime knows the transaction by the txid read from the raw');
  assert.equal(payerBefore - cluster.lamports(address(payer)), reading.fee, 'the fee payer lost exactly the fee read from the bytes');
  assert.equal(cluster.lamports(address(cold)), reading.nativeMoved, 'the cold wallet received exactly the SOL read');

  // Swept again once the cold token account exists: no CreateIdempotent, the fee is the signatures alone.
  const next = solanaKeyAt(seed, 4).address;
  await cluster.sendToken(cluster.usdc, address(next), 5_000_000n);
  const again = await sweep([{ address: next, derivationIndex: 4, source: 'file' }], cold);
  assert.equal(checkDecoded(again, readAll(again), { maxFee: null }).fee, 10_000n);
  assert.equal(again.deposits[0]!.fee, '10000');
  const signedAgain = solanaSweepSigner.sign(again, keysFor(seed, again));
  await checkSigned(cluster, again, signedAgain, [address(cold)]);
  const before = cluster.lamports(address(payer));
  await broadcastAll(cluster, w, signedAgain);
  assert.equal(before - cluster.lamports(address(payer)), 10_000n);
});

test('solana verifier: refunds, with and without a fee payer, in SOL and in USDC, read back as their summary and cost what they state', async (t) => {
  const { cluster, w, seed, payer, refund } = await setup(t);
  const buyer = solanaKeyAt(randomBytes(64), 0).address;
  const usdcAsk = (amount: bigint): RefundAsk => ({ symbol: 'USDC', token: cluster.usdc.address, decimals: 6, amount });
  const solAsk = (amount: bigint): RefundAsk => ({ symbol: 'SOL', token: null, decimals: 9, amount });
  const a = solanaKeyAt(seed, 1).address;
  const b = solanaKeyAt(seed, 2).address;
  const c = solanaKeyAt(seed, 3).address;
  await cluster.sendToken(cluster.usdc, address(a), 9_000_000n);
  cluster.fund(address(b), 400_000_000n);
  cluster.fund(address(c), 50_000_000n);
  await cluster.sendToken(cluster.usdc, address(c), 8_000_000n);

  const cases: { name: string; plan: () => Promise<SweepPlan>; payer: string }[] = [
    { name: 'USDC, fee payer, the buyer has no token account', plan: () => refund({ address: a, derivationIndex: 1, source: 'ab12cd34' }, usdcAsk(4_000_000n), payer, buyer), payer },
    { name: 'SOL, the address pays', plan: () => refund({ address: b, derivationIndex: 2, source: 'ab12cd34' }, solAsk(100_000_000n), null, buyer), payer: b },
    { name: 'USDC, the address pays, the buyer\'s token account exists now', plan: () => refund({ address: c, derivationIndex: 3, source: 'ab12cd34' }, usdcAsk(2_000_000n), null, buyer), payer: c },
  ];
  for (const k of cases) {
    const plan = await k.plan();
    const reading = checkDecoded(plan, readAll(plan), { maxFee: null });
    assert.equal(reading.fee, BigInt(plan.deposits[0]!.fee), k.name);
    const signed = solanaSweepSigner.sign(plan, keysFor(seed, plan));
    await checkSigned(cluster, plan, signed, [address(buyer)]);
    const before = cluster.lamports(address(k.payer));
    const sent = plan.refund!.token === null ? reading.nativeMoved : 0n;
    await broadcastAll(cluster, w, signed);
    assert.equal(before - cluster.lamports(address(k.payer)) - sent, reading.fee, `${k.name}: the payer lost the fee read from the bytes (${reading.fee})`);
  }
  assert.equal(cluster.tokenBalance(cluster.usdc, address(buyer)), 6_000_000n);
});

test('solana verifier: a payload paying elsewhere, a fee-burning payload, a relabelled network and signed raws that are not the plan\'s are refused', async (t) => {
  const { cluster, seed, payer, sweep } = await setup(t);
  const deposit = solanaKeyAt(seed, 1).address;
  const other = solanaKeyAt(seed, 2).address;
  const cold = solanaKeyAt(randomBytes(64), 0).address;
  const thief = solanaKeyAt(randomBytes(64), 0).address;
  cluster.fund(address(deposit), 300_000_000n);
  cluster.fund(address(other), 200_000_000n);
  const candidates = [{ address: deposit, derivationIndex: 1, source: 'file' }];
  const plan = await sweep(candidates, cold);
  const tx0 = plan.transactions[0]!;
  assert.doesNotThrow(() => checkDecoded(plan, readAll(plan), { maxFee: null }));

  // The thief's payload under the cold wallet's summary, the plan id recomputed.
  const forThief = await sweep(candidates, thief);
  const spliced = withId({ ...plan, transactions: forThief.transactions });
  assert.throws(() => checkDecoded(spliced, readAll(spliced), { maxFee: null }), new RegExp(`pays 0\\.3 SOL to ${thief}, which is neither the plan's destination`));

  // A priority fee slipped into the message: 1,400,000 units at 10⁹ micro-lamports each = 1.4 SOL.
  const compiled = getCompiledTransactionMessageDecoder().decode(Buffer.from((tx0.payload as { message: string }).message, 'base64'));
  const budget = (data: number[]): Instruction => ({ programAddress: COMPUTE_BUDGET, data: new Uint8Array(data) });
  const limit = [2, ...new Uint8Array(new Uint32Array([1_400_000]).buffer)];
  const price = [3, ...new Uint8Array(new BigUint64Array([1_000_000_000n]).buffer)];
  const burning = compileTransaction(prependTransactionMessageInstructions([budget(limit), budget(price)], decompileTransactionMessage(compiled)) as Parameters<typeof compileTransaction>[0]);
  const burnt = (fee: string) =>
    withId({ ...plan, deposits: [{ ...plan.deposits[0]!, fee }], transactions: [{ ...tx0, payload: { ...(tx0.payload as object), message: Buffer.from(burning.messageBytes).toString('base64') } }] });
  const read = verifier.decodeUnsigned(burnt('0'), burnt('0').transactions[0]!);
  assert.equal(read.fee, 10_000n + 1_400_000_000n);
  assert.throws(() => checkDecoded(burnt(plan.deposits[0]!.fee), [read], { maxFee: null }), /summary says fees of 0\.00001 SOL, but its transactions can pay 1\.40001 SOL/);
  assert.throws(() => checkDecoded(burnt('1400010000'), [read], { maxFee: null }), /can pay 1\.40001 SOL in fees, more than 0\.01 SOL per deposit moved/);
  // …and the family's signer refuses the instruction on its own.
  assert.throws(() => solanaSweepSigner.sign(burnt('1400010000'), keysFor(seed, plan)), /compute-budget instruction, which the planner never writes/);

  // A network the registry does not name for Solana.
  const relabelled = withId({ ...plan, network: 'TESTNET', testnet: true });
  assert.throws(() => checkDecoded(relabelled, readAll(relabelled), { maxFee: null }), /the registry's testnet networks are DEVNET/);

  // Signed raws: garbage, a broken signature, an unsigned slot, another valid transaction, one paying elsewhere.
  const signed = solanaSweepSigner.sign(plan, keysFor(seed, plan))[0]!;
  assert.throws(() => verifier.decodeSigned(plan, tx0, '00'), /tx-0: the signed transaction is not base64/);
  assert.throws(() => verifier.decodeSigned(plan, tx0, 'AA=='), /tx-0: not a signed Solana transaction/);
  const bytes = Buffer.from(signed.raw, 'base64');
  const broken = Buffer.from(bytes);
  broken[1 + 64 + 10]! ^= 1; // the deposit's signature
  assert.throws(() => verifier.decodeSigned(plan, tx0, broken.toString('base64')), new RegExp(`the signature of ${deposit.slice(0, 4)}…${deposit.slice(-4)} does not verify`));
  const unsigned = Buffer.from(bytes);
  unsigned.fill(0, 1, 65); // the fee payer's slot
  assert.throws(() => verifier.decodeSigned(plan, tx0, unsigned.toString('base64')), new RegExp(`${payer.slice(0, 4)}…${payer.slice(-4)} has not signed it`));
  assert.throws(() => verifier.decodeSigned(plan, tx0, Buffer.concat([bytes, Buffer.from([0])]).toString('base64')), /the signed transaction is not the plan.s: .*1 bytes follow the message/);
  const another = await sweep([{ address: other, derivationIndex: 2, source: 'file' }], cold);
  const anotherRaw = solanaSweepSigner.sign(another, keysFor(seed, another))[0]!.raw;
  assert.throws(() => verifier.decodeSigned(plan, tx0, anotherRaw), /tx-0: the signed transaction is not the plan's: its signers are not the plan's/);
  const thiefRaw = solanaSweepSigner.sign(forThief, keysFor(seed, forThief))[0]!.raw;
  assert.throws(() => verifier.decodeSigned(plan, tx0, thiefRaw), /the signed transaction is not the plan's: its instruction 0 is .*"to":"[^"]+".*, the plan's/);
  // The genuine raw still reads.
  assert.equal(verifier.decodeSigned(plan, tx0, signed.raw).txid, signed.txid);
});
