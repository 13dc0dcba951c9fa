import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BIP32Factory } from 'bip32';
import * as ecc from '@bitcoinerlab/secp256k1';
import * as bitcoin from 'bitcoinjs-lib';
import { HDNodeWallet, encodeBase58, getBytes, concat, sha256 } from 'ethers';
import { UsageError } from '../domain/errors.ts';
import { deriveAddresses } from './derive.ts';

import { encodeBase58Check, decodeBase58Check } from './base58check.ts';
import { decodeSegwitAddress } from './bitcoin/bech32.ts';
import { assertPublicKeyMaterial, keyFingerprint, parseExtendedPublicKey } from './key-material.ts';
import { secretKeyForms } from './families.ts';

const bip32 = BIP32Factory(ecc);
const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

// BIP32 test vector 1 (https://github.com/bitcoin/bips/blob/master/bip-0032.mediawiki#test-vector-1).
const V1_M0H_XPUB =
  'xpub68Gmy5EdvgibQVfPdqkBBCHxA5htiqg55crXYuXoQRKfDBFA1WEjWgP6LHhwBZeNK1VTsfTFUHCdrfp1bgwQ9xv5ski8PX9rL2dZXvgGDnw';
const V1_M0H_1_XPUB =
  'xpub6ASuArnXKPbfEwhqN6e3mwBcDTgzisQN1wXN9BJcM47sSikHjJf3UFHKkNAWbWMiGj7Wf5uMash7SyYq527Hqck2AxYysAA7xmALppuCkwQ';
const V1_M0H_XPRV =
  'xprv9uHRZZhk6KAJC1avXpDAp4MDc3sQKNxDiPvvkX8Br5ngLNv1TxvUxt4cV1rGL5hj6KCesnDYUhd7oWgT11eZG7XnxHrnYeSvkzY7d2bhkJ7';
// BIP84 (https://github.com/bitcoin/bips/blob/master/bip-0084.mediawiki#test-vectors), account 0 of the abandon mnemonic.
const BIP84_ZPUB =
  'zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs';

test('BIP32 vector 1: the m/0H xpub parses and its public child 1 is the published m/0H/1 xpub', () => {
  // The vector's private key at m/0H, neutered, is the published xpub: our parser agrees with bip32.
  assert.equal(bip32.fromBase58(V1_M0H_XPRV).neutered().toBase58(), V1_M0H_XPUB);
  const { node, kind } = parseExtendedPublicKey(V1_M0H_XPUB);
  assert.equal(kind.prefix, 'xpub');
  assert.equal(node.isNeutered(), true);
  assert.equal(node.derive(1).toBase58(), V1_M0H_1_XPUB);
});

