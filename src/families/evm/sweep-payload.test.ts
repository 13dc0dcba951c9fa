import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { getCreate2Address, HDNodeWallet, keccak256, Mnemonic } from 'ethers';
import { keyFingerprint } from '../key-material.ts';
import { CREATE2_DEPLOYER, SWEEPER_ADDRESS, SWEEPER_INIT_CODE_HASH, SWEEPER_SALT } from './sweep-payload.ts';
import { accountFingerprint } from './sweep-sign.ts';

test('SWEEPER_INIT_CODE_HASH is the hash of the committed Sweeper build, and the address its CREATE2 address', () => {
  const artifact = JSON.parse(readFileSync(new URL('../../../contracts/build/Sweeper.json', import.meta.url), 'utf8')) as { bytecode: string };
  assert.equal(keccak256(artifact.bytecode), SWEEPER_INIT_CODE_HASH, 'rebuilt contracts: update SWEEPER_INIT_CODE_HASH in sweep-payload.ts');
  assert.equal(getCreate2Address(CREATE2_DEPLOYER, SWEEPER_SALT, SWEEPER_INIT_CODE_HASH), SWEEPER_ADDRESS);
});

test("the signer's account fingerprint is keyFingerprint() of the account's xpub", () => {
  const seed = Mnemonic.fromPhrase('test test test test test test test test test test test junk').computeSeed();
  for (const n of [0, 3]) {
    const account = HDNodeWallet.fromSeed(seed).derivePath(`m/44'/60'/${n}'`);
    assert.equal(accountFingerprint(account), keyFingerprint(account.neuter().extendedKey));
  }
});
