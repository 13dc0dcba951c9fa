import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory, type BIP32Interface } from 'bip32';
import * as bitcoin from 'bitcoinjs-lib';
import { Mnemonic } from 'ethers';
import { getNetwork } from '../../chains/registry.ts';
import { loadConfig } from '../../config/load-config.ts';
import { createLogger } from '../../logger.ts';
import { checkDecoded } from '../../sweep/check-decoded.ts';
import { planId } from '../../sweep/plan-file.ts';
import { startEsploraSim, type EsploraSim } from '../../../test/helpers/esplora-sim.ts';
import { deriveAddresses } from '../derive.ts';
import { resolveChains } from '../families.ts';
import { keyFingerprint } from '../key-material.ts';
import type { DecodedSweepTx, RefundAsk, SweepCandidate, SweepKey, SweepPlan } from '../sweep.ts';
import type { BitcoinSweepPayload } from './sweep-payload.ts';
import { bitcoinSweepPlanner } from './sweep-plan.ts';
import { bitcoinSweepSigner } from './sweep-sign.ts';
import { bitcoinSweepVerifier as verifier } from './sweep-verify.ts';

// The bitcoin verifier (docs/sweeps/bitcoin.md#what-the-verifier-reads) on every plan shape the
// planners make, against a regtest chain over Esplora (test/helpers/esplora-sim.ts, whose POST /tx
// checks every signature): what it reads of a PSBT passes checkDecoded; what it reads of the signed
// raw is the same plus a txid equal to the signer's, to an independent hash of the bytes and to the
// node's answer; and every tampered payload or raw is refused.

bitcoin.initEccLib(ecc);
const bip32 = BIP32Factory(ecc);
const regtest = bitcoin.networks.regtest;
const SEED = Uint8Array.from(Buffer.from(Mnemonic.fromPhrase('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about').computeSeed().slice(2), 'hex'));
const MASTER_FINGERPRINT = '73c5da0a';
const root = bip32.fromSeed(Buffer.from(SEED), bitcoin.networks.testnet);
const TPUB84 = root.derivePath("m/84'/1'/0'").neutered().toBase58();
const TPUB86 = root.derivePath("m/86'/1'/0'").neutered().toBase58();
const COLD = bitcoin.payments.p2wpkh({ hash: Buffer.alloc(20, 0x42), network: regtest }).address!;
const ATTACKER = bitcoin.payments.p2wpkh({ hash: Buffer.alloc(20, 0x66), network: regtest }).address!;
const log = createLogger('silent');

/** A mixed pool: three BIP84 deposits and two BIP86 ones. */
const pool: SweepCandidate[] = [
  ...deriveAddresses({ family: 'bitcoin', testnet: true, network: 'REGTEST', xpub: TPUB84, start: 0, count: 3 }).map((a) => ({ address: a.address, derivationIndex: a.index, source: keyFingerprint(TPUB84) })),
  ...deriveAddresses({ family: 'bitcoin', testnet: true, network: 'REGTEST', xpub: TPUB86, start: 0, count: 2, script: 'p2tr' }).map((a) => ({ address: a.address, derivationIndex: a.index, source: keyFingerprint(TPUB86, 'p2tr') })),
];

