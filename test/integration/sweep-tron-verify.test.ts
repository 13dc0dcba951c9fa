import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { computeAddress, SigningKey } from 'ethers';
import { UsageError } from '../../src/domain/errors.ts';
import type { RefundAsk, SignedSweepTx, SweepCandidate, SweepPlan } from '../../src/families/sweep.ts';
import { hex41ToTron, hexToTron } from '../../src/families/tron/address.ts';
import type { TronSweepPayload } from '../../src/families/tron/sweep-payload.ts';
import { bandwidthOf, tronFee } from '../../src/families/tron/sweep-fee.ts';
import { tronSweepPlanner } from '../../src/families/tron/sweep-plan.ts';
import { decodeRaw, encodeRaw, encodeSigned, type TronRaw } from '../../src/families/tron/sweep-proto.ts';
import { signDigest } from '../../src/families/tron/sweep-sign.ts';
import { tronSweepVerifier } from '../../src/families/tron/sweep-verify.ts';
import { createLogger } from '../../src/logger.ts';
import { checkDecoded } from '../../src/sweep/check-decoded.ts';
import { planId } from '../../src/sweep/plan-file.ts';
import { startTronSweepSim, type TronSweepSim } from '../helpers/java-tron-sweep-sim.ts';
import { assertBurnedAsPlanned, broadcastInOrder, candidates, FEE_PAYER, keysFor, signOffline, USDT, world } from '../helpers/tron-sweep.ts';

// The Tron verifier (src/families/tron/sweep-verify.ts) on every plan shape the planners make,
// signed and broadcast on the java-tron-shaped node: what it reads from the bytes is what the plan
// says (checkDecoded), a signed transaction reads as its unsigned one with the txid the node
// reports, an independent protobuf read of the signed bytes agrees, and the node burned what the
// plan priced. Then tampered plans and signed raws are refused.

const log = createLogger('silent');
const COLD = hexToTron(`0x${'42'.repeat(20)}`);
const NEW_BUYER = hexToTron(`0x${'43'.repeat(20)}`);
const THIEF = hexToTron(`0x${'66'.repeat(20)}`);
const OTHER_TOKEN = hexToTron(`0x${'77'.repeat(20)}`);
const TRX = (amount: bigint): RefundAsk => ({ symbol: 'TRX', token: null, decimals: 6, amount });
const USDT_OF = (amount: bigint): RefundAsk => ({ symbol: 'USDT', token: USDT, decimals: 6, amount });
const { decodeUnsigned, decodeSigned } = tronSweepVerifier;

type World = ReturnType<typeof world>;

async function planFor(w: World, o: { candidates: SweepCandidate[]; to: string; feePayer: string | null; refund?: RefundAsk }): Promise<SweepPlan> {
  const parts = await tronSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: o.candidates, to: o.to, feePayer: o.feePayer, min: {}, ...(o.refund ? { refund: o.refund } : {}) });
  const body: Omit<SweepPlan, 'id'> = {
    format: 'chaingate-sweep-plan/1',
    kind: o.refund ? 'refund' : 'sweep',
    chain: 'tron',
    family: 'tron',
    network: 'MAINNET',
    testnet: false,
    to: o.to,
    feePayer: o.feePayer,
    createdAt: new Date().toISOString(),
    ...(o.refund ? { refund: { paymentId: 'PAY-VERIFY-TEST-0001', symbol: o.refund.symbol, token: o.refund.token, decimals: o.refund.decimals, amount: o.refund.amount.toString() } } : {}),
    ...parts,
  };
  return { ...body, id: planId(body) };
}

const decodeAll = (plan: SweepPlan) => plan.transactions.map((tx) => decodeUnsigned(plan, tx));

/** A plan with one transaction's raw_data (and, to keep it self-consistent, its payload) edited, and its id recomputed. */
function edited(plan: SweepPlan, id: string, edit: (raw: TronRaw) => TronRaw, payload: (p: TronSweepPayload) => Partial<TronSweepPayload> = () => ({})): SweepPlan {
  const body = {
    ...plan,
    transactions: plan.transactions.map((tx) => {
      if (tx.id !== id) return tx;
      const p = tx.payload as TronSweepPayload;
      const raw = edit(decodeRaw(Buffer.from(p.rawData, 'hex')));
      // Self-consistent: the bandwidth and fee the edited bytes cost, unless the edit says otherwise.
      const bandwidth = bandwidthOf(raw);
      const prices = { transactionFee: BigInt(p.prices.transactionFee), createAccountFee: BigInt(p.prices.createAccountFee), createNewAccountFee: BigInt(p.prices.createNewAccountFee) };
      const fee = tronFee({ raw, bandwidth, source: p.bandwidthFrom, createsAccount: p.createsAccount, prices }).total;
      return { ...tx, payload: { ...p, rawData: Buffer.from(encodeRaw(raw)).toString('hex'), bandwidth: bandwidth.toString(), fee: fee.toString(), ...payload(p) } };
    }),
  };
  return { ...body, id: planId(body) };
}

