import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import * as bitcoin from 'bitcoinjs-lib';
import { Mnemonic } from 'ethers';
import { getNetwork } from '../../chains/registry.ts';
import { loadConfig } from '../../config/load-config.ts';
import { createLogger } from '../../logger.ts';
import { startEsploraSim } from '../../../test/helpers/esplora-sim.ts';
import { deriveAddresses } from '../derive.ts';
import { keyFingerprint } from '../key-material.ts';
import { resolveChains } from '../families.ts';
import type { SweepCandidate, SweepKey, SweepPlan } from '../sweep.ts';
import { planId } from '../../sweep/plan-file.ts';
import { bitcoinSweepPlanner, type BitcoinSweepPayload } from './sweep-plan.ts';
import { bitcoinSweepSender } from './sweep-send.ts';
import { bitcoinSweepSigner } from './sweep-sign.ts';
import { INPUT_WEIGHT } from './sweep-weights.ts';

bitcoin.initEccLib(ecc);
const bip32 = BIP32Factory(ecc);
const regtest = bitcoin.networks.regtest;
const seedOf = (phrase: string) => Uint8Array.from(Buffer.from(Mnemonic.fromPhrase(phrase).computeSeed().slice(2), 'hex'));
const SEED = seedOf('abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about');
const OTHER_SEED = seedOf('legal winner thank year wave sausage worth useful legal winner thank yellow');
// The abandon mnemonic's master fingerprint, as Sparrow and Bitcoin Core show it.
const MASTER_FINGERPRINT = '73c5da0a';
const root = bip32.fromSeed(Buffer.from(SEED), bitcoin.networks.testnet);
const TPUB84 = root.derivePath("m/84'/1'/0'").neutered().toBase58();
const TPUB86 = root.derivePath("m/86'/1'/0'").neutered().toBase58();
const COLD = bitcoin.payments.p2wpkh({ hash: Buffer.alloc(20, 0x42), network: regtest }).address!;
const ATTACKER = bitcoin.payments.p2wpkh({ hash: Buffer.alloc(20, 0x66), network: regtest }).address!;

function candidates(): SweepCandidate[] {
  const segwit = deriveAddresses({ family: 'bitcoin', testnet: true, network: 'REGTEST', xpub: TPUB84, start: 0, count: 4 });
  const taproot = deriveAddresses({ family: 'bitcoin', testnet: true, network: 'REGTEST', xpub: TPUB86, start: 0, count: 1, script: 'p2tr' });
  return [
    ...segwit.map((a) => ({ address: a.address, derivationIndex: a.index, source: keyFingerprint(TPUB84) })),
    ...taproot.map((a) => ({ address: a.address, derivationIndex: a.index, source: keyFingerprint(TPUB86, 'p2tr') })),
  ];
}

