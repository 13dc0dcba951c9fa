import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import { readWalletSecret } from './seed-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'chaingate-seed-'));
const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
// BIP39 test vector: the seed of the phrase above with an empty passphrase (the reference vectors use "TREZOR").
const SEED_HEX = '5eb00bbddcf069084889a8ab9155568165f5c453ccb85e70811aaed6f6da5fc19a5ac40b389cd370d086206dec8aa6c43daea6690f20ad3d8d48b2d2ce9e38e4';

function file(name: string, text: string, mode: number): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

test('a phrase, a hex seed and an xprv are read from a 0600 file; the phrase gives its BIP39 seed', () => {
  const fromPhrase = readWalletSecret({ file: file('phrase', `${PHRASE}\n`, 0o600) });
  assert.equal(fromPhrase.kind === 'seed' && Buffer.from(fromPhrase.seed).toString('hex'), SEED_HEX);
  const fromHex = readWalletSecret({ file: file('hex', SEED_HEX, 0o400) });
  assert.equal(fromHex.kind === 'seed' && Buffer.from(fromHex.seed).toString('hex'), SEED_HEX);
  const xprv = BIP32Factory(ecc).fromSeed(Buffer.from(SEED_HEX, 'hex')).derivePath("m/84'/0'/0'").toBase58();
  assert.deepEqual(readWalletSecret({ stdin: true }, () => `${xprv}\n`), { kind: 'account', key: xprv });
});

test('a seed file others can read is refused, saying chmod 600; nothing of the secret is repeated', () => {
  for (const mode of [0o644, 0o640, 0o604]) {
    const path = file(`open-${mode.toString(8)}`, PHRASE, mode);
    assert.throws(() => readWalletSecret({ file: path }), (err: Error) => /can be read by others .*run `chmod 600 /.test(err.message) && !err.message.includes('abandon'));
  }
});

test('bad secrets are refused with what is read instead, never the text itself', () => {
  for (const text of ['abandon '.repeat(12).trim(), 'hello world', 'ab'.repeat(32)]) {
    assert.throws(() => readWalletSecret({ stdin: true }, () => text), (err: Error) => !err.message.includes(text.slice(0, 10)) && /BIP39|expected/.test(err.message));
  }
  assert.throws(() => readWalletSecret({}), /--seed-file <path> \(mode 0600\) or --seed-stdin/);
  assert.throws(() => readWalletSecret({ file: join(dir, 'missing') }), /cannot read the seed file/);
});