// --- an independent read of a signed Transaction: a bare protobuf wire walk by java-tron's field numbers (Tron.proto) ---

function lengthDelimited(bytes: Uint8Array): Map<number, (bigint | Uint8Array)[]> {
  const out = new Map<number, (bigint | Uint8Array)[]>();
  let i = 0;
  const varint = () => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = bytes[i++]!;
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
  };
  while (i < bytes.length) {
    const key = Number(varint());
    let value: bigint | Uint8Array;
    if ((key & 7) === 0) value = varint();
    else {
      const len = Number(varint());
      value = bytes.subarray(i, i + len);
      i += len;
    }
    out.set(key >> 3, [...(out.get(key >> 3) ?? []), value]);
  }
  return out;
}

/** Owner, recipient, amount and token of a signed TransferContract or TRC-20 transfer, the txid and the signer, read without the family's code. */
function independentRead(rawHex: string) {
  const tx = lengthDelimited(Buffer.from(rawHex, 'hex'));
  const rawData = tx.get(1)![0] as Uint8Array;
  const signature = tx.get(2)![0] as Uint8Array;
  const raw = lengthDelimited(rawData);
  const contract = lengthDelimited(raw.get(11)![0] as Uint8Array);
  const type = Number(contract.get(1)?.[0] ?? 0n);
  const value = lengthDelimited(lengthDelimited(contract.get(2)![0] as Uint8Array).get(2)![0] as Uint8Array);
  const t = (f: number) => hex41ToTron(Buffer.from(value.get(f)![0] as Uint8Array).toString('hex'));
  const txid = createHash('sha256').update(rawData).digest('hex');
  const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;
  const signer = hexToTron(computeAddress(SigningKey.recoverPublicKey(`0x${txid}`, { r: hex(signature.subarray(0, 32)), s: hex(signature.subarray(32, 64)), v: signature[64]! })));
  const base = { type, owner: t(1), txid, signer, feeLimit: (raw.get(18)?.[0] as bigint | undefined) ?? 0n };
  if (type === 1) return { ...base, pay: { to: t(2), token: null, amount: (value.get(3)?.[0] as bigint | undefined) ?? 0n } };
  if (type === 31) {
    const data = Buffer.from(value.get(4)![0] as Uint8Array).toString('hex');
    return { ...base, pay: { to: hex41ToTron(`41${data.slice(32, 72)}`), token: t(2), amount: BigInt(`0x${data.slice(72)}`) } };
  }
  return { ...base, pay: null };
}

/** Reads, signs, broadcasts and compares a plan end to end; returns the signed transactions. */
async function verifyEndToEnd(sim: TronSweepSim, w: World, plan: SweepPlan): Promise<SignedSweepTx[]> {
  const reading = checkDecoded(plan, decodeAll(plan), { maxFee: null });
  assert.equal(reading.fee, plan.deposits.reduce((s, d) => s + BigInt(d.fee), 0n), 'the plan states the fee its bytes can burn');
  const signed = signOffline(plan, keysFor(plan));
  const before = sim.accepted.length;
  await broadcastInOrder(w, plan, signed);
  for (const tx of plan.transactions) {
    const s = signed.find((x) => x.id === tx.id)!;
    const read = decodeSigned(plan, tx, s.raw);
    assert.deepEqual(read, { ...decodeUnsigned(plan, tx), txid: s.txid }, `${tx.id}: the signed transaction reads as the unsigned one`);
    assert.ok(sim.accepted.slice(before).some((a) => a.txid === read.txid), `${tx.id}: the node knows it by the same txid`);
    assert.ok(sim.info(read.txid), `${tx.id}: the node has its info by that id`);
    // The summary the signer prints equals an independent read of the signed bytes.
    const other = independentRead(s.raw);
    assert.equal(other.txid, read.txid);
    assert.deepEqual([other.signer, other.owner], [read.spends[0], read.feePaidBy]);
    if (other.pay === null) assert.deepEqual(read.pays, []);
    else assert.deepEqual(read.pays.map((p) => ({ to: p.to, token: p.token, amount: p.amount })), [other.pay]);
    assert.ok(read.fee >= other.feeLimit, 'the fee counts the fee limit');
  }
  assertBurnedAsPlanned(plan, signed, sim);
  checkDecoded(plan, plan.transactions.map((tx) => decodeSigned(plan, tx, signed.find((s) => s.id === tx.id)!.raw)), { maxFee: null });
  return signed;
}

