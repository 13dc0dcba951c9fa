import * as ecc from '@bitcoinerlab/secp256k1';
import * as bitcoin from 'bitcoinjs-lib';
import { UsageError } from '../../domain/errors.ts';
import { keyFingerprint, parseExtendedPublicKey } from '../key-material.ts';
import { checkBitcoinKeyKind } from './account-keys.ts';
import type { FamilySweepPlanner, Holding, PlannedDeposit, SweepCandidate, UnsignedSweepTx } from '../sweep.ts';
import { bitcoinJsNetwork } from './networks.ts';
import { createSweepApi, type Utxo } from './sweep-api.ts';
import { btc, type BitcoinSweepPayload } from './sweep-payload.ts';
import { planRefund } from './sweep-refund.ts';
import { depositScript, type DepositScript, dustLimit, INPUT_WEIGHT, outputWeight, overheadWeight, vsizeOf } from './sweep-weights.ts';
import { bitcoinSecretKeyForms } from './secret-forms.ts';

// The bitcoin sweep plan (docs/sweeps/bitcoin.md): every confirmed output of the deposits spent by
// one PSBT (more only past MAX_INPUTS) paying the cold address, the fee taken from the coins at the
// node's 6-block estimate. Each input carries its witness UTXO, and with the account's xpub its
// BIP32 derivation, so Sparrow or a hardware wallet can sign the PSBT instead of `sweep sign`.

/** Inputs per transaction: ~270 WU each keeps a transaction far below the 400,000 WU standardness limit. */
export const MAX_INPUTS = 1000;
/** Blocks within which the fee rate aims to confirm. */
const FEE_TARGET_BLOCKS = 6;
/** Bitcoin Core's minimum relay fee (1 sat/vB): the floor when the node has no estimate (regtest). */
const MIN_FEE_RATE = 1n;
const HARDENED = 0x8000_0000;

export type { BitcoinSweepPayload } from './sweep-payload.ts';

interface Spend {
  candidate: SweepCandidate;
  script: DepositScript;
  utxos: Utxo[];
  total: bigint;
  holdings: Holding[];
  leftBehind: PlannedDeposit['leftBehind'];
}