async function world(t: { after(fn: () => Promise<void>): void }, source: 'esplora' | 'core' = 'esplora') {
  const sim = await startEsploraSim();
  t.after(() => sim.close());
  const config = loadConfig({ env: {}, overrides: { chains: { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST', confirmations: 3, source } } }, log: { level: 'silent' } } }).config;
  const network = getNetwork(resolveChains(config.chains), 'bitcoin', true);
  const log = createLogger('silent');
  const [d0, d1, d2, , t0] = candidates();
  // d0: two outputs in two transactions; d1: one; d2: 200 sat, less than its input costs; t0: taproot; d3: nothing.
  sim.mine([[{ address: d0!.address, sats: 50_000n }], [{ address: d0!.address, sats: 25_000n }, { address: d1!.address, sats: 100_000n }], [{ address: d2!.address, sats: 200n }], [{ address: t0!.address, sats: 70_000n }]]);
  sim.mineEmpty(2);
  return { sim, config, network, log };
}

function planOf(body: Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>, to = COLD): SweepPlan {
  const plan = { format: 'chaingate-sweep-plan/1', kind: 'sweep', chain: 'bitcoin', family: 'bitcoin', network: 'REGTEST', testnet: true, to, feePayer: null, createdAt: '2026-11-25T00:00:00.000Z', ...body } as Omit<SweepPlan, 'id'>;
  return { ...plan, id: planId(plan) } as SweepPlan;
}

function keysFor(plan: SweepPlan, seed = SEED): Map<string, SweepKey> {
  return new Map(plan.deposits.map((d) => [d.address, bitcoinSweepSigner.deriveKey(seed, d, plan, 10)]));
}

describe('bitcoin sweep: plan (Esplora), sign offline, broadcast', () => {
  test('one PSBT spends every confirmed deposit output to the cold address; dust is left and said why', async (t) => {
    const { sim, config, network, log } = await world(t);
    const body = await bitcoinSweepPlanner.plan({ network, config, log, candidates: candidates(), to: COLD, feePayer: null, min: {}, accountKeys: [TPUB84, TPUB86], masterFingerprint: MASTER_FINGERPRINT });
    assert.equal(body.transactions.length, 1);
    const payload = body.transactions[0]!.payload as BitcoinSweepPayload;
    // GET /fee-estimates gives 6.303 sat/vB for 6 blocks: rounded up.
    assert.equal(payload.feeRate, '7');
    const psbt = bitcoin.Psbt.fromBase64(payload.psbt, { network: regtest });
    assert.equal(psbt.inputCount, 4, 'd0 twice, d1, t0; not the dust');
    assert.equal(psbt.txOutputs.length, 1);
    assert.equal(bitcoin.address.fromOutputScript(psbt.txOutputs[0]!.script, regtest), COLD);
    const expectedVsize = Math.ceil((10 * 4 + 2 + 3 * INPUT_WEIGHT.p2wpkh + INPUT_WEIGHT.p2tr + 31 * 4) / 4);
    assert.equal(payload.vsize, expectedVsize);
    assert.equal(BigInt(payload.fee), BigInt(expectedVsize) * 7n);
    assert.equal(psbt.txOutputs[0]!.value, 245_000n - BigInt(payload.fee));
    // BIP32 derivations for other signers: the abandon wallet's master fingerprint and the BIP84 path.
    const d = psbt.data.inputs[0]!.bip32Derivation![0]!;
    assert.equal(Buffer.from(d.masterFingerprint).toString('hex'), MASTER_FINGERPRINT);
    assert.equal(d.path, "m/84'/1'/0'/0/0");
    assert.deepEqual(Buffer.from(d.pubkey), Buffer.from(root.derivePath("m/84'/1'/0'/0/0").publicKey));
    // The taproot input (from the BIP86 account) carries its own: BIP371 derivation and internal key.
    const tap = psbt.data.inputs[3]!;
    assert.equal(tap.bip32Derivation, undefined);
    assert.equal(tap.tapBip32Derivation![0]!.path, "m/86'/1'/0'/0/0");
    assert.equal(Buffer.from(tap.tapBip32Derivation![0]!.masterFingerprint).toString('hex'), MASTER_FINGERPRINT);
    assert.deepEqual(Buffer.from(tap.tapInternalKey!), Buffer.from(root.derivePath("m/86'/1'/0'/0/0").publicKey.subarray(1, 33)));
    assert.deepEqual(psbt.data.inputs.map((x) => Boolean(x.bip32Derivation) !== Boolean(x.tapBip32Derivation)), [true, true, true, true], 'every input carries exactly one kind');
    const dust = body.deposits.find((x) => x.derivationIndex === 2);
    assert.equal(dust, undefined);
    assert.match(body.skipped.find((s) => s.address === candidates()[2]!.address)!.reason, /^200 sat dust: spending it costs 483 sat at 7 sat\/vB$/);
    assert.equal(body.skipped.find((s) => s.address === candidates()[3]!.address)!.reason, 'nothing to move');
    // Each deposit's fee and move add up to the transaction's.
    assert.equal(body.deposits.reduce((s, x) => s + BigInt(x.fee), 0n), BigInt(payload.fee));
    assert.equal(body.deposits.reduce((s, x) => s + BigInt(x.moves[0]!.amount), 0n), psbt.txOutputs[0]!.value);
    assert.equal(sim.posted.length, 0);
  });

  test('the signer derives every key from the seed, signs; bitcoinjs validates each signature and finalizes; the node accepts it', async (t) => {
    const { sim, config, network, log } = await world(t);
    const plan = planOf(await bitcoinSweepPlanner.plan({ network, config, log, candidates: candidates(), to: COLD, feePayer: null, min: {} }));
    const [signed] = bitcoinSweepSigner.sign(plan, keysFor(plan));
    const tx = bitcoin.Transaction.fromHex(signed!.raw);
    assert.equal(tx.getId(), signed!.txid);
    // The fee was priced on the largest signature sizes: the real transaction is no bigger.
    const payload = plan.transactions[0]!.payload as BitcoinSweepPayload;
    assert.ok(tx.virtualSize() <= payload.vsize && tx.virtualSize() >= payload.vsize - 2, `vsize ${tx.virtualSize()} against ${payload.vsize} planned`);
    // Rebuild the PSBT from the plan with the signatures from the transaction: bitcoinjs checks each one.
    const psbt = bitcoin.Psbt.fromBase64((plan.transactions[0]!.payload as BitcoinSweepPayload).psbt, { network: regtest });
    const keys = keysFor(plan);
    tx.ins.forEach((input, i) => {
      const address = bitcoin.address.fromOutputScript(psbt.data.inputs[i]!.witnessUtxo!.script, regtest);
      if (input.witness.length === 1) {
        const internal = ecc.pointFromScalar(keys.get(address)!.privateKey, true)!.subarray(1, 33);
        psbt.updateInput(i, { tapInternalKey: internal, tapKeySig: input.witness[0]! });
      } else {
        psbt.updateInput(i, { partialSig: [{ pubkey: input.witness[1]!, signature: input.witness[0]! }] });
      }
    });
    assert.ok(psbt.validateSignaturesOfAllInputs((pubkey, hash, sig) => (pubkey.length === 32 ? ecc.verifySchnorr(hash, pubkey, sig) : ecc.verify(hash, pubkey, sig))));
    psbt.finalizeAllInputs();
    assert.equal(psbt.extractTransaction().getId(), signed!.txid);

    assert.deepEqual(await bitcoinSweepSender.broadcast(network, config, signed!), { accepted: true });
    assert.deepEqual(sim.posted, [signed!.raw]);
    assert.deepEqual(await bitcoinSweepSender.status(network, config, signed!.txid), { state: 'pending' });
    sim.mineEmpty(2);
    assert.deepEqual(await bitcoinSweepSender.status(network, config, signed!.txid), { state: 'pending' });
    sim.mineEmpty(1);
    assert.deepEqual(await bitcoinSweepSender.status(network, config, signed!.txid), { state: 'final' });
    // Sending it again is harmless: the node says it has it, the sender sees it in the chain.
    assert.deepEqual(await bitcoinSweepSender.broadcast(network, config, signed!), { accepted: true });
    assert.match((await bitcoinSweepSender.stale!(network, config, plan))!, /spent already/);
    // What the cold address received: exactly the plan's total.
    const received = tx.outs[0]!.value;
    assert.equal(received.toString(), plan.deposits.reduce((s, d) => s + BigInt(d.moves[0]!.amount), 0n).toString());
  });

  test('a plan whose PSBT pays another address than its summary, or a summary that lies about the fee, is refused', async (t) => {
    const { config, network, log } = await world(t);
    const body = await bitcoinSweepPlanner.plan({ network, config, log, candidates: candidates(), to: COLD, feePayer: null, min: {} });
    // The server says COLD in the summary but the PSBT pays the attacker.
    const evil = await bitcoinSweepPlanner.plan({ network, config, log, candidates: candidates(), to: ATTACKER, feePayer: null, min: {} });
    const lying = planOf({ ...body, transactions: evil.transactions });
    assert.throws(() => bitcoinSweepSigner.sign(lying, keysFor(lying)), /pays somewhere other than the plan's destination/);
    const greedy = planOf({ ...body, deposits: body.deposits.map((d, i) => (i === 0 ? { ...d, fee: (BigInt(d.fee) - 1000n).toString(), moves: [{ ...d.moves[0]!, amount: (BigInt(d.moves[0]!.amount) + 1000n).toString() }] } : d)) });
    assert.throws(() => bitcoinSweepSigner.sign(greedy, keysFor(greedy)), /not what the plan's summary says/);
  });

  test('a seed that is not the pool\'s wallet derives nothing, naming the deposit', async (t) => {
    const { config, network, log } = await world(t);
    const plan = planOf(await bitcoinSweepPlanner.plan({ network, config, log, candidates: candidates(), to: COLD, feePayer: null, min: {} }));
    assert.throws(() => keysFor(plan, OTHER_SEED), /deposit #0 \(key [0-9a-f]{16}\): no account m\/84'\/1'\/0' … 19' of this seed/);
    // The right account but a plan whose address at an index was swapped for another.
    const swapped = { ...plan.deposits[0]!, derivationIndex: 1 };
    assert.throws(() => bitcoinSweepSigner.deriveKey(SEED, swapped, plan, 10), /deposit #1 .*is not the plan's address/);
    // An account xprv works like the seed, and a foreign one is refused.
    const xprv = root.derivePath("m/84'/1'/0'").toBase58();
    assert.equal(bitcoinSweepSigner.deriveKeyFromAccount!(xprv, plan.deposits[0]!, plan, 10).address, plan.deposits[0]!.address);
    const foreign = bip32.fromSeed(Buffer.from(OTHER_SEED), bitcoin.networks.testnet).derivePath("m/84'/1'/0'").toBase58();
    assert.throws(() => bitcoinSweepSigner.deriveKeyFromAccount!(foreign, plan.deposits[0]!, plan, 10), /not the one this pool was seeded from/);
  });

  test('--min leaves small deposits; --xpub of another wallet is refused', async (t) => {
    const { config, network, log } = await world(t);
    const body = await bitcoinSweepPlanner.plan({ network, config, log, candidates: candidates(), to: COLD, feePayer: null, min: { BTC: 80_000n } });
    assert.deepEqual(body.deposits.map((d) => d.derivationIndex), [1]);
    assert.match(body.skipped.find((s) => s.address === candidates()[0]!.address)!.reason, /75000 sat is below --min/);
    const foreign = bip32.fromSeed(Buffer.from(OTHER_SEED), bitcoin.networks.testnet).derivePath("m/84'/1'/0'").neutered().toBase58();
    await assert.rejects(bitcoinSweepPlanner.plan({ network, config, log, candidates: candidates(), to: COLD, feePayer: null, min: {}, accountKeys: [TPUB84, foreign] }), /--xpub tpub\S+ is not a key this pool was seeded from/);
    // A mixed pool with only its BIP84 key: the taproot deposit's input could not be signed by the wallet, so the plan is refused.
    await assert.rejects(
      bitcoinSweepPlanner.plan({ network, config, log, candidates: candidates(), to: COLD, feePayer: null, min: {}, accountKeys: [TPUB84] }),
      new RegExp(`deposit #0 \\(key ${keyFingerprint(TPUB86)}\\) was seeded from an account key not given: pass every account key of the pool, one --xpub each`),
    );
  });
});

describe('bitcoin sweep on Bitcoin Core (scantxoutset, estimatesmartfee, sendrawtransaction)', () => {
  test('plans at the 1 sat/vB floor when the node has no estimate, and broadcasts', async (t) => {
    const { sim, config, network, log } = await world(t, 'core');
    const plan = planOf(await bitcoinSweepPlanner.plan({ network, config, log, candidates: candidates(), to: COLD, feePayer: null, min: {} }));
    const payload = plan.transactions[0]!.payload as BitcoinSweepPayload;
    assert.equal(payload.feeRate, '1');
    assert.equal(bitcoin.Psbt.fromBase64(payload.psbt, { network: regtest }).inputCount, 5, 'at 1 sat/vB the 200 sat output is worth spending');
    const [signed] = bitcoinSweepSigner.sign(plan, keysFor(plan));
    assert.deepEqual(await bitcoinSweepSender.broadcast(network, config, signed!), { accepted: true });
    assert.deepEqual(sim.mempool(), [signed!.txid]);
    sim.mineEmpty(3);
    assert.deepEqual(await bitcoinSweepSender.status(network, config, signed!.txid), { state: 'final' });
  });
});