describe('tron verifier on every plan shape, on the java-tron-shaped node', () => {
  test('sweeps: TRX alone, USDT with lent energy (new accounts, the fee payer\'s staked bandwidth), USDT by top-up', async (t) => {
    const sim = await startTronSweepSim({ tokens: [USDT] });
    t.after(() => sim.close());
    const w = world(sim);
    sim.fund(COLD, 1_000_000n);
    sim.fund(pool(0), 12_345_678n);
    await verifyEndToEnd(sim, w, await planFor(w, { candidates: candidates([0]), to: COLD, feePayer: null }));

    // Lent energy; the fee payer has 600 staked bandwidth points: the first creation takes 266 of
    // them (1 TRX, no 0.1), the delegate and the undelegate the rest and its free points.
    sim.fund(FEE_PAYER, 50_000_000n);
    sim.stake(FEE_PAYER, 100_000_000_000n);
    sim.stakeBandwidth(FEE_PAYER, 600n);
    sim.mintToken(USDT, pool(1), 25_000_000n);
    sim.mintToken(USDT, pool(2), 7_500_000n);
    const lent = await planFor(w, { candidates: candidates([1, 2]), to: COLD, feePayer: FEE_PAYER });
    const payloads = lent.transactions.map((tx) => tx.payload as TronSweepPayload);
    assert.deepEqual(payloads.map((p) => `${p.kind} ${p.bandwidthFrom} ${p.fee}`).slice(0, 5), ['activate staked 1000000', 'delegate staked 0', `token free ${payloads[2]!.fee}`, 'undelegate free 0', 'activate burn 1100000']);
    await verifyEndToEnd(sim, w, lent);

    // By top-up: no stake to lend.
    const sim2 = await startTronSweepSim({ tokens: [USDT] });
    t.after(() => sim2.close());
    const w2 = world(sim2);
    sim2.fund(FEE_PAYER, 100_000_000n);
    sim2.mintToken(USDT, pool(3), 9_000_000n);
    const topUp = await planFor(w2, { candidates: candidates([3]), to: COLD, feePayer: FEE_PAYER });
    assert.deepEqual(topUp.transactions.map((tx) => (tx.payload as TronSweepPayload).kind), ['top-up', 'token']);
    await verifyEndToEnd(sim2, w2, topUp);
  });

  test('refunds: TRX to a known and to a new buyer (with and without a fee payer), USDT with lent energy, by top-up and from the address\'s own TRX', async (t) => {
    const sim = await startTronSweepSim({ tokens: [USDT] });
    t.after(() => sim.close());
    const w = world(sim);
    const [c0, c1, c2, c3, c4] = candidates([0, 1, 2, 3, 4]) as SweepCandidate[];
    sim.fund(COLD, 1_000_000n);
    sim.fund(FEE_PAYER, 100_000_000n);
    sim.fund(c0!.address, 12_000_000n);
    sim.fund(c1!.address, 5_000_000n);
    sim.fund(c2!.address, 5_000_000n);
    sim.mintToken(USDT, c3!.address, 8_000_000n);
    sim.mintToken(USDT, c4!.address, 8_000_000n);
    sim.fund(c4!.address, 20_000_000n);
    await verifyEndToEnd(sim, w, await planFor(w, { candidates: [c0!], to: COLD, feePayer: null, refund: TRX(2_000_000n) }));
    // A full refund to a new buyer: the transfer creates the account, 1 TRX + 0.1 TRX out of the refund.
    const own = await planFor(w, { candidates: [c1!], to: NEW_BUYER, feePayer: null, refund: TRX(5_000_000n) });
    assert.deepEqual([own.deposits[0]!.moves[0]!.amount, own.deposits[0]!.fee], ['3900000', '1100000']);
    await verifyEndToEnd(sim, w, own);
    const other = hexToTron(`0x${'44'.repeat(20)}`);
    await verifyEndToEnd(sim, w, await planFor(w, { candidates: [c2!], to: other, feePayer: FEE_PAYER, refund: TRX(5_000_000n) }));
    await verifyEndToEnd(sim, w, await planFor(w, { candidates: [c3!], to: COLD, feePayer: FEE_PAYER, refund: USDT_OF(3_000_000n) }));
    await verifyEndToEnd(sim, w, await planFor(w, { candidates: [c4!], to: COLD, feePayer: null, refund: USDT_OF(3_000_000n) }));
    sim.stake(FEE_PAYER, 100_000_000_000n);
    await verifyEndToEnd(sim, w, await planFor(w, { candidates: [c3!], to: COLD, feePayer: FEE_PAYER, refund: USDT_OF(1_000_000n) }));
  });
});