async function world(t: { after(fn: () => Promise<void>): void }) {
  const sim = await startEsploraSim();
  t.after(() => sim.close());
  const config = loadConfig({ env: {}, overrides: { chains: { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', confirmations: 1 } } }, log: { level: 'silent' } } }).config;
  const network = getNetwork(resolveChains(config.chains), 'bitcoin', true);
  // p0: two outputs; p1, p2: one each; t0: taproot; t1: taproot, used by the refunds.
  const [p0, p1, p2, t0, t1] = pool.map((c) => c.address);
  sim.mine([[{ address: p0!, sats: 50_000n }, { address: p1!, sats: 80_000n }], [{ address: p0!, sats: 25_000n }, { address: t0!, sats: 70_000n }], [{ address: p2!, sats: 40_000n }, { address: t1!, sats: 90_000n }]]);
  return { sim, config, network };
}
type World = Awaited<ReturnType<typeof world>>;

function planOf(body: Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>, extra: Partial<SweepPlan> = {}): SweepPlan {
  const plan = { format: 'chaingate-sweep-plan/1', kind: 'sweep', chain: 'bitcoin', family: 'bitcoin', network: 'REGTEST', testnet: true, to: COLD, feePayer: null, createdAt: '2026-11-25T00:00:00.000Z', ...body, ...extra } as Omit<SweepPlan, 'id'>;
  return withId(plan);
}
const withId = (plan: Omit<SweepPlan, 'id'> | SweepPlan): SweepPlan => {
  const { id: _, ...body } = plan as SweepPlan;
  return { ...body, id: planId(body as SweepPlan) } as SweepPlan;
};

async function sweepPlan(w: World, extra: { accountKeys?: string[]; masterFingerprint?: string; to?: string; candidates?: SweepCandidate[] } = {}): Promise<SweepPlan> {
  const to = extra.to ?? COLD;
  const body = await bitcoinSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: extra.candidates ?? pool.slice(0, 4), to, feePayer: null, min: {}, accountKeys: extra.accountKeys, masterFingerprint: extra.masterFingerprint });
  return planOf(body, { to });
}

async function refundPlan(w: World, candidate: SweepCandidate, amount: bigint): Promise<SweepPlan> {
  const refund: RefundAsk = { symbol: 'BTC', token: null, decimals: 8, amount };
  const body = await bitcoinSweepPlanner.plan({ network: w.network, config: w.config, log, candidates: [candidate], to: COLD, feePayer: null, min: {}, refund });
  return planOf(body, { kind: 'refund', refund: { paymentId: 'PAY-VERIFY-TEST-0001', symbol: 'BTC', token: null, decimals: 8, amount: amount.toString() } });
}

const keysFor = (plan: SweepPlan): Map<string, SweepKey> => new Map(plan.deposits.map((d) => [d.address, bitcoinSweepSigner.deriveKey(SEED, d, plan, 10)]));
const decodeAll = (plan: SweepPlan): DecodedSweepTx[] => plan.transactions.map((t) => verifier.decodeUnsigned(plan, t));
const psbtOf = (plan: SweepPlan, i = 0) => bitcoin.Psbt.fromBase64((plan.transactions[i]!.payload as BitcoinSweepPayload).psbt, { network: regtest });

/** The raw read with bitcoinjs alone and the PSBT's witness UTXOs: what it pays, its fee, and its txid hashed here. */
function independent(plan: SweepPlan, raw: string) {
  const txn = bitcoin.Transaction.fromHex(raw);
  const spent = psbtOf(plan).data.inputs.reduce((s, i) => s + i.witnessUtxo!.value, 0n);
  const bare = txn.clone();
  for (const input of bare.ins) input.witness = [];
  const sha = (b: Uint8Array) => createHash('sha256').update(b).digest();
  return {
    pays: txn.outs.map((o) => ({ to: bitcoin.address.fromOutputScript(o.script, regtest), symbol: 'BTC', token: null, decimals: 8, amount: o.value })),
    fee: spent - txn.outs.reduce((s, o) => s + o.value, 0n),
    txid: Buffer.from(sha(sha(bare.toBuffer()))).reverse().toString('hex'),
  };
}

/** POST /tx, as the sender does: the node's answer is the txid it computed. */
async function post(sim: EsploraSim, raw: string): Promise<string> {
  const res = await fetch(`${sim.url}/tx`, { method: 'POST', body: raw });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  return text;
}

/** Signs with the seed as `sweep sign` does, checks decodeSigned against decodeUnsigned, an independent read and the node. */
async function signAndCheck(w: World, plan: SweepPlan) {
  const reading = checkDecoded(plan, decodeAll(plan), { maxFee: null });
  const signed = bitcoinSweepSigner.sign(plan, keysFor(plan));
  for (const [i, s] of signed.entries()) {
    const tx = plan.transactions[i]!;
    const { txid, ...content } = verifier.decodeSigned(plan, tx, s.raw);
    assert.deepEqual(content, verifier.decodeUnsigned(plan, tx), 'the signed raw does what the PSBT does');
    const other = independent(plan, s.raw);
    assert.deepEqual(content.pays, other.pays);
    assert.equal(content.fee, other.fee);
    assert.equal(txid, s.txid, "the signer's txid");
    assert.equal(txid, other.txid, 'double SHA-256 of the bytes without witnesses');
    assert.equal(await post(w.sim, s.raw), txid, "the node's txid");
  }
  return { reading, signed };
}

describe('bitcoin verifier: every plan shape reads back as planned, signed and sent', () => {
  test('a sweep of P2WPKH and P2TR deposits: the decoded moves and fee are the summary, to the satoshi', async (t) => {
    const w = await world(t);
    const plan = await sweepPlan(w);
    const [decoded] = decodeAll(plan);
    assert.deepEqual(decoded!.spends, pool.slice(0, 4).map((c) => c.address));
    assert.deepEqual(decoded!.pays.map((p) => p.to), [COLD]);
    assert.equal(decoded!.fee, BigInt((plan.transactions[0]!.payload as BitcoinSweepPayload).fee));
    assert.equal(decoded!.chainId, null);
    const { reading } = await signAndCheck(w, plan);
    assert.equal(reading.nativeMoved + reading.fee, 265_000n, 'all four deposits, less nothing but the fee');
    assert.equal(reading.fee, plan.deposits.reduce((s, d) => s + BigInt(d.fee), 0n));
  });

  test('refunds: with change, with the change dropped to the fee, and a full one paying its fee out of the refund', async (t) => {
    const w = await world(t);
    const [p0, p1, p2] = pool;
    const withChange = await refundPlan(w, p0!, 30_000n);
    assert.equal(decodeAll(withChange)[0]!.pays.length, 2, 'the buyer and the change');
    const dropped = await refundPlan(w, p2!, 39_000n);
    const full = await refundPlan(w, p1!, 80_000n);
    for (const plan of [withChange, dropped, full]) {
      const { reading } = await signAndCheck(w, plan);
      assert.equal(reading.fee, BigInt(plan.deposits[0]!.fee), 'the deposit states the fee the bytes pay');
      assert.equal(reading.nativeMoved, BigInt(plan.deposits[0]!.moves[0]!.amount));
    }
    assert.equal(w.sim.mempool().length, 3);
  });

  test('a mixed BIP84/BIP86 pool: with both account keys every input carries its derivation, and an HD signer completes the PSBT', async (t) => {
    const w = await world(t);
    const plan = await sweepPlan(w, { accountKeys: [TPUB84, TPUB86], masterFingerprint: MASTER_FINGERPRINT, candidates: pool });
    const psbt = psbtOf(plan);
    assert.equal(psbt.inputCount, 6);
    for (const [i, input] of psbt.data.inputs.entries()) {
      const taproot = input.witnessUtxo!.script[0] === 0x51;
      assert.equal(Boolean(taproot ? input.tapBip32Derivation?.length && input.tapInternalKey : input.bip32Derivation?.length), true, `input ${i} carries its derivation`);
    }
    // The external signer knows only the HD root (as a hardware wallet): it finds each key by the derivations.
    const hd = bip32.fromSeed(Buffer.from(SEED), bitcoin.networks.testnet);
    assert.equal(Buffer.from(hd.fingerprint).toString('hex'), MASTER_FINGERPRINT);
    signWithHdRoot(psbt, hd);
    assert.ok(psbt.validateSignaturesOfAllInputs((pubkey, hash, sig) => (pubkey.length === 32 ? ecc.verifySchnorr(hash, pubkey, sig) : ecc.verify(hash, pubkey, sig))));
    psbt.finalizeAllInputs();
    const raw = psbt.extractTransaction().toHex();
    const { txid, ...content } = verifier.decodeSigned(plan, plan.transactions[0]!, raw);
    assert.deepEqual(content, verifier.decodeUnsigned(plan, plan.transactions[0]!));
    checkDecoded(plan, [content], { maxFee: null });
    assert.equal(await post(w.sim, raw), txid);
  });
});

/**
 * A hardware wallet's way: P2WPKH inputs by their bip32Derivation (bitcoinjs signInputHD); P2TR
 * ones by their tapBip32Derivation, checked against the root's fingerprint and the internal key,
 * then the BIP86 key tweaked by TapTweak(internal key) signs the key path.
 */
function signWithHdRoot(psbt: bitcoin.Psbt, hd: BIP32Interface): void {
  for (const [i, input] of psbt.data.inputs.entries()) {
    if (input.bip32Derivation) {
      psbt.signInputHD(i, hd);
      continue;
    }
    const [d] = input.tapBip32Derivation!;
    assert.equal(Buffer.compare(d!.masterFingerprint, hd.fingerprint), 0);
    const node = hd.derivePath(d!.path);
    const xonly = node.publicKey.subarray(1, 33);
    assert.equal(Buffer.compare(xonly, d!.pubkey), 0);
    assert.equal(Buffer.compare(xonly, input.tapInternalKey!), 0);
    psbt.signTaprootInput(i, node.tweak(bitcoin.crypto.taggedHash('TapTweak', xonly)));
  }
}

/** The plan with its one PSBT rebuilt: same inputs (and derivations), other outputs; summary edits applied; id recomputed. */
function rebuilt(plan: SweepPlan, outputs: { address: string; value: bigint }[], edit: (p: SweepPlan) => Partial<SweepPlan> = () => ({})): SweepPlan {
  const psbt = psbtOf(plan);
  const copy = new bitcoin.Psbt({ network: regtest });
  copy.setVersion(2);
  for (const [i, input] of psbt.txInputs.entries()) copy.addInput({ hash: input.hash, index: input.index, sequence: input.sequence, witnessUtxo: psbt.data.inputs[i]!.witnessUtxo! });
  for (const o of outputs) copy.addOutput(o);
  const tx = plan.transactions[0]!;
  return withId({ ...plan, transactions: [{ ...tx, payload: { ...(tx.payload as BitcoinSweepPayload), psbt: copy.toBase64() } }], ...edit(plan) });
}

describe('bitcoin verifier: tampered payloads are refused', () => {
  test('a PSBT paying elsewhere, a fee-burning PSBT with its summary to match, a relabelled network, odd inputs', async (t) => {
    const w = await world(t);
    const plan = await sweepPlan(w);
    const check = (p: SweepPlan) => () => checkDecoded(p, decodeAll(p), { maxFee: null });
    const total = psbtOf(plan).data.inputs.reduce((s, i) => s + i.witnessUtxo!.value, 0n);
    const out = psbtOf(plan).txOutputs[0]!.value;
    assert.equal(total, 265_000n);
    // The summary still says COLD; the PSBT pays the attacker.
    assert.throws(check(rebuilt(plan, [{ address: ATTACKER, value: out }])), /tx-0: pays 0\.00\d+ BTC to bcrt1q\S+, which is neither the plan's destination bcrt1q\S+ nor one of its own addresses/);
    // 7,500 of 265,000 sat moved, the rest a fee: the summary changed to say so, the id recomputed.
    const held = (d: SweepPlan['deposits'][number]) => BigInt(d.moves[0]!.amount) + BigInt(d.fee);
    const burn = (p: SweepPlan) => ({
      deposits: p.deposits.map((d, i) => ({ ...d, moves: [{ ...d.moves[0]!, amount: i === 0 ? '7500' : '0' }], fee: (held(d) - (i === 0 ? 7_500n : 0n)).toString() })),
    });
    const burning = rebuilt(plan, [{ address: COLD, value: 7_500n }], burn);
    assert.throws(check(burning), /the transactions can pay 0\.002575 BTC in fees, more than 0\.0002 BTC per deposit moved \(4\): refused, nothing signed/);
    // The same PSBT with the honest summary: the fee does not match it.
    assert.throws(check(rebuilt(plan, [{ address: COLD, value: 7_500n }])), /the plan's summary moves .* but its transactions move 0\.000075 BTC/);
    // Relabelled: the addresses are regtest ones, so no other network reads them.
    assert.throws(check(withId({ ...plan, network: 'TESTNET4' })), /bcrt1q\S+, which is not a bitcoin TESTNET4 address/);
    assert.throws(check(withId({ ...plan, network: 'MAINNET', testnet: false })), /not a bitcoin MAINNET address|not a valid bitcoin mainnet address/);
    assert.throws(check(withId({ ...plan, network: 'LIQUID' })), /the registry's testnet networks are/);
    // An input asking for SIGHASH_NONE (anyone could redirect the outputs once signed), and an input spent twice.
    const none = psbtOf(plan);
    none.updateInput(0, { sighashType: bitcoin.Transaction.SIGHASH_NONE });
    const withNone = withId({ ...plan, transactions: [{ ...plan.transactions[0]!, payload: { ...(plan.transactions[0]!.payload as BitcoinSweepPayload), psbt: none.toBase64() } }] });
    assert.throws(() => decodeAll(withNone), /tx-0 input 0: asks for sighash type 2; only SIGHASH_ALL/);
    // Input 1's outpoint overwritten with input 0's in the PSBT's bytes.
    const ins = psbtOf(plan).txInputs;
    const outpoint = (i: number) => Buffer.concat([ins[i]!.hash, Buffer.from(Uint32Array.of(ins[i]!.index).buffer)]).toString('hex');
    const twice = Buffer.from((plan.transactions[0]!.payload as BitcoinSweepPayload).psbt, 'base64').toString('hex').replace(outpoint(1), outpoint(0));
    assert.throws(() => verifier.decodeUnsigned(plan, { ...plan.transactions[0]!, payload: { psbt: Buffer.from(twice, 'hex').toString('base64') } }), /tx-0: (the PSBT does not decode \(Duplicate input|input 1: spends [0-9a-f]{64}:\d a second time)/);
    assert.throws(() => verifier.decodeUnsigned(plan, { ...plan.transactions[0]!, payload: { psbt: 'not a psbt' } }), /tx-0: the PSBT does not decode/);
    // The untouched plan passes.
    check(plan)();
  });

  test('signed raws: garbage, another valid transaction, one paying elsewhere, a broken or SIGHASH_NONE signature', async (t) => {
    const w = await world(t);
    const plan = await sweepPlan(w);
    const tx = plan.transactions[0]!;
    const [genuine] = bitcoinSweepSigner.sign(plan, keysFor(plan));
    const decode = (raw: string) => () => verifier.decodeSigned(plan, tx, raw);
    assert.throws(decode('00'), /^UsageError: tx-0: the signed raw is not a bitcoin transaction/);
    assert.throws(decode('zz'), /tx-0: the signed raw is not hex/);
    assert.throws(decode(`${genuine!.raw}00`), /tx-0: the signed raw is not a bitcoin transaction/);
    // A validly signed refund from one of the deposits: not this plan's transaction.
    const other = await refundPlan(w, pool[1]!, 10_000n);
    const [otherSigned] = bitcoinSweepSigner.sign(other, keysFor(other));
    assert.throws(decode(otherSigned!.raw), /tx-0: the signed transaction is not the plan's: 1 input, planned 5: refused/);
    // The same deposits validly signed away to the attacker (a plan the server could have slipped in).
    const evil = await sweepPlan(w, { to: ATTACKER });
    const [evilSigned] = bitcoinSweepSigner.sign(evil, keysFor(evil));
    assert.throws(decode(evilSigned!.raw), /tx-0: the signed transaction is not the plan's: output 0 pays another script \(0014(66){20}\) than planned \(0014(42){20}\): refused/);
    // The genuine transaction with its output redirected after signing: the signatures no longer verify.
    const redirected = bitcoin.Transaction.fromHex(genuine!.raw);
    redirected.outs[0]!.script = bitcoin.address.toOutputScript(ATTACKER, regtest);
    const redirectedPlan = rebuilt(plan, [{ address: ATTACKER, value: redirected.outs[0]!.value }]);
    assert.throws(() => verifier.decodeSigned(redirectedPlan, redirectedPlan.transactions[0]!, redirected.toHex()), /tx-0 input 0 \(bcrt1q\S+\): its signature does not verify against bcrt1q\S+: refused/);
    // One byte of a signature flipped, on a P2WPKH input and on the P2TR one.
    for (const i of [0, 3]) {
      const broken = bitcoin.Transaction.fromHex(genuine!.raw);
      const sig = Buffer.from(broken.ins[i]!.witness[0]!);
      sig[10] = sig[10]! ^ 1;
      broken.ins[i]!.witness[0] = sig;
      assert.throws(decode(broken.toHex()), new RegExp(`tx-0 input ${i} \\(bcrt1[qp]\\S+\\): (its signature does not verify|its signature is not a DER signature)`));
    }
    // Another deposit's key and signature on input 0: the key is not the input's.
    const swapped = bitcoin.Transaction.fromHex(genuine!.raw);
    swapped.ins[0]!.witness = swapped.ins[2]!.witness;
    assert.throws(decode(swapped.toHex()), /tx-0 input 0 \(bcrt1q\S+\): its key is not the key of bcrt1q\S+: refused/);
    // A valid signature made with SIGHASH_NONE: anyone could change the outputs before it is mined.
    const loose = bitcoin.Transaction.fromHex(genuine!.raw);
    const prev = psbtOf(plan).data.inputs[0]!.witnessUtxo!;
    const key = keysFor(plan).get(plan.deposits[0]!.address)!;
    const hash = loose.hashForWitnessV0(0, bitcoin.payments.p2pkh({ hash: prev.script.subarray(2) }).output!, prev.value, bitcoin.Transaction.SIGHASH_NONE);
    loose.ins[0]!.witness = [bitcoin.script.signature.encode(ecc.sign(hash, key.privateKey), bitcoin.Transaction.SIGHASH_NONE), loose.ins[0]!.witness[1]!];
    assert.throws(decode(loose.toHex()), /tx-0 input 0 \(bcrt1q\S+\): its signature has sighash type 2, not SIGHASH_ALL: refused/);
    // The unsigned transaction itself, no witness.
    const bare = bitcoin.Transaction.fromHex(genuine!.raw);
    for (const input of bare.ins) input.witness = [];
    assert.throws(decode(bare.toHex()), /carries no witness: it is not signed/);
    // The genuine raw still reads, and nothing was sent.
    assert.equal(verifier.decodeSigned(plan, tx, genuine!.raw).txid, genuine!.txid);
    assert.equal(w.sim.posted.length, 0);
  });
});