export const bitcoinSweepPlanner: FamilySweepPlanner = {
  async plan({ network, config, log, candidates, to, feePayer, min, accountKeys, masterFingerprint, refund }) {
    if (feePayer !== null) throw new UsageError(`bitcoin ${refund ? 'refunds' : 'sweeps'} pay their fee out of the coins moved: leave out --fee-payer`);
    bitcoin.initEccLib(ecc);
    const js = bitcoin.networks[bitcoinJsNetwork(network.testnet, network.network)];
    const toScript = bitcoin.address.toOutputScript(to, js);
    const derivation = accountKeys && accountKeys.length > 0 ? derivationOf(accountKeys, network.testnet, masterFingerprint ?? null, candidates, js) : null;
    const inputOf = (candidate: SweepCandidate, script: DepositScript, utxo: Utxo) => ({
      hash: utxo.txid,
      index: utxo.vout,
      // Opt in to replace-by-fee: a sweep stuck at a low rate can be bumped by its signer.
      sequence: 0xfffffffd,
      witnessUtxo: { script: bitcoin.address.toOutputScript(candidate.address, js), value: utxo.value },
      ...(derivation?.(candidate, script) ?? {}),
    });
    const api = createSweepApi(network, config);
    const feeRate = async () => maxBig((await api.feeRate(FEE_TARGET_BLOCKS)) ?? MIN_FEE_RATE, MIN_FEE_RATE);

    if (refund) {
      const candidate = candidates[0];
      if (candidates.length !== 1 || !candidate) throw new UsageError(`a refund moves coins from one address, not ${candidates.length}`);
      if (refund.token !== null || refund.symbol !== 'BTC') throw new UsageError(`bitcoin refunds move BTC only, not ${refund.symbol}`);
      const script = depositScript(candidate.address);
      if (script === null) throw new UsageError(`${candidate.address} is not a P2WPKH or P2TR address: refund from the wallet it came from`);
      const rate = await feeRate();
      const utxos = (await api.utxos([candidate.address])).get(candidate.address) ?? [];
      log.info({ chain: network.chain, network: network.network, feeRate: rate.toString() }, 'planning a bitcoin refund');
      return planRefund({ candidate, script, utxos, rate, refund, toScript, js, inputOf });
    }

    const skipped: { address: string; reason: string }[] = [];
    const usable = candidates.filter((c) => {
      if (depositScript(c.address) !== null) return true;
      skipped.push({ address: c.address, reason: 'not a P2WPKH or P2TR address: spend it with the wallet it came from' });
      return false;
    });
    const utxos = usable.length === 0 ? new Map<string, Utxo[]>() : await api.utxos(usable.map((c) => c.address));
    const rate = await feeRate();
    log.info({ chain: network.chain, network: network.network, feeRate: rate.toString(), deposits: usable.length }, 'planning a bitcoin sweep');

    const minimum = min.BTC ?? 0n;
    const spends: Spend[] = [];
    for (const candidate of usable) {
      const script = depositScript(candidate.address)!;
      const all = utxos.get(candidate.address) ?? [];
      if (all.length === 0) {
        skipped.push({ address: candidate.address, reason: 'nothing to move' });
        continue;
      }
      const held = all.reduce((s, u) => s + u.value, 0n);
      const leftBehind: PlannedDeposit['leftBehind'] = [];
      const spendable: Utxo[] = [];
      // An output whose value does not cover the fee of spending it would cost more than it brings.
      const inputCost = BigInt(vsizeOf(INPUT_WEIGHT[script])) * rate;
      for (const u of all) {
        if (!u.confirmed) leftBehind.push({ holding: btc(u.value), reason: 'unconfirmed: a later plan sweeps it' });
        else if (u.value <= inputCost) leftBehind.push({ holding: btc(u.value), reason: `dust: spending it costs ${inputCost} sat at ${rate} sat/vB` });
        else spendable.push(u);
      }
      const total = spendable.reduce((s, u) => s + u.value, 0n);
      if (spendable.length === 0) {
        skipped.push({ address: candidate.address, reason: leftBehind.map((l) => `${l.holding.amount} sat ${l.reason}`).join('; ') });
        continue;
      }
      if (total < minimum) {
        skipped.push({ address: candidate.address, reason: `${total} sat is below --min (${minimum} sat)` });
        continue;
      }
      spends.push({ candidate, script, utxos: spendable, total, holdings: [btc(held)], leftBehind });
    }

    const deposits: PlannedDeposit[] = [];
    const transactions: UnsignedSweepTx[] = [];
    for (const chunk of chunks(spends)) {
      const inputs = chunk.flatMap((s) => s.utxos.map((u) => ({ spend: s, utxo: u })));
      const weight = overheadWeight(inputs.length, 1) + inputs.reduce((w, i) => w + INPUT_WEIGHT[i.spend.script], 0) + outputWeight(toScript.length);
      const vsize = vsizeOf(weight);
      const fee = BigInt(vsize) * rate;
      const total = chunk.reduce((s, c) => s + c.total, 0n);
      const out = total - fee;
      if (out < dustLimit(toScript)) {
        for (const s of chunk) skipped.push({ address: s.candidate.address, reason: `${total} sat in all would leave less than the dust limit after a ${fee} sat fee` });
        continue;
      }
      const psbt = new bitcoin.Psbt({ network: js });
      psbt.setVersion(2);
      for (const { spend, utxo } of inputs) psbt.addInput(inputOf(spend.candidate, spend.script, utxo));
      psbt.addOutput({ script: toScript, value: out });
      // Each deposit pays for its own inputs; the transaction's overhead and output go to the largest.
      const fees = chunk.map((s) => (BigInt(s.utxos.length * INPUT_WEIGHT[s.script]) * rate + 3n) / 4n);
      const largest = chunk.reduce((best, s, i) => (s.total > chunk[best]!.total ? i : best), 0);
      fees[largest] = fees[largest]! + fee - fees.reduce((a, b) => a + b, 0n);
      chunk.forEach((s, i) => {
        deposits.push({ ...s.candidate, holdings: s.holdings, moves: [btc(s.total - fees[i]!)], fee: fees[i]!.toString(), leftBehind: s.leftBehind });
      });
      const addresses = chunk.map((s) => s.candidate.address);
      const payload: BitcoinSweepPayload = { psbt: psbt.toBase64(), feeRate: rate.toString(), vsize, fee: fee.toString() };
      transactions.push({ id: `tx-${transactions.length}`, signers: addresses, deposits: addresses, after: [], payload });
    }
    return { deposits, skipped, transactions };
  },
};

