import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import net from 'node:net';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { computeAddress, Mnemonic, SigningKey } from 'ethers';
import { loadConfig } from '../../src/config/load-config.ts';
import { deriveAddresses } from '../../src/families/derive.ts';
import { keyFingerprint } from '../../src/families/key-material.ts';
import { resolveChains } from '../../src/families/families.ts';
import type { SignedSweepTx, SweepCandidate, SweepKey, SweepPlan } from '../../src/families/sweep.ts';
import { hexToTron } from '../../src/families/tron/address.ts';
import type { TronSweepPayload } from '../../src/families/tron/sweep-payload.ts';
import { decodeRaw, decodeSigned } from '../../src/families/tron/sweep-proto.ts';
import { tronSweepSender } from '../../src/families/tron/sweep-send.ts';
import { tronSweepSigner } from '../../src/families/tron/sweep-sign.ts';
import type { TronSweepSim } from './java-tron-sweep-sim.ts';

// The Tron family's sweep and refund modules on the java-tron-shaped node (sweep-tron.test.ts,
// refund-tron.test.ts): the test wallet and its pool, mainnet over the simulator, and what
// `sweep sign` and `sweep broadcast` do with the family's signer and sender.

export const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
export const seed = () => Uint8Array.from(Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex'));
/** The pool's account m/44'/195'/0'. */
export const account = BIP32Factory(ecc).fromSeed(Buffer.from(seed())).derivePath("m/44'/195'/0'");
export const XPUB = account.neutered().toBase58();
export const SOURCE = keyFingerprint(XPUB);
export const pool = deriveAddresses({ family: 'tron', testnet: false, network: 'MAINNET', xpub: XPUB, start: 0, count: 6 });
export const tronAddressOf = (publicKey: Uint8Array) => hexToTron(computeAddress(`0x${Buffer.from(publicKey).toString('hex')}`));
/** The fee payer: the account's first change address (sweep-sign.ts looks there). */
export const FEE_PAYER = tronAddressOf(account.derive(1).derive(0).publicKey);
export const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';

export function world(sim: TronSweepSim) {
  const { config } = loadConfig({ env: {}, overrides: { chains: { tron: { mainnet: { rpcUrl: `${sim.url}/jsonrpc` } } }, indexer: { rpcTimeoutMs: 2000 } } });
  return { config, network: resolveChains(config.chains).chains.tron.mainnet };
}

export const candidates = (indexes: number[]): SweepCandidate[] => indexes.map((i) => ({ address: pool[i]!.address, derivationIndex: i, source: SOURCE }));

/** Every deposit's key from the seed, and the fee payer's, as `sweep sign` derives them. */
export function keysFor(plan: SweepPlan): Map<string, SweepKey> {
  const s = seed();
  const keys = new Map(plan.deposits.map((d) => [d.address, tronSweepSigner.deriveKey(s, d, plan, 50)]));
  if (plan.feePayer !== null) keys.set(plan.feePayer, tronSweepSigner.deriveKey(s, { address: plan.feePayer, derivationIndex: null, source: 'fee-payer' }, plan, 50));
  return keys;
}

/** Signs with every socket and fetch blocked: the signer must not reach out. */
export function signOffline(plan: SweepPlan, keys: Map<string, SweepKey>): SignedSweepTx[] {
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
  try {
    return tronSweepSigner.sign(plan, keys);
  } finally {
    net.Socket.prototype.connect = connect;
    globalThis.fetch = realFetch;
    assert.equal(dialled, 0);
  }
}

/** What `sweep broadcast --wait` does: send each transaction once those it comes after are final; the fee each burned. */
export async function broadcastInOrder(w: ReturnType<typeof world>, plan: SweepPlan, signed: SignedSweepTx[]): Promise<Map<string, bigint>> {
  const final = new Set<string>();
  const fees = new Map<string, bigint>();
  for (let round = 0; final.size < signed.length; round++) {
    assert.ok(round < 10, 'the after-chains end');
    for (const tx of plan.transactions) {
      if (final.has(tx.id) || tx.after.some((a) => !final.has(a))) continue;
      const s = signed.find((x) => x.id === tx.id)!;
      assert.deepEqual(await tronSweepSender.broadcast(w.network, w.config, s), { accepted: true }, tx.id);
      const status = await tronSweepSender.status(w.network, w.config, s.txid);
      assert.equal(status.state, 'final', `${tx.id}: ${status.error ?? ''}`);
      fees.set(tx.id, BigInt(status.fee ?? '0'));
      final.add(tx.id);
    }
  }
  return fees;
}

/** Each signature recovers its transaction's owner over sha256(raw_data), and the signed raw_data is the planned one. */
export function assertSignedByOwners(plan: SweepPlan, signed: SignedSweepTx[]): void {
  for (const [i, s] of signed.entries()) {
    const { raw, signatures } = decodeSigned(Uint8Array.from(Buffer.from(s.raw, 'hex')));
    assert.equal(s.txid, createHash('sha256').update(raw).digest('hex'));
    assert.equal(Buffer.from(raw).toString('hex'), (plan.transactions[i]!.payload as TronSweepPayload).rawData);
    const sig = signatures[0]!;
    const signer = computeAddress(SigningKey.recoverPublicKey(`0x${s.txid}`, { r: `0x${Buffer.from(sig.subarray(0, 32)).toString('hex')}`, s: `0x${Buffer.from(sig.subarray(32, 64)).toString('hex')}`, v: sig[64]! }));
    assert.equal(hexToTron(signer), plan.transactions[i]!.signers[0]);
    assert.equal(decodeRaw(raw).contract.owner.slice(2), signer.slice(2).toLowerCase());
  }
}

/**
 * The plan priced every transaction as the node charged it (issue 45): each burned exactly its
 * planned fee, but for a token transfer's energy, of which the plan states the fee limit (the most
 * it can burn) and the node burns what the call used.
 */
export function assertBurnedAsPlanned(plan: SweepPlan, signed: SignedSweepTx[], sim: TronSweepSim): void {
  for (const tx of plan.transactions) {
    const payload = tx.payload as TronSweepPayload;
    const info = sim.info(signed.find((s) => s.id === tx.id)!.txid);
    assert.ok(info, `${tx.id} was mined`);
    const feeLimit = decodeRaw(Buffer.from(payload.rawData, 'hex')).feeLimit;
    const energyBurned = BigInt(Number(info.receipt.energy_fee ?? 0));
    assert.ok(energyBurned <= feeLimit, `${tx.id}: energy within its fee limit`);
    assert.equal(info.fee, BigInt(payload.fee) - feeLimit + energyBurned, `${tx.id} (${payload.kind}, bandwidth ${payload.bandwidthFrom}${payload.createsAccount ? ', creates an account' : ''}): the node burned what the plan priced`);
  }
}