describe('tron verifier refuses', () => {
  async function setUp(t: { after: (f: () => Promise<void>) => void }) {
    const sim = await startTronSweepSim({ tokens: [USDT] });
    t.after(() => sim.close());
    const w = world(sim);
    sim.fund(COLD, 1_000_000n);
    sim.fund(THIEF, 1_000_000n);
    sim.fund(FEE_PAYER, 50_000_000n);
    sim.stake(FEE_PAYER, 100_000_000_000n);
    sim.fund(pool(0), 5_000_000n);
    sim.mintToken(USDT, pool(1), 9_000_000n);
    const plan = await planFor(w, { candidates: candidates([0, 1]), to: COLD, feePayer: FEE_PAYER });
    return { sim, w, plan };
  }
  const refusedBy = (f: () => unknown, pattern: RegExp) => assert.throws(f, (err: unknown) => err instanceof UsageError && pattern.test(err.message) && !err.message.includes('\n'));
  const idOf = (plan: SweepPlan, kind: TronSweepPayload['kind']) => plan.transactions.find((tx) => (tx.payload as TronSweepPayload).kind === kind)!.id;

  test('tampered plans: paying elsewhere, burning fees, a token the plan does not hold, lending to a stranger, a relabelled network', async (t) => {
    const { plan } = await setUp(t);
    checkDecoded(plan, decodeAll(plan), { maxFee: null });
    const thief41 = `41${'66'.repeat(20)}`;

    // The deposit's TRX sent to a thief (same size, same fee): the bytes say so.
    const elsewhere = edited(plan, idOf(plan, 'trx'), (raw) => ({ ...raw, contract: { ...raw.contract, to: thief41 } as TronRaw['contract'] }));
    refusedBy(() => checkDecoded(elsewhere, decodeAll(elsewhere), { maxFee: null }), new RegExp(`pays 5 TRX to ${THIEF}, which is neither the plan's destination`));
    // The USDT sent to a thief.
    const token = idOf(plan, 'token');
    const tokenThief = edited(plan, token, (raw) => ({ ...raw, contract: { ...raw.contract, data: `a9059cbb${'0'.repeat(24)}${'66'.repeat(20)}${(9_000_000n).toString(16).padStart(64, '0')}` } as TronRaw['contract'] }));
    refusedBy(() => checkDecoded(tokenThief, decodeAll(tokenThief), { maxFee: null }), /pays 9 USDT to T\w+, which is neither/);

    // A fee limit of 900 TRX on the token transfer: the summary's fee no longer matches…
    const feeLimit = 900_000_000n;
    const burning = edited(plan, token, (raw) => ({ ...raw, feeLimit }));
    refusedBy(() => checkDecoded(burning, decodeAll(burning), { maxFee: null }), /the plan's summary says fees of [\d.]+ TRX, but its transactions can pay 9\d\d\.[\d]+ TRX: refused/);
    // …and with the summary raised to match and the id recomputed, the fee bound refuses it.
    const added = decodeAll(burning).reduce((s, d) => s + d.fee, 0n) - decodeAll(plan).reduce((s, d) => s + d.fee, 0n);
    const body = { ...burning, deposits: burning.deposits.map((d) => (d.address === pool(1) ? { ...d, fee: (BigInt(d.fee) + added).toString() } : d)) };
    const matched = { ...body, id: planId(body) };
    assert.ok(decodeAll(matched).some((d) => d.fee >= feeLimit), 'the fee read counts the fee limit');
    refusedBy(() => checkDecoded(matched, decodeAll(matched), { maxFee: null }) && assert.fail(), /more than 40 TRX per deposit moved/);
    // A payload that understates: a creation paid by free bandwidth, a fee the bytes do not cost.
    const activate = idOf(plan, 'activate');
    const free = edited(plan, activate, (raw) => raw, () => ({ bandwidthFrom: 'free' }));
    refusedBy(() => decodeAll(free), /free bandwidth pay for a new account, which java-tron never does/);
    const cheap = edited(plan, activate, (raw) => raw, () => ({ fee: '0' }));
    refusedBy(() => decodeAll(cheap), /its payload says it burns up to 0 sun, its bytes up to 1100000/);

    // A token the plan does not hold, energy lent to a stranger, an account created for one.
    refusedBy(() => decodeAll(edited(plan, token, (raw) => ({ ...raw, contract: { ...raw.contract, contract: `41${'77'.repeat(20)}` } as TronRaw['contract'] }))), new RegExp(`calls the token ${OTHER_TOKEN}, which the plan does not hold`));
    refusedBy(() => decodeAll(edited(plan, idOf(plan, 'delegate'), (raw) => ({ ...raw, contract: { ...raw.contract, receiver: thief41 } as TronRaw['contract'] }))), /lends energy to T\w+, which is not a deposit of the plan/);
    refusedBy(() => decodeAll(edited(plan, activate, (raw) => ({ ...raw, contract: { ...raw.contract, account: thief41 } as TronRaw['contract'] }))), /creates the account T\w+, which is neither a deposit of the plan nor a refund's buyer/);
    refusedBy(() => decodeAll(edited(plan, activate, (raw) => ({ ...raw, feeLimit: 5n }))), /a fee limit on a AccountCreateContract/);

    // Relabelled networks the registry does not name.
    for (const label of [{ network: 'SHASTA', testnet: true }, { network: 'MAINNET', testnet: true }, { network: 'NILE', testnet: false }]) {
      const body2 = { ...plan, ...label };
      const relabelled = { ...body2, id: planId(body2) };
      refusedBy(() => checkDecoded(relabelled, decodeAll(relabelled), { maxFee: null }), /the registry's/);
    }
    refusedBy(() => decodeUnsigned({ ...plan, family: 'evm' }, plan.transactions[0]!), /not Tron/);
  });

  test('signed raws: another transaction, one paying elsewhere, 00, a broken or foreign signature; the genuine one goes through', async (t) => {
    const { sim, w, plan } = await setUp(t);
    const keys = keysFor(plan);
    const signed = signOffline(plan, keys);
    const trx = plan.transactions.find((tx) => tx.id === idOf(plan, 'trx'))!;
    const good = signed.find((s) => s.id === trx.id)!;
    const deposit = keys.get(pool(0))!;

    refusedBy(() => decodeSigned(plan, trx, signed.find((s) => s.id !== trx.id)!.raw), new RegExp(`^${trx.id}: the signed transaction is not the plan's: it is a \\w+, the plan's is a TransferContract$`));
    // The same transfer to a thief, signed by the deposit's own key.
    const raw = decodeRaw(Buffer.from((trx.payload as TronSweepPayload).rawData, 'hex'));
    const evil = encodeRaw({ ...raw, contract: { ...raw.contract, to: `41${'66'.repeat(20)}` } as TronRaw['contract'] });
    const evilTxid = createHash('sha256').update(evil).digest('hex');
    const evilRaw = Buffer.from(encodeSigned(evil, [signDigest(evilTxid, deposit.privateKey)])).toString('hex');
    refusedBy(() => decodeSigned(plan, trx, evilRaw), /not the plan's: its to is 41(66){20}, the plan's 41(42){20}/);
    refusedBy(() => decodeSigned(plan, trx, '00'), /not a signed Tron sweep transaction/);
    refusedBy(() => decodeSigned(plan, trx, 'zz'), /not hex/);
    // A flipped byte in the signature; a signature by another key; no signature; two.
    const bytes = Buffer.from(good.raw, 'hex');
    const broken = Buffer.from(bytes);
    broken[broken.length - 10]! ^= 0xff;
    refusedBy(() => decodeSigned(plan, trx, broken.toString('hex')), /signature does not verify|signed by T\w+, not by its owner/);
    const rawBytes = Buffer.from((trx.payload as TronSweepPayload).rawData, 'hex');
    const foreign = Buffer.from(encodeSigned(rawBytes, [signDigest(good.txid, keys.get(FEE_PAYER)!.privateKey)])).toString('hex');
    refusedBy(() => decodeSigned(plan, trx, foreign), new RegExp(`signed by ${FEE_PAYER}, not by its owner ${pool(0)}`));
    refusedBy(() => decodeSigned(plan, trx, Buffer.from(encodeSigned(rawBytes, [])).toString('hex')), /carries 0 signature/);
    const sig = signDigest(good.txid, deposit.privateKey);
    refusedBy(() => decodeSigned(plan, trx, Buffer.from(encodeSigned(rawBytes, [sig, sig])).toString('hex')), /carries 2 signature/);
    assert.equal(sim.accepted.length, 0, 'nothing sent');

    // The genuine file still goes through, every transaction reading as planned.
    await verifyEndToEnd(sim, w, plan);
  });
});

function pool(i: number): string {
  return candidates([i])[0]!.address;
}
