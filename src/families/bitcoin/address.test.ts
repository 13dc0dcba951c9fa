import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as bitcoin from 'bitcoinjs-lib';
import { MAINNET_TAPROOT_TX } from '../../../test/helpers/esplora-sim.ts';
import { validateAddress } from '../families.ts';
import { outputAddress } from './address.ts';
import { decodeSegwitAddress, encodeSegwitAddress } from './bech32.ts';

const { bitcoin: mainnet, testnet, regtest } = bitcoin.networks;
const hex = (text: string) => Uint8Array.from(Buffer.from(text, 'hex'));

test('outputAddress() reads a real mainnet block transaction\'s P2TR outputs as Esplora names them (v1_p2tr, bc1p…)', () => {
  const tx = bitcoin.Transaction.fromHex(MAINNET_TAPROOT_TX.hex);
  assert.equal(tx.getId(), MAINNET_TAPROOT_TX.txid, 'the raw bytes are the transaction the fixture names');
  assert.equal(tx.outs.length, MAINNET_TAPROOT_TX.vout.length);
  tx.outs.forEach((out, i) => {
    const esplora = MAINNET_TAPROOT_TX.vout[i]!;
    assert.equal(Buffer.from(out.script).toString('hex'), esplora.scriptpubkey);
    assert.equal(out.value, BigInt(esplora.value));
    assert.equal(esplora.scriptpubkey_type, 'v1_p2tr');
    assert.equal(outputAddress(out.script, mainnet), esplora.scriptpubkey_address);
    // The same output key on the other networks: tb1p… and bcrt1p…, each valid where it belongs.
    const onTestnet = outputAddress(out.script, testnet)!;
    const onRegtest = outputAddress(out.script, regtest)!;
    assert.match(onTestnet, /^tb1p/);
    assert.match(onRegtest, /^bcrt1p/);
    assert.equal(validateAddress('bitcoin', esplora.scriptpubkey_address, false), esplora.scriptpubkey_address);
    assert.equal(validateAddress('bitcoin', onTestnet, true), onTestnet);
    assert.equal(validateAddress('bitcoin', onRegtest, true, { network: 'REGTEST' }), onRegtest);
  });
});

test('outputAddress() agrees with bitcoinjs-lib on P2PKH, P2SH, P2WPKH and P2WSH, and gives no address to other scripts', () => {
  for (const network of [mainnet, testnet, regtest]) {
    for (let i = 0; i < 20; i++) {
      const scripts = [
        bitcoin.payments.p2pkh({ hash: randomBytes(20), network }).output!,
        bitcoin.payments.p2sh({ hash: randomBytes(20), network }).output!,
        bitcoin.payments.p2wpkh({ hash: randomBytes(20), network }).output!,
        bitcoin.payments.p2wsh({ hash: randomBytes(32), network }).output!,
      ];
      for (const script of scripts) assert.equal(outputAddress(script, network), bitcoin.address.fromOutputScript(script, network));
    }
  }
  // Genesis coinbase's P2PK, an OP_RETURN, a witness v2 program, a 33-byte "v1" program, an empty script.
  const none = [
    '4104678afdb0fe5548271967f1a67130b7105cd6a828e03909a67962e0ea1f61deb649f6bc3f4cef38c4f35504e51ec112de5c384df7ba0b8d578a4c702b6bf11d5fac',
    `6a24aa21a9ed${'00'.repeat(32)}`,
    `5210${'75'.repeat(16)}`,
    `5121${'02'.repeat(33)}`,
    '',
  ];
  for (const script of none) assert.equal(outputAddress(hex(script), mainnet), null, script.slice(0, 12));
});

test('encodeSegwitAddress() and decodeSegwitAddress() round-trip the BIP173 and BIP350 valid vectors', () => {
  // https://github.com/bitcoin/bips/blob/master/bip-0350.mediawiki#test-vectors-for-v0-v16-native-segregated-witness-addresses
  const vectors: Array<[string, string]> = [
    ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', '0014751e76e8199196d454941c45d1b3a323f1433bd6'],
    ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', '00201863143c14c5166804bd19203356da136c985678cd4d27a1b8c6329604903262'],
    ['bc1pw508d6qejxtdg4y5r3zarvary0c5xw7kw508d6qejxtdg4y5r3zarvary0c5xw7kt5nd6y', '5128751e76e8199196d454941c45d1b3a323f1433bd6751e76e8199196d454941c45d1b3a323f1433bd6'],
    ['BC1SW50QGDZ25J', '6002751e'],
    ['bc1zw508d6qejxtdg4y5r3zarvaryvaxxpcs', '5210751e76e8199196d454941c45d1b3a323'],
    ['tb1pqqqqp399et2xygdj5xreqhjjvcmzhxw4aywxecjdzew6hylgvsesf3hn0c', '5120000000c4a5cad46221b2a187905e5266362b99d5e91c6ce24d165dab93e86433'],
    ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', '512079be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798'],
  ];
  for (const [address, scriptPubKey] of vectors) {
    const decoded = decodeSegwitAddress(address);
    assert.ok(!('problem' in decoded), address);
    const script = hex(scriptPubKey);
    const version = script[0] === 0 ? 0 : script[0]! - 0x50;
    assert.equal(decoded.version, version);
    assert.equal(decoded.variant, version === 0 ? 'bech32' : 'bech32m');
    assert.deepEqual(decoded.program, script.subarray(2));
    assert.equal(encodeSegwitAddress(decoded.hrp, decoded.version, decoded.program), address.toLowerCase());
  }
});
