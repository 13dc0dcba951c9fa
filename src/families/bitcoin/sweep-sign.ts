import { createHash } from 'node:crypto';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory, type BIP32Interface } from 'bip32';
import * as bitcoin from 'bitcoinjs-lib';
import { UsageError } from '../../domain/errors.ts';
import { decodeBase58Check } from '../base58check.ts';
import type { FamilySweepSigner, SweepCandidate, SweepKey, SweepPlan } from '../sweep.ts';
import { bitcoinJsNetwork } from './networks.ts';
import type { BitcoinSweepPayload } from './sweep-payload.ts';
import { depositScript, type DepositScript, droppedChangeCeiling } from './sweep-weights.ts';

// The offline half of a bitcoin sweep: keys from the wallet seed (BIP84 for bc1q…, BIP86 for bc1p…),
// found by the pool's key fingerprint and checked against every deposit address, then each PSBT
// checked against the plan (one output, to the plan's destination, for the plan's fee; a refund may
// add one change output back to its address) and signed, finalized and extracted. Pure: no
// database, no network.

const bip32 = BIP32Factory(ecc);
const HARDENED = 0x8000_0000;
/** Accounts of the seed searched for the pool's key (m/84'/0'/0' … m/84'/0'/19'). */
const ACCOUNTS_SEARCHED = 20;

/** The pool's fingerprint of an account key: src/families/derive.ts keyFingerprint, over the node itself. */
function fingerprintOf(node: BIP32Interface): string {
  return createHash('sha256').update(node.publicKey).update(node.chainCode).digest('hex').slice(0, 16);
}

function addressOf(publicKey: Uint8Array, script: DepositScript, network: bitcoin.Network): string {
  const payment = script === 'p2tr' ? bitcoin.payments.p2tr({ internalPubkey: publicKey.subarray(1, 33), network }) : bitcoin.payments.p2wpkh({ pubkey: publicKey, network });
  return payment.address!;
}

function networkOf(plan: SweepPlan): bitcoin.Network {
  return bitcoin.networks[bitcoinJsNetwork(plan.testnet, plan.network)];
}

function scriptOf(candidate: SweepCandidate): DepositScript {
  const script = depositScript(candidate.address);
  if (script === null) throw new UsageError(`deposit ${label(candidate)} is not a P2WPKH or P2TR address: chaingate does not sign for it`);
  return script;
}

function label(candidate: SweepCandidate): string {
  if (candidate.source === 'wallet') return `(the wallet address ${candidate.address})`;
  return candidate.derivationIndex === null ? `from a list file (key ${candidate.source})` : `#${candidate.derivationIndex} (key ${candidate.source})`;
}

/** Sources whose keys are searched under account 0 rather than found by the pool's fingerprint. */
const SEARCHED: ReadonlySet<string> = new Set(['file', 'wallet']);

const accountCache = new WeakMap<Uint8Array, Map<string, BIP32Interface>>();

/** The account node of the seed whose fingerprint is the pool's, searched over the first accounts of the script's purpose. */
function accountFor(seed: Uint8Array, purpose: number, coin: number, fingerprint: string): BIP32Interface | null {
  let cache = accountCache.get(seed);
  if (!cache) accountCache.set(seed, (cache = new Map()));
  const key = `${purpose}/${coin}/${fingerprint}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const root = bip32.fromSeed(seed);
  for (let account = 0; account < ACCOUNTS_SEARCHED; account++) {
    const node = root.derivePath(`m/${purpose}'/${coin}'/${account}'`);
    if (fingerprintOf(node) === fingerprint) {
      cache.set(key, node);
      return node;
    }
  }
  return null;
}

/**
 * The receive key `0/index` of an account, or a search of the first `searchLimit` children (receive
 * ones, and change ones too for a merchant wallet address, which a wallet may have used as either);
 * checked against the plan's address. `where` names the account in the error.
 */
function keyUnder(account: BIP32Interface, candidate: SweepCandidate, plan: SweepPlan, searchLimit: number, where: string): SweepKey {
  const script = scriptOf(candidate);
  const network = networkOf(plan);
  const chains = candidate.source === 'wallet' ? [0, 1] : [0];
  const indexes = candidate.derivationIndex !== null ? [candidate.derivationIndex] : Array.from({ length: searchLimit }, (_, i) => i);
  for (const chain of chains) {
    const parent = account.derive(chain);
    for (const index of indexes) {
      const child = parent.derive(index);
      if (addressOf(child.publicKey, script, network) === candidate.address) return { address: candidate.address, privateKey: Uint8Array.from(child.privateKey!) };
    }
  }
  if (candidate.derivationIndex !== null) {
    throw new UsageError(`deposit ${label(candidate)}: the key this secret derives at 0/${candidate.derivationIndex} is not the plan's address for it: a wrong seed, or a plan that was not made from this wallet's pool`);
  }
  if (candidate.source === 'wallet') {
    throw new UsageError(`the wallet address ${candidate.address}: none of the first ${searchLimit} receive (${where}/0/…) or change (${where}/1/…) keys of this secret gives it: a wrong secret, or an address of another account`);
  }
  throw new UsageError(`deposit ${label(candidate)}: none of the first ${searchLimit} receive keys of this secret gives the plan's address`);
}

