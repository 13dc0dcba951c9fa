import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { address, getAddressEncoder, getProgramDerivedAddress } from '@solana/kit';
import { encodeBase58 } from '../base58check.ts';
import { ed25519PublicKey, slip10Ed25519 } from '../ed25519-keys.ts';
import { findSolanaIndex, keyFromKeypairFile, solanaDepositAddresses, solanaKeyAt } from './ed25519-keys.ts';
import { associatedTokenAddress, ATA_PROGRAM, TOKEN_2022_PROGRAM, TOKEN_PROGRAM } from './sweep-message.ts';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
/** BIP39: the seed of a phrase with no passphrase (PBKDF2-HMAC-SHA512, 2048 rounds, salt "mnemonic"). */
const bip39Seed = (phrase: string) => new Uint8Array(pbkdf2Sync(phrase.normalize('NFKD'), 'mnemonic', 2048, 64, 'sha512'));
const ABANDON = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';

test('slip10Ed25519() gives SLIP-0010 test vector 1 for ed25519 (satoshilabs/slips slip-0010.md)', () => {
  const seed = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
  const m = slip10Ed25519(seed, []);
  assert.equal(hex(m.chainCode), '90046a93de5380a72b5e45010748567d5ea02bbf6522f979e05c0d8d8ca9fffb');
  assert.equal(hex(m.key), '2b4be7f19ee27bbf30c667b642d5f4aa69fd169872f8fc3059c08ebae2eb19e7');
  assert.equal(hex(ed25519PublicKey(m.key)), 'a4b2856bfec510abab89753fac1ac0e1112364e7d250545963f135f2a33188ed', 'the vector\'s public key without its 00 prefix');
  const m0 = slip10Ed25519(seed, [0]);
  assert.equal(hex(m0.chainCode), '8b59aa11380b624e81507a27fedda59fea6d0b779a778918a2fd3590e16e9c69');
  assert.equal(hex(m0.key), '68e0fe46dfb67e368c75379acec591dad19df3cde26e63b93a8e704f1dade7a3');
  assert.equal(hex(slip10Ed25519(seed, [0, 1, 2, 2]).key), '30d1dc7e5fc04c31219ab25a27ae00b50f6fd66622f6e9c913253d6511d1e662');
  assert.throws(() => slip10Ed25519(seed, [2 ** 31]), /out of range/);
});

test('solanaKeyAt() is the wallets\' m/44\'/501\'/i\'/0\': the BIP39 test phrase gives Phantom\'s first account', () => {
  const seed = bip39Seed(ABANDON);
  assert.equal(solanaKeyAt(seed, 0).address, 'HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk');
  const list = solanaDepositAddresses(seed, 1, 3);
  assert.deepEqual(list.map((l) => l.path), ["m/44'/501'/1'/0'", "m/44'/501'/2'/0'", "m/44'/501'/3'/0'"]);
  assert.equal(new Set(list.map((l) => l.address)).size, 3);
  assert.equal(findSolanaIndex(seed, list[2]!.address, 10), 3);
  assert.equal(findSolanaIndex(seed, list[2]!.address, 3), null, 'index 3 is outside the first 3');
  assert.equal(findSolanaIndex(randomBytes(64), list[0]!.address, 5), null);
});

test('keyFromKeypairFile() reads solana-keygen\'s 64-byte array and refuses a damaged one', () => {
  const { privateKey, address: addr } = solanaKeyAt(randomBytes(64), 0);
  const file = JSON.stringify([...privateKey, ...ed25519PublicKey(privateKey)]);
  assert.equal(keyFromKeypairFile(file).address, addr);
  const damaged = JSON.parse(file) as number[];
  damaged[40] = (damaged[40]! + 1) % 256;
  assert.throws(() => keyFromKeypairFile(JSON.stringify(damaged)), /public half does not match/);
  assert.throws(() => keyFromKeypairFile('[1,2,3]'), /64 bytes/);
});

test('associatedTokenAddress() is the ATA program\'s PDA: @solana/spl-token\'s vector and @solana/kit\'s derivation for both token programs', async () => {
  // Owner HAgk…, mint 32 × 0x44, classic Token program: FF2B… (computed with @solana/spl-token 0.4.14).
  const mint44 = encodeBase58(new Uint8Array(32).fill(0x44));
  assert.equal(associatedTokenAddress('HAgk14JpMQLgt6rVgv7cBQFJWFto5Dqxi472uT3DKpqk', mint44, TOKEN_PROGRAM), 'FF2BjgeRK2LgK8Lj4wY2CTJrmJAKV5ZPCdHqfq1tJLGi');
  const enc = getAddressEncoder();
  for (let i = 0; i < 20; i++) {
    const owner = solanaKeyAt(randomBytes(64), 0).address;
    const mint = solanaKeyAt(randomBytes(64), 0).address;
    for (const program of [TOKEN_PROGRAM, TOKEN_2022_PROGRAM]) {
      const [pda] = await getProgramDerivedAddress({ programAddress: address(ATA_PROGRAM), seeds: [enc.encode(address(owner)), enc.encode(address(program)), enc.encode(address(mint))] });
      assert.equal(associatedTokenAddress(owner, mint, program), pda);
    }
  }
});
