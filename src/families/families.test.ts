import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ecc from '@bitcoinerlab/secp256k1';
import { decodeSegwitAddress, encodeSegwitAddress } from './bitcoin/bech32.ts';
import { InvalidAddressError } from '../domain/errors.ts';
import { validateAddress } from './families.ts';
import type { ChainFamily } from '../chains/slugs.ts';
import type { ChainFamilyAdapter } from './family.ts';

test('validateAddress(evm) checksums lower-case input and rejects a wrong mixed-case checksum', () => {
  const good = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';
  assert.equal(validateAddress('evm', good.toLowerCase(), false), good);
  assert.equal(validateAddress('evm', `  ${good}  `, true), good);
  // One letter's case flipped breaks EIP-55.
  assert.throws(() => validateAddress('evm', '0x9858efFD232B4033E47d90003D41EC34EcaEda94', false), /checksum/);
  assert.throws(() => validateAddress('evm', '0x9858EfFD232B4033E47d90003D41EC34EcaEda9', false), InvalidAddressError);
  assert.throws(() => validateAddress('evm', 'XE7338O073KYGTWWZN0F2WZ0R8PX5ZPPZS', false), InvalidAddressError);
  assert.throws(() => validateAddress('evm', '', false), InvalidAddressError);
});

test('validateAddress(bitcoin) keeps mainnet and testnet apart and lower-cases bech32', () => {
  const segwit = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu';
  assert.equal(validateAddress('bitcoin', segwit, false), segwit);
  assert.equal(validateAddress('bitcoin', segwit.toUpperCase(), false), segwit);
  assert.equal(validateAddress('bitcoin', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', false), '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa');
  assert.equal(validateAddress('bitcoin', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', false), '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy');
  const testnetSegwit = 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx';
  assert.equal(validateAddress('bitcoin', testnetSegwit, true), testnetSegwit);
  assert.equal(validateAddress('bitcoin', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', true), 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn');

  assert.throws(() => validateAddress('bitcoin', segwit, true), /this is a mainnet address/);
  assert.throws(() => validateAddress('bitcoin', testnetSegwit, false), /this is a testnet address/);
  // Last character changed: the bech32 checksum fails.
  assert.throws(() => validateAddress('bitcoin', 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv', false), InvalidAddressError);
  assert.throws(() => validateAddress('bitcoin', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', false), InvalidAddressError);
});

test('validateAddress(bitcoin) accepts taproot (bech32m, BIP350) on each network and refuses what would lose the coins', () => {
  // BIP86's first receive address of the abandon … about mnemonic.
  const taproot = 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr';
  assert.equal(validateAddress('bitcoin', taproot, false), taproot);
  assert.equal(validateAddress('bitcoin', taproot.toUpperCase(), false), taproot, 'QR codes carry bech32 in upper case');
  const program = decodeSegwitAddress(taproot);
  assert.ok(!('problem' in program));
  const testnetTaproot = encodeSegwitAddress('tb', 1, program.program);
  const regtestTaproot = encodeSegwitAddress('bcrt', 1, program.program);
  assert.equal(validateAddress('bitcoin', testnetTaproot, true), testnetTaproot);
  assert.equal(validateAddress('bitcoin', regtestTaproot, true, { network: 'REGTEST' }), regtestTaproot);
  assert.throws(() => validateAddress('bitcoin', taproot, true), /this is a mainnet address/);
  assert.throws(() => validateAddress('bitcoin', testnetTaproot, false), /this is a testnet address/);
  assert.throws(() => validateAddress('bitcoin', regtestTaproot, true), /this is a regtest address/);

  const refusals: Array<[string, RegExp]> = [
    // Last character changed.
    ['bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcq', /checksum does not match/],
    // BIP350 invalid vectors: v1 with a bech32 checksum, v0 with a bech32m one, mixed case, bad padding.
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqh2y7hd', /carries a bech32m checksum \(BIP350\), but this one has the older bech32/],
    ['bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kemeawh', /witness v0 .* has a bech32m checksum/],
    ['tb1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vq47Zagq', /mixes upper- and lower-case/],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7v07qwwzcrf', /whole bytes/],
    ['bc1p38j9r5y49hruaue7wxjce0updqjuyyx0kh56v8s25huc6995vvpql3jow4', /character bech32 does not use/],
    // Valid encodings that are no safe deposit: a 40-byte v1 program, witness v2 (anyone can spend).
    ['bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y', /32-byte output key, not 40 bytes/],
    ['bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', /witness version 2 is not in use/],
    // 32 bytes that are no x coordinate on secp256k1: an output nobody could ever spend.
    [encodeSegwitAddress('bc', 1, offCurve()), /not a point on secp256k1/],
  ];
  for (const [address, reason] of refusals) {
    assert.throws(
      () => validateAddress('bitcoin', address, address.toLowerCase().startsWith('tb1')),
      (error: unknown) => error instanceof InvalidAddressError && reason.test(error.message) && !error.message.includes(address),
      reason.source,
    );
  }
});

/** The first 32-byte x (big-endian 1, 2, …) that is not on the curve. */
function offCurve(): Uint8Array {
  for (let x = 1; ; x++) {
    const bytes = new Uint8Array(32);
    bytes[31] = x;
    if (!ecc.isXOnlyPoint(bytes)) return bytes;
  }
}

test('validateAddress(tron) needs a T… Base58Check address with the 0x41 prefix', () => {
  assert.equal(validateAddress('tron', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', false), 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t');
  assert.equal(validateAddress('tron', 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', true), 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
  assert.throws(() => validateAddress('tron', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u', false), /checksum/);
  assert.throws(() => validateAddress('tron', '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa', false), /starting with T/);
  assert.throws(() => validateAddress('tron', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', false), InvalidAddressError);
});

test('validateAddress(solana) accepts 32-byte base58 keys only', () => {
  const mint = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
  assert.equal(validateAddress('solana', mint, false), mint);
  assert.equal(validateAddress('solana', '11111111111111111111111111111111', true), '11111111111111111111111111111111');
  // Too short to be 32 bytes, and too long.
  assert.throws(() => validateAddress('solana', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4w', false), InvalidAddressError);
  assert.throws(() => validateAddress('solana', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1vEPj', false), InvalidAddressError);
  assert.throws(() => validateAddress('solana', 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt10', false), InvalidAddressError);
  assert.throws(() => validateAddress('solana', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', false), InvalidAddressError);
});

test('validateAddress(ton) normalises friendly and raw forms to the non-bounceable friendly form', () => {
  const master = 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs';
  const deposit = validateAddress('ton', master, false);
  assert.match(deposit, /^UQ/);
  assert.equal(validateAddress('ton', master, false, { kind: 'contract' }), master);
  // The raw form of the same account gives the same friendly string.
  const raw = '0:b113a994b5024a16719f69139328eb759596c38a25f59028b146fecdc3621dfe';
  assert.equal(validateAddress('ton', raw, false, { kind: 'contract' }), master);
  assert.equal(validateAddress('ton', raw, false), deposit);
  // On testnet the test-only flag is set (0Q… non-bounceable).
  assert.match(validateAddress('ton', master, true), /^0Q/);
  // A test-only address is refused on mainnet.
  const testOnly = validateAddress('ton', master, true);
  assert.throws(() => validateAddress('ton', testOnly, false), /testnet-only/);

  assert.throws(() => validateAddress('ton', 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDt', false), InvalidAddressError);
  assert.throws(() => validateAddress('ton', '0:xyz', false), InvalidAddressError);
  assert.throws(() => validateAddress('ton', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', false), InvalidAddressError);
});

test('validateAddress messages never repeat the address', () => {
  const bad = 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyv';
  assert.throws(
    () => validateAddress('bitcoin', bad, false),
    (error: unknown) => error instanceof InvalidAddressError && !error.message.includes(bad),
  );
});

test('a family is its folder: a family added to the list (here a fake one, in this test only) is in every list derived from it', async () => {
  const { FAMILY_LIST, addressScripts, atomicUnits, coinRateIds, contractFamilies, familyLabels, familyNames, secretKeyForms, seededFromFile } = await import('./families.ts');
  const { planSchemaFor } = await import('../sweep/plan-file.ts');
  const fake = 'fake' as ChainFamily;
  const fakeForm = { what: 'a fake secret', test: (text: string) => text === 'fake-secret' };
  const fakeFamily: ChainFamilyAdapter = {
    family: fake,
    label: 'Fake',
    native: { symbol: 'FAKE', atomicUnit: 'crumbs', rateId: 'fake-coin' },
    secretKeyForms: [fakeForm],
    addresses: { validate: (input) => input },
    connect: async () => {
      throw new Error('a fake family reads no chain');
    },
    receipts: async () => {
      throw new Error('a fake family reads no chain');
    },
  };
  const families = [...FAMILY_LIST, fakeFamily];

  assert.ok(familyNames(families).includes(fake));
  assert.equal(atomicUnits(families)[fake], 'crumbs');
  assert.equal(coinRateIds(families).FAKE, 'fake-coin');
  assert.ok(secretKeyForms(families).includes(fakeForm));
  assert.ok(seededFromFile(families).includes(fake), 'no xpub keys: its pools are seeded from a file');
  assert.ok(contractFamilies(families).includes(fake), 'it reads claims: it has a payment contract');
  assert.equal(familyLabels([fake], families), 'Fake');
  assert.deepEqual(planSchemaFor(familyNames(families)).shape.family.options, familyNames(families));
  const withScripts: ChainFamilyAdapter = { ...fakeFamily, keys: { fromPublicKey: () => () => '', scripts: ['p2tr'], purposeAndCoin: () => "44'/0'", checkKind: () => {} } };
  assert.deepEqual(addressScripts([FAMILY_LIST.find((f) => f.family === 'evm')!, withScripts]), ['p2tr']);
  assert.ok(!seededFromFile([...FAMILY_LIST, withScripts]).includes(fake));

  // And the lists of the real families are what they were when written out by hand.
  assert.deepEqual(familyNames(), ['evm', 'tron', 'bitcoin', 'solana', 'ton']);
  assert.deepEqual(atomicUnits(), { evm: 'wei', bitcoin: 'sat', solana: 'lamports', ton: 'nanotons', tron: 'sun' });
  assert.deepEqual(coinRateIds(), {
    BTC: 'bitcoin',
    ETH: 'ethereum',
    POL: 'polygon-ecosystem-token',
    BNB: 'binancecoin',
    AVAX: 'avalanche-2',
    TRX: 'tron',
    SOL: 'solana',
    TON: 'the-open-network',
    USDT: 'tether',
    USDC: 'usd-coin',
  });
  assert.deepEqual(seededFromFile(), ['solana', 'ton']);
  assert.deepEqual(addressScripts(), ['p2wpkh', 'p2tr']);
  assert.deepEqual(contractFamilies(), ['evm']);
  assert.equal(familyLabels(contractFamilies()), 'EVM');
});