/** SLIP-0132 private versions: xprv/tprv (BIP32), zprv/vprv (BIP84). */
const PRIVATE_VERSIONS: Readonly<Record<number, true>> = { 0x0488ade4: true, 0x04358394: true, 0x04b2430c: true, 0x045f18bc: true };

function parseAccountPrivateKey(text: string): BIP32Interface {
  const payload = decodeBase58Check(text);
  if (payload === null || payload.length !== 78) throw new UsageError('the account key is not a valid extended private key (a typo or truncation)');
  const version = new DataView(payload.buffer, payload.byteOffset, payload.byteLength).getUint32(0);
  if (!PRIVATE_VERSIONS[version]) throw new UsageError('the account key is not an xprv, tprv, zprv or vprv');
  try {
    return bip32.fromBase58(text, { wif: 0x80, bip32: { public: 0, private: version }, messagePrefix: '', bech32: '', pubKeyHash: 0, scriptHash: 0 });
  } catch {
    throw new UsageError('the account key is not a valid extended private key');
  }
}

/** A refund's one transaction spends one address; its change, if any, goes back there. */
function refundChangeScript(plan: SweepPlan, txId: string, deposits: string[], network: bitcoin.Network): Uint8Array {
  if (plan.deposits.length !== 1 || plan.transactions.length !== 1 || deposits.length !== 1 || deposits[0] !== plan.deposits[0]!.address) {
    throw new UsageError(`${txId}: a refund plan spends one address in one transaction: refused`);
  }
  return bitcoin.address.toOutputScript(deposits[0], network);
}

/** The buyer receives the refund, or the refund less the fee it paid: never more, never less. */
function checkRefundAmount(plan: SweepPlan, txId: string, paid: bigint, fee: bigint): void {
  const refund = plan.refund;
  if (refund?.symbol !== 'BTC' || refund.token !== null || !/^\d+$/.test(refund.amount)) throw new UsageError(`${txId}: a refund plan without a BTC refund amount: refused`);
  const amount = BigInt(refund.amount);
  if (paid > amount || amount - paid > fee) {
    throw new UsageError(`${txId}: the PSBT pays the buyer ${paid} sat, but the refund is ${amount} sat (less its ${fee} sat fee at most): refused`);
  }
}