test('BIP32 vector 1: deriveAddresses() from the m/0H xpub matches private derivation of m/0H/0/i', () => {
  const seedRoot = bip32.fromSeed(Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex'));
  const derived = deriveAddresses({ family: 'bitcoin', testnet: false, xpub: V1_M0H_XPUB, start: 0, count: 3 });
  assert.deepEqual(
    derived,
    [0, 1, 2].map((i) => ({
      index: i,
      address: bitcoin.payments.p2wpkh({ pubkey: seedRoot.derivePath(`m/0'/0/${i}`).publicKey }).address,
    })),
  );
});

test('BIP84 vectors: zpub → bc1 native segwit receive addresses', () => {
  const out = deriveAddresses({ family: 'bitcoin', testnet: false, xpub: BIP84_ZPUB, start: 0, count: 2 });
  assert.deepEqual(out, [
    { index: 0, address: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' },
    { index: 1, address: 'bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g' },
  ]);
  // Starting further in gives the same addresses for the same indexes.
  assert.deepEqual(deriveAddresses({ family: 'bitcoin', testnet: false, xpub: BIP84_ZPUB, start: 1, count: 1 }), [out[1]]);
});

test('the same BIP84 key as xpub gives the same addresses as the zpub', () => {
  const payload = decodeBase58Check(BIP84_ZPUB);
  assert.ok(payload);
  const asXpub = encodeBase58Check(Uint8Array.from([0x04, 0x88, 0xb2, 0x1e, ...payload.subarray(4)]));
  assert.deepEqual(
    deriveAddresses({ family: 'bitcoin', testnet: false, xpub: asXpub, start: 0, count: 2 }),
    deriveAddresses({ family: 'bitcoin', testnet: false, xpub: BIP84_ZPUB, start: 0, count: 2 }),
  );
  assert.equal(keyFingerprint(asXpub), keyFingerprint(BIP84_ZPUB));
  assert.match(keyFingerprint(BIP84_ZPUB), /^[0-9a-f]{16}$/);
});

test('testnet: a vpub and a tpub of m/84\'/1\'/0\' give tb1 addresses matching private derivation', () => {
  const root = HDNodeWallet.fromPhrase(ABANDON, undefined, 'm');
  const account = root.derivePath("m/84'/1'/0'");
  const tpubPayload = decodeBase58Check(account.neuter().extendedKey);
  assert.ok(tpubPayload);
  const body = tpubPayload.subarray(4);
  const tpub = encodeBase58Check(Uint8Array.from([0x04, 0x35, 0x87, 0xcf, ...body]));
  const vpub = encodeBase58Check(Uint8Array.from([0x04, 0x5f, 0x1c, 0xf6, ...body]));
  const expected = [0, 1].map((i) => ({
    index: i,
    address: bitcoin.payments.p2wpkh({ pubkey: getBytes(account.derivePath(`0/${i}`).publicKey), network: bitcoin.networks.testnet }).address,
  }));
  assert.match(expected[0]?.address ?? '', /^tb1q/);
  assert.deepEqual(deriveAddresses({ family: 'bitcoin', testnet: true, xpub: vpub, start: 0, count: 2 }), expected);
  assert.deepEqual(deriveAddresses({ family: 'bitcoin', testnet: true, xpub: tpub, start: 0, count: 2 }), expected);
  // Network mix-ups are refused, not silently re-encoded.
  assert.throws(() => deriveAddresses({ family: 'bitcoin', testnet: false, xpub: vpub, start: 0, count: 1 }), /testnet key/);
  assert.throws(() => deriveAddresses({ family: 'bitcoin', testnet: true, xpub: BIP84_ZPUB, start: 0, count: 1 }), /mainnet key/);
});

// BIP86 (https://github.com/bitcoin/bips/blob/master/bip-0086.mediawiki#test-vectors), account 0 of the abandon mnemonic.
const BIP86_XPUB =
  'xpub6BgBgsespWvERF3LHQu6CnqdvfEvtMcQjYrcRzx53QJjSxarj2afYWcLteoGVky7D3UKDP9QyrLprQ3VCECoY49yfdDEHGCtMMj92pReUsQ';

/** The same key data under other version bytes (tpub 0x043587cf, vpub 0x045f1cf6, …). */
function withVersion(key: string, version: number[]): string {
  const payload = decodeBase58Check(key);
  assert.ok(payload);
  return encodeBase58Check(Uint8Array.from([...version, ...payload.subarray(4)]));
}

test('BIP86 vectors: the m/86\'/0\'/0\' xpub with script p2tr gives bc1p5cyx… and bc1p4qhj… (key path only, TapTweak)', () => {
  assert.equal(HDNodeWallet.fromPhrase(ABANDON, undefined, "m/86'/0'/0'").neuter().extendedKey, BIP86_XPUB);
  const out = deriveAddresses({ family: 'bitcoin', testnet: false, xpub: BIP86_XPUB, script: 'p2tr', start: 0, count: 2 });
  assert.deepEqual(out, [
    { index: 0, address: 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr' },
    { index: 1, address: 'bc1p4qhjn9zdvkux4e44uhx8tc55attvtyu358kutcqkudyccelu0was9fqzwh' },
  ]);
  // The vector's internal key (the x coordinate of m/86'/0'/0'/0/0) and tweaked output key.
  const internal = parseExtendedPublicKey(BIP86_XPUB).node.derive(0).derive(0).publicKey.subarray(1);
  assert.equal(Buffer.from(internal).toString('hex'), 'cc8a4bc64d897bddc5fbc2f670f7a8ba0b386779106cf1223c6fc5d7cd6fc115');
  const decoded = decodeSegwitAddress(out[0]!.address);
  assert.ok(!('problem' in decoded));
  assert.equal(Buffer.from(decoded.program).toString('hex'), 'a60869f0dbcf1dc659c9cecbaf8050135ea9e8cdc487053f1dc6880949dc684c');
  // The same key without --script is read as BIP84 (other addresses), and its series is counted apart.
  assert.match(deriveAddresses({ family: 'bitcoin', testnet: false, xpub: BIP86_XPUB, start: 0, count: 1 })[0]!.address, /^bc1q/);
  assert.equal(keyFingerprint(BIP86_XPUB, 'p2tr'), `p2tr:${keyFingerprint(BIP86_XPUB)}`);
  assert.equal(keyFingerprint(BIP86_XPUB, 'p2wpkh'), keyFingerprint(BIP86_XPUB));
});

test('BIP86 on testnet and regtest: a tpub of m/86\'/1\'/0\' gives the tb1p…/bcrt1p… addresses of private derivation', () => {
  bitcoin.initEccLib(ecc);
  const account = HDNodeWallet.fromPhrase(ABANDON, undefined, "m/86'/1'/0'");
  const tpub = withVersion(account.neuter().extendedKey, [0x04, 0x35, 0x87, 0xcf]);
  for (const [network, name, prefix] of [[bitcoin.networks.testnet, undefined, /^tb1p/], [bitcoin.networks.regtest, 'REGTEST', /^bcrt1p/]] as const) {
    const expected = [0, 1, 2].map((i) => ({
      index: i,
      address: bitcoin.payments.p2tr({ internalPubkey: getBytes(account.derivePath(`0/${i}`).publicKey).subarray(1), network }).address,
    }));
    assert.match(expected[0]!.address ?? '', prefix);
    assert.deepEqual(deriveAddresses({ family: 'bitcoin', testnet: true, network: name, xpub: tpub, script: 'p2tr', start: 0, count: 3 }), expected);
  }
  assert.throws(() => deriveAddresses({ family: 'bitcoin', testnet: false, xpub: tpub, script: 'p2tr', start: 0, count: 1 }), /testnet key; for mainnet export the xpub of m\/86'\/0'\/0'/);
  assert.throws(() => deriveAddresses({ family: 'bitcoin', testnet: true, xpub: BIP86_XPUB, script: 'p2tr', start: 0, count: 1 }), /mainnet key; for --testnet export the tpub of m\/86'\/1'\/0'/);
});

test('script p2tr takes plain xpub/tpub keys only: zpub/vpub (BIP84), ypub (BIP49) and other families are refused', () => {
  const call = (xpub: string, over: Partial<Parameters<typeof deriveAddresses>[0]> = {}) =>
    deriveAddresses({ family: 'bitcoin', testnet: false, xpub, script: 'p2tr', start: 0, count: 1, ...over });
  assert.throws(() => call(BIP84_ZPUB), /a zpub is a BIP84 native segwit key .* xpub at m\/86'\/0'\/0'/);
  const vpub = withVersion(BIP84_ZPUB, [0x04, 0x5f, 0x1c, 0xf6]);
  assert.throws(() => call(vpub, { testnet: true }), /a vpub is a BIP84 native segwit key .* tpub at m\/86'\/1'\/0'/);
  assert.throws(() => call(withVersion(BIP84_ZPUB, [0x04, 0x9d, 0x7c, 0xb2])), /nested segwit/);
  const evmXpub = HDNodeWallet.fromPhrase(ABANDON, undefined, "m/44'/60'/0'").neuter().extendedKey;
  assert.throws(() => call(evmXpub, { family: 'evm' }), /--script chooses between bitcoin output types/);
  assert.throws(() => call(evmXpub, { family: 'tron', script: 'p2wpkh' }), /--script/);
});

test('an output descriptor is refused with the way to pass its key; one holding an xprv is refused as private', () => {
  const descriptor = `tr([73c5da0a/86'/0'/0']${BIP86_XPUB}/0/*)`;
  assert.throws(() => deriveAddresses({ family: 'bitcoin', testnet: false, xpub: descriptor, script: 'p2tr', start: 0, count: 1 }), /output descriptor.*--script p2tr/);
  const xprv = HDNodeWallet.fromPhrase(ABANDON, undefined, "m/86'/0'/0'").extendedKey;
  const secret = `tr([73c5da0a/86h/0h/0h]${xprv}/<0;1>/*)`;
  assert.throws(
    () => assertPublicKeyMaterial(secret, secretKeyForms()),
    (error: unknown) => error instanceof UsageError && /PRIVATE/.test(error.message) && !error.message.includes(xprv.slice(4, 30)),
  );
});

test('BIP44 Ethereum vector: the m/44\'/60\'/0\' xpub gives 0x9858EfFD… at 0/0 using the public key only', () => {
  const account = HDNodeWallet.fromPhrase(ABANDON, undefined, "m/44'/60'/0'");
  const xpub = account.neuter().extendedKey;
  assert.match(xpub, /^xpub/);
  const out = deriveAddresses({ family: 'evm', testnet: false, xpub, start: 0, count: 3 });
  assert.deepEqual(out[0], { index: 0, address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' });
  for (const { index, address } of out) assert.equal(address, account.derivePath(`0/${index}`).address);
  // Testnets use the same keys and addresses.
  assert.deepEqual(deriveAddresses({ family: 'evm', testnet: true, xpub, start: 0, count: 3 }), out);
  // The parsed node carries no private key.
  assert.equal(parseExtendedPublicKey(xpub).node.privateKey, undefined);
});

test('Tron m/44\'/195\'/0\': 0/0 is TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH, and agrees with an independent encoding', () => {
  const account = HDNodeWallet.fromPhrase(ABANDON, undefined, "m/44'/195'/0'");
  const out = deriveAddresses({ family: 'tron', testnet: false, xpub: account.neuter().extendedKey, start: 0, count: 2 });
  // Published for this mnemonic by Ian Coleman's BIP39 tool and the Ledger Tron app's test.
  assert.deepEqual(out[0], { index: 0, address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH' });
  assert.deepEqual(out[1], { index: 1, address: 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK' });
  // Second method: ethers' private-key address, prefixed 0x41 and Base58Check-encoded with ethers' own helpers.
  for (const { index, address } of out) {
    const payload = concat(['0x41', account.derivePath(`0/${index}`).address]);
    const check = sha256(sha256(payload)).slice(0, 10);
    assert.equal(encodeBase58(concat([payload, check])), address);
  }
});

test('deriveAddresses() refuses bad ranges, wrong key types and non-derivable families', () => {
  const evmXpub = HDNodeWallet.fromPhrase(ABANDON, undefined, "m/44'/60'/0'").neuter().extendedKey;
  const call = (over: Partial<Parameters<typeof deriveAddresses>[0]>) =>
    deriveAddresses({ family: 'evm', testnet: false, xpub: evmXpub, start: 0, count: 1, ...over });
  assert.throws(() => call({ start: -1 }), UsageError);
  assert.throws(() => call({ count: 0 }), UsageError);
  assert.throws(() => call({ count: 1.5 }), UsageError);
  assert.throws(() => call({ start: 0x7fffffff, count: 2 }), /hardened/);
  assert.throws(() => call({ xpub: BIP84_ZPUB }), /bitcoin segwit key/);
  assert.throws(() => call({ family: 'solana' }), /--file/);
  assert.throws(() => call({ family: 'ton' }), /--file/);
  assert.throws(() => call({ xpub: `${evmXpub.slice(0, -1)}x` }), /not an extended public key/);
  // ypub (nested segwit) is not what a BIP84 wallet watches.
  const payload = decodeBase58Check(BIP84_ZPUB);
  assert.ok(payload);
  const ypub = encodeBase58Check(Uint8Array.from([0x04, 0x9d, 0x7c, 0xb2, ...payload.subarray(4)]));
  assert.throws(() => call({ family: 'bitcoin', xpub: ypub }), /nested segwit/);
});

test('assertPublicKeyMaterial() refuses secrets without echoing them', () => {
  const root = HDNodeWallet.fromPhrase(ABANDON, undefined, 'm');
  const secrets: Array<[string, RegExp]> = [
    [ABANDON, /seed phrase \(12 words\)/],
    [`${'abandon '.repeat(23)}art`, /seed phrase \(24 words\)/],
    [root.derivePath("m/44'/60'/0'").extendedKey, /extended PRIVATE key/],
    [V1_M0H_XPRV, /extended PRIVATE key/],
    // A zprv with its checksum broken is still refused by its prefix.
    ['zprvAWgYBBk7JR8Gjrh4UJQ2uJdG1r3WNRRfURiABBE3RvMXYSrRJL62XuezvGdPvG6GFBZduosCc1YP5wixPox7zhZLfiUm8aunE96BBa4Kei5x', /PRIVATE/],
    [root.derivePath("m/44'/60'/0'/0/0").privateKey, /raw private key/],
    [root.derivePath("m/44'/60'/0'/0/0").privateKey.slice(2), /raw private key/],
    // WIF (compressed, mainnet) of the same private key.
    [encodeBase58Check(getBytes(concat(['0x80', root.derivePath("m/44'/60'/0'/0/0").privateKey, '0x01']))), /WIF/],
    [`[${Array.from({ length: 64 }, (_, i) => i).join(',')}]`, /JSON byte array/],
    [encodeBase58(Uint8Array.from({ length: 64 }, (_, i) => i + 1)), /Solana secret key/],
  ];
  for (const [secret, reason] of secrets) {
    assert.throws(
      () => assertPublicKeyMaterial(secret, secretKeyForms()),
      (error: unknown) =>
        error instanceof UsageError && reason.test(error.message) && /watch-only/.test(error.message) && !error.message.includes(secret),
      reason.source,
    );
    // The derivation entry points refuse the same way.
    assert.throws(() => deriveAddresses({ family: 'evm', testnet: false, xpub: secret, start: 0, count: 1 }), UsageError);
    assert.throws(() => keyFingerprint(secret), UsageError);
  }
  // Public material passes.
  for (const ok of [BIP84_ZPUB, V1_M0H_XPUB, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs']) {
    assert.doesNotThrow(() => assertPublicKeyMaterial(ok, secretKeyForms()));
  }
});

test('a master key (depth 0) is refused with the account path to export instead (issue 42)', () => {
  const seed = Buffer.alloc(32, 7);
  const master = HDNodeWallet.fromSeed(seed);
  assert.equal(master.depth, 0);
  for (const family of ['ethereum', 'bitcoin'] as const) {
    assert.throws(
      () => deriveAddresses({ family: family === 'ethereum' ? 'evm' : 'bitcoin', testnet: false, xpub: master.neuter().extendedKey, start: 0, count: 1 }),
      (err: Error) => err instanceof UsageError && /master key \(depth 0\).*m\/44'\/60'\/0'/.test(err.message),
    );
  }
  // The account below it is taken.
  assert.equal(deriveAddresses({ family: 'evm', testnet: false, xpub: master.derivePath("m/44'/60'/0'").neuter().extendedKey, start: 0, count: 1 }).length, 1);
});
