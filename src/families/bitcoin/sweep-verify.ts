import * as ecc from '@bitcoinerlab/secp256k1';
import * as bitcoin from 'bitcoinjs-lib';
import { CHAIN_DEFAULTS } from '../../chains/chain-defaults.ts';
import { checkPlanNetwork } from '../../chains/sweep-networks.ts';
import { UsageError } from '../../domain/errors.ts';
import type { DecodedSignedTx, DecodedSweepTx, FamilySweepVerifier, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { outputAddress } from './address.ts';
import { bitcoinJsNetwork } from './networks.ts';

// What a bitcoin sweep or refund transaction does, read from its bytes (docs/sweeps/bitcoin.md#what-the-verifier-reads):
// the PSBT's unsigned transaction and witness UTXOs, or the signed raw with those same UTXOs. The
// amounts come from the witness UTXOs, which every signature commits to (BIP143 its own input's,
// BIP341 all of them), so a PSBT lying about an amount yields a transaction no node accepts, never
// a larger fee. Pure: no network, no database, no configuration.

/** A spent output as the PSBT describes it: the script every signature commits to, and its value. */
interface Prevout {
  script: Uint8Array;
  value: bigint;
  address: string;
  kind: 'p2wpkh' | 'p2tr';
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const outpointOf = (hash: Uint8Array, index: number) => `${hex(Uint8Array.from(hash).reverse())}:${index}`;
const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

function networkOf(plan: SweepPlan): bitcoin.Network {
  checkPlanNetwork(plan);
  if (plan.family !== 'bitcoin') throw new UsageError(`a ${plan.family} plan is not read by the bitcoin verifier`);
  return bitcoin.networks[bitcoinJsNetwork(plan.testnet, plan.network)];
}

function psbtOf(tx: UnsignedSweepTx, network: bitcoin.Network): bitcoin.Psbt {
  const payload = tx.payload as { psbt?: unknown } | null;
  if (typeof payload !== 'object' || payload === null || typeof payload.psbt !== 'string') throw new UsageError(`${tx.id}: no PSBT in the plan`);
  try {
    return bitcoin.Psbt.fromBase64(payload.psbt, { network });
  } catch (err) {
    throw new UsageError(`${tx.id}: the PSBT does not decode (${(err as Error).message})`);
  }
}

function addressOf(script: Uint8Array, network: bitcoin.Network, what: string): string {
  const address = outputAddress(script, network);
  if (address === null) throw new UsageError(`${what} is a script that is no address (${hex(script).slice(0, 40)}…): refused`);
  return address;
}

/** Each input's spent output, refusing what chaingate's plans never hold and a signer should not sign. */
function prevoutsOf(tx: UnsignedSweepTx, psbt: bitcoin.Psbt, network: bitcoin.Network): Prevout[] {
  if (psbt.inputCount === 0) throw new UsageError(`${tx.id}: the PSBT spends nothing`);
  const seen = new Set<string>();
  return psbt.data.inputs.map((input, i) => {
    const what = `${tx.id} input ${i}`;
    const outpoint = outpointOf(psbt.txInputs[i]!.hash, psbt.txInputs[i]!.index);
    if (seen.has(outpoint)) throw new UsageError(`${what}: spends ${outpoint} a second time`);
    seen.add(outpoint);
    if (!input.witnessUtxo) throw new UsageError(`${what}: no witness UTXO, so its amount cannot be read`);
    // A second description of the same output could disagree with the one the fee is read from.
    if (input.nonWitnessUtxo) throw new UsageError(`${what}: carries a non-witness UTXO, which chaingate's plans never do`);
    // Anything but "all inputs, all outputs" lets others change the transaction after it is signed.
    const sighash = input.sighashType;
    if (sighash !== undefined && sighash !== bitcoin.Transaction.SIGHASH_ALL && sighash !== bitcoin.Transaction.SIGHASH_DEFAULT) {
      throw new UsageError(`${what}: asks for sighash type ${sighash}; only SIGHASH_ALL (or taproot's default) is signed`);
    }
    const { script, value } = input.witnessUtxo;
    const kind = script.length === 22 && script[0] === 0x00 && script[1] === 0x14 ? 'p2wpkh' : script.length === 34 && script[0] === 0x51 && script[1] === 0x20 ? 'p2tr' : null;
    if (kind === null) throw new UsageError(`${what}: spends a script that is neither P2WPKH nor P2TR`);
    return { script, value, address: addressOf(script, network, `${what}'s output`), kind };
  });
}

/** The decoded content from the spent outputs and the transaction's outputs. */
function content(plan: SweepPlan, id: string, prevouts: Prevout[], outs: { script: Uint8Array; value: bigint }[], network: bitcoin.Network): DecodedSweepTx {
  if (outs.length === 0) throw new UsageError(`${id}: the transaction pays nothing`);
  const { symbol, decimals } = CHAIN_DEFAULTS[plan.chain].native;
  const pays = outs.map((o, i) => ({ to: addressOf(o.script, network, `${id} output ${i}`), symbol, token: null, decimals, amount: o.value }));
  const spent = prevouts.reduce((s, p) => s + p.value, 0n);
  const paid = outs.reduce((s, o) => s + o.value, 0n);
  return { id, spends: [...new Set(prevouts.map((p) => p.address))], pays, fee: spent - paid, feePaidBy: prevouts[0]!.address, chainId: null };
}

/** Checks one input's witness: the key it carries is the input's, and its signature over the transaction verifies. */
function checkWitness(txn: bitcoin.Transaction, i: number, prevouts: Prevout[], what: string): void {
  const prev = prevouts[i]!;
  const witness = txn.ins[i]!.witness;
  const refuse = (why: string) => new UsageError(`${what}: ${why}: refused`);
  if (txn.ins[i]!.script.length !== 0) throw refuse('a native segwit input with a non-empty scriptSig');
  if (prev.kind === 'p2wpkh') {
    if (witness.length !== 2) throw refuse(`a P2WPKH witness of ${witness.length} items, not a signature and a key`);
    const [sig, pubkey] = witness as [Uint8Array, Uint8Array];
    if (pubkey.length !== 33 || Buffer.compare(bitcoin.crypto.hash160(pubkey), prev.script.subarray(2)) !== 0) throw refuse(`its key is not the key of ${prev.address}`);
    let decoded: { signature: Uint8Array; hashType: number };
    try {
      decoded = bitcoin.script.signature.decode(sig);
    } catch {
      throw refuse('its signature is not a DER signature');
    }
    if (decoded.hashType !== bitcoin.Transaction.SIGHASH_ALL) throw refuse(`its signature has sighash type ${decoded.hashType}, not SIGHASH_ALL`);
    const scriptCode = bitcoin.payments.p2pkh({ hash: prev.script.subarray(2) }).output!;
    const hash = txn.hashForWitnessV0(i, scriptCode, prev.value, decoded.hashType);
    if (!safely(() => ecc.verify(hash, pubkey, decoded.signature))) throw refuse(`its signature does not verify against ${prev.address}`);
    return;
  }
  // Key path only: one Schnorr signature, 64 bytes (SIGHASH_DEFAULT) or 65 ending in SIGHASH_ALL; no annex, no script path.
  if (witness.length !== 1) throw refuse(`a P2TR witness of ${witness.length} items, not one key-path signature`);
  const sig = witness[0]!;
  if (sig.length !== 64 && !(sig.length === 65 && sig[64] === bitcoin.Transaction.SIGHASH_ALL)) throw refuse('its signature is not a 64-byte Schnorr signature (or 65 with SIGHASH_ALL)');
  const hashType = sig.length === 64 ? bitcoin.Transaction.SIGHASH_DEFAULT : bitcoin.Transaction.SIGHASH_ALL;
  const hash = txn.hashForWitnessV1(i, prevouts.map((p) => p.script), prevouts.map((p) => p.value), hashType);
  if (!safely(() => ecc.verifySchnorr(hash, prev.script.subarray(2), sig.subarray(0, 64)))) throw refuse(`its signature does not verify against ${prev.address}`);
}

function safely(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

/** Throws naming the first way the signed transaction differs from the PSBT's unsigned one. */
function checkSameTransaction(id: string, psbt: bitcoin.Psbt, txn: bitcoin.Transaction): void {
  const differs = (what: string) => new UsageError(`${id}: the signed transaction is not the plan's: ${what}: refused`);
  if (txn.version !== psbt.version) throw differs(`version ${txn.version}, planned ${psbt.version}`);
  if (txn.locktime !== psbt.locktime) throw differs(`lock time ${txn.locktime}, planned ${psbt.locktime}`);
  const ins = psbt.txInputs;
  if (txn.ins.length !== ins.length) throw differs(`${count(txn.ins.length, 'input')}, planned ${ins.length}`);
  txn.ins.forEach((input, i) => {
    const want = ins[i]!;
    const [got, planned] = [outpointOf(input.hash, input.index), outpointOf(want.hash, want.index)];
    if (got !== planned) throw differs(`input ${i} spends ${got}, planned ${planned}`);
    if (input.sequence !== want.sequence) throw differs(`input ${i} has sequence ${input.sequence}, planned ${want.sequence}`);
  });
  const outs = psbt.txOutputs;
  if (txn.outs.length !== outs.length) throw differs(`${count(txn.outs.length, 'output')}, planned ${outs.length}`);
  txn.outs.forEach((out, i) => {
    const want = outs[i]!;
    if (Buffer.compare(out.script, want.script) !== 0) throw differs(`output ${i} pays another script (${hex(out.script)}) than planned (${hex(want.script)})`);
    if (out.value !== want.value) throw differs(`output ${i} pays ${out.value} sat, planned ${want.value} sat`);
  });
}

export const bitcoinSweepVerifier: FamilySweepVerifier = {
  decodeUnsigned(plan, tx) {
    bitcoin.initEccLib(ecc);
    const network = networkOf(plan);
    const psbt = psbtOf(tx, network);
    return content(plan, tx.id, prevoutsOf(tx, psbt, network), psbt.txOutputs, network);
  },

  decodeSigned(plan, tx, raw): DecodedSignedTx {
    bitcoin.initEccLib(ecc);
    const network = networkOf(plan);
    const psbt = psbtOf(tx, network);
    const prevouts = prevoutsOf(tx, psbt, network);
    if (typeof raw !== 'string' || !/^(?:[0-9a-fA-F]{2})+$/.test(raw)) throw new UsageError(`${tx.id}: the signed raw is not hex`);
    let txn: bitcoin.Transaction;
    try {
      txn = bitcoin.Transaction.fromHex(raw);
    } catch (err) {
      throw new UsageError(`${tx.id}: the signed raw is not a bitcoin transaction (${(err as Error).message})`);
    }
    // One serialisation only: what is sent is exactly what was read.
    if (txn.toHex() !== raw.toLowerCase()) throw new UsageError(`${tx.id}: the signed raw is not in its canonical serialisation`);
    if (!txn.hasWitnesses()) throw new UsageError(`${tx.id}: the signed raw carries no witness: it is not signed`);
    checkSameTransaction(tx.id, psbt, txn);
    for (let i = 0; i < txn.ins.length; i++) checkWitness(txn, i, prevouts, `${tx.id} input ${i} (${prevouts[i]!.address})`);
    // txid: double SHA-256 of the serialisation without witnesses, shown byte-reversed.
    return { ...content(plan, tx.id, prevouts, txn.outs, network), txid: txn.getId() };
  },
};