export const bitcoinSweepSigner: FamilySweepSigner = {
  deriveKey(seed, candidate, plan, searchLimit) {
    bitcoin.initEccLib(ecc);
    const script = scriptOf(candidate);
    const purpose = script === 'p2tr' ? 86 : 84;
    const coin = plan.testnet ? 1 : 0;
    if (SEARCHED.has(candidate.source)) {
      const path = `m/${purpose}'/${coin}'/0'`;
      return keyUnder(bip32.fromSeed(seed).derivePath(path), candidate, plan, searchLimit, path);
    }
    const account = accountFor(seed, purpose, coin, candidate.source.replace(/^p2tr:/, ''));
    if (account === null) {
      throw new UsageError(
        `deposit ${label(candidate)}: no account m/${purpose}'/${coin}'/0' … ${ACCOUNTS_SEARCHED - 1}' of this seed is the key the pool was seeded from: a wrong seed (or a BIP39 passphrase, which chaingate does not take)`,
      );
    }
    return keyUnder(account, candidate, plan, searchLimit, `m/${purpose}'/${coin}'/${account.index - HARDENED}'`);
  },

  deriveKeyFromAccount(accountKey, candidate, plan, searchLimit) {
    bitcoin.initEccLib(ecc);
    const node = parseAccountPrivateKey(accountKey);
    if (node.depth !== 3 || node.index < HARDENED) throw new UsageError('the account key must be an account-level key (depth 3, such as m/84\'/0\'/0\')');
    if (!SEARCHED.has(candidate.source) && fingerprintOf(node) !== candidate.source.replace(/^p2tr:/, '')) {
      throw new UsageError(`deposit ${label(candidate)}: the account key given is not the one this pool was seeded from (fingerprint ${fingerprintOf(node)})`);
    }
    return keyUnder(node, candidate, plan, searchLimit, 'the account key');
  },

  sign(plan, keys) {
    bitcoin.initEccLib(ecc);
    const network = networkOf(plan);
    const toScript = bitcoin.address.toOutputScript(plan.to, network);
    const byAddress = new Map(plan.deposits.map((d) => [d.address, d]));
    return plan.transactions.map((tx) => {
      const payload = tx.payload as BitcoinSweepPayload;
      if (!payload || typeof payload.psbt !== 'string') throw new UsageError(`${tx.id}: no PSBT in the plan`);
      const psbt = bitcoin.Psbt.fromBase64(payload.psbt, { network });
      // The signature covers what the PSBT says, not the summary: both must agree before anything is signed.
      const outputs = psbt.txOutputs;
      const paying = (script: Uint8Array) => outputs.filter((o) => Buffer.compare(Buffer.from(o.script), Buffer.from(script)) === 0);
      // A refund may keep its remainder with one change output back to the address it spends.
      const change = plan.kind === 'refund' ? paying(refundChangeScript(plan, tx.id, tx.deposits, network)) : [];
      if (paying(toScript).length !== 1 || change.length > 1 || outputs.length !== 1 + change.length) {
        const allowed = plan.kind === 'refund' ? ' (and at most one change output back to the refunding address)' : '';
        throw new UsageError(`${tx.id}: the PSBT pays somewhere other than the plan's destination ${plan.to}${allowed}: refused`);
      }
      let inputSum = 0n;
      psbt.data.inputs.forEach((input, i) => {
        if (!input.witnessUtxo) throw new UsageError(`${tx.id} input ${i}: no witness UTXO, so its amount cannot be checked`);
        const address = bitcoin.address.fromOutputScript(input.witnessUtxo.script, network);
        if (!tx.deposits.includes(address) || !byAddress.has(address)) throw new UsageError(`${tx.id} input ${i}: spends an address that is not a deposit of the plan`);
        inputSum += input.witnessUtxo.value;
      });
      const output = paying(toScript)[0]!.value;
      const fee = inputSum - output - (change[0]?.value ?? 0n);
      const plannedFee = tx.deposits.reduce((s, a) => s + BigInt(byAddress.get(a)?.fee ?? '0'), 0n);
      const plannedMoves = tx.deposits.reduce((s, a) => s + BigInt(byAddress.get(a)?.moves.find((m) => m.symbol === 'BTC')?.amount ?? '0'), 0n);
      if (fee !== plannedFee || fee !== BigInt(payload.fee) || output !== plannedMoves) {
        throw new UsageError(`${tx.id}: the PSBT's fee (${fee} sat) or amount (${output} sat) is not what the plan's summary says (${plannedFee} sat, ${plannedMoves} sat): refused`);
      }
      const dropped = plan.kind === 'refund' && change.length === 0 ? droppedChangeCeiling(bitcoin.address.toOutputScript(tx.deposits[0]!, network), BigInt(payload.feeRate)) : 0n;
      if (fee > BigInt(payload.vsize) * BigInt(payload.feeRate) + dropped) throw new UsageError(`${tx.id}: the fee is above the plan's rate times its size: refused`);
      if (plan.kind === 'refund') checkRefundAmount(plan, tx.id, output, fee);

      psbt.data.inputs.forEach((input, i) => {
        const address = bitcoin.address.fromOutputScript(input.witnessUtxo!.script, network);
        const key = keys.get(address);
        if (!key) throw new UsageError(`${tx.id} input ${i}: no key was derived for its deposit`);
        const publicKey = ecc.pointFromScalar(key.privateKey, true)!;
        if (depositScript(address) === 'p2tr') {
          const internal = publicKey.subarray(1, 33);
          if (!input.tapInternalKey) psbt.updateInput(i, { tapInternalKey: internal });
          // BIP341 key path: the output key is the internal key tweaked by its TapTweak hash (BIP86: no script tree).
          const even = publicKey[0] === 0x02 ? key.privateKey : ecc.privateNegate(key.privateKey);
          const tweaked = ecc.privateAdd(even, bitcoin.crypto.taggedHash('TapTweak', internal))!;
          psbt.signInput(i, { publicKey: ecc.pointFromScalar(tweaked, true)!, sign: () => new Uint8Array(), signSchnorr: (hash: Uint8Array) => ecc.signSchnorr(hash, tweaked) });
        } else {
          psbt.signInput(i, { publicKey, sign: (hash: Uint8Array) => ecc.sign(hash, key.privateKey) });
        }
      });
      const valid = psbt.validateSignaturesOfAllInputs((pubkey, hash, signature) =>
        pubkey.length === 32 ? ecc.verifySchnorr(hash, pubkey, signature) : ecc.verify(hash, pubkey, signature),
      );
      if (!valid) throw new Error(`${tx.id}: a signature did not verify`);
      psbt.finalizeAllInputs();
      const signed = psbt.extractTransaction();
      return { id: tx.id, raw: signed.toHex(), txid: signed.getId() };
    });
  },
};