function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** Deposits grouped into transactions of at most MAX_INPUTS inputs, a deposit never split. */
function chunks(spends: Spend[]): Spend[][] {
  const out: Spend[][] = [];
  let current: Spend[] = [];
  let inputs = 0;
  for (const s of spends) {
    if (current.length > 0 && inputs + s.utxos.length > MAX_INPUTS) {
      out.push(current);
      current = [];
      inputs = 0;
    }
    current.push(s);
    inputs += s.utxos.length;
  }
  if (current.length > 0) out.push(current);
  return out;
}

/**
 * The PSBT fields that let another signer find each input's key: BIP32 derivations (BIP174) for
 * P2WPKH, taproot ones and the internal key (BIP371) for P2TR. One account key per account the pool
 * was seeded from (a BIP84 and a BIP86 one for a mixed pool), each matched to its deposits by the
 * pool's fingerprint. The path is the account's standard one (BIP84/BIP86) down to `0/index`; the
 * master fingerprint is the one given (one for all: the accounts of one seed share it), else each
 * account key's parent fingerprint (right only for wallets that record the account as their root).
 * A deposit derived from a key not given is refused: its input could not be signed by the wallet.
 */
function derivationOf(accountKeys: readonly string[], testnet: boolean, masterFingerprint: string | null, candidates: SweepCandidate[], js: bitcoin.Network) {
  if (masterFingerprint !== null && !/^[0-9a-fA-F]{8}$/.test(masterFingerprint)) throw new UsageError('--fingerprint is the master key fingerprint: 8 hex digits, as Sparrow and Core show it (e.g. 73c5da0a)');
  const accounts = new Map<string, ReturnType<typeof accountOf>>();
  for (const accountKey of accountKeys) {
    const account = accountOf(accountKey, testnet, masterFingerprint, candidates);
    for (const source of account.sources) accounts.set(source, account);
  }
  return (candidate: SweepCandidate, script: DepositScript) => {
    // Addresses from a list file or a merchant wallet have no index under a pool key: nothing to write.
    if (candidate.derivationIndex === null) return {};
    const account = accounts.get(candidate.source);
    if (!account) {
      throw new UsageError(
        `deposit #${candidate.derivationIndex} (key ${candidate.source.replace(/^p2tr:/, '')}) was seeded from an account key not given: pass every account key of the pool, one --xpub each (a BIP84 and a BIP86 one for a mixed pool)`,
      );
    }
    const pubkey = account.receive.derive(candidate.derivationIndex).publicKey;
    const derived = script === 'p2tr' ? bitcoin.payments.p2tr({ internalPubkey: pubkey.subarray(1, 33), network: js }).address : bitcoin.payments.p2wpkh({ pubkey, network: js }).address;
    if (derived !== candidate.address) throw new UsageError(`deposit #${candidate.derivationIndex}: --xpub derives another address at 0/${candidate.derivationIndex} than the pool holds`);
    const path = `m/${script === 'p2tr' ? 86 : 84}'/${account.coin}'/${account.index}'/0/${candidate.derivationIndex}`;
    if (script === 'p2tr') {
      const xonly = pubkey.subarray(1, 33);
      return { tapInternalKey: xonly, tapBip32Derivation: [{ masterFingerprint: account.fingerprint, pubkey: xonly, path, leafHashes: [] }] };
    }
    return { bip32Derivation: [{ masterFingerprint: account.fingerprint, pubkey, path }] };
  };
}

/** One account key: the pool sources it seeded, its receive chain, and what its paths start with. */
function accountOf(accountKey: string, testnet: boolean, masterFingerprint: string | null, candidates: SweepCandidate[]) {
  const { node, kind } = parseExtendedPublicKey(accountKey, bitcoinSecretKeyForms);
  checkBitcoinKeyKind(kind, testnet, undefined);
  const id = keyFingerprint(accountKey);
  const sources = [id, `p2tr:${id}`];
  if (!candidates.some((c) => sources.includes(c.source))) {
    throw new UsageError(`--xpub ${accountKey.slice(0, 12)}… is not a key this pool was seeded from (its fingerprint ${id} matches no deposit's); pass the account keys given to \`wallets seed\``);
  }
  const fingerprint = masterFingerprint !== null ? Buffer.from(masterFingerprint, 'hex') : Buffer.alloc(4);
  if (masterFingerprint === null) fingerprint.writeUInt32BE(node.parentFingerprint);
  const index = node.depth === 3 && node.index >= HARDENED ? node.index - HARDENED : 0;
  return { sources, fingerprint, index, coin: testnet ? 1 : 0, receive: node.derive(0) };
}
