import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Address } from '@ton/core';
import { WalletContractV4 } from '@ton/ton';
import { findTonIndex, tonDepositAddresses, tonKeyAt, WALLET_V4R2_CODE } from './wallet-v4.ts';

test('a TON deposit is @ton/ton\'s WalletContractV4 (v4r2, default subwallet) of the key at m/44\'/607\'/i\'', () => {
  const seed = randomBytes(64);
  for (const i of [0, 1, 7]) {
    const key = tonKeyAt(seed, i, false);
    const reference = WalletContractV4.create({ workchain: 0, publicKey: Buffer.from(key.publicKey) });
    assert.equal(key.address, reference.address.toString({ urlSafe: true, bounceable: false }), `index ${i}`);
    assert.ok(key.address.startsWith('UQ'), 'non-bounceable, as the pool stores TON deposits');
  }
  // The v4r2 code hash toncenter and explorers identify the wallet by.
  assert.equal(WALLET_V4R2_CODE.hash().toString('hex'), 'feb5ff6820e2ff0d9483e7e0d62c817d846789fb4ae580c878866d959dabd5c0');
  assert.ok(tonKeyAt(seed, 0, true).address.startsWith('0Q'), 'test-only flag on testnet');
});

test('tonDepositAddresses lists the pool file; findTonIndex finds a listed address again', () => {
  const seed = randomBytes(64);
  const list = tonDepositAddresses(seed, 3, 4, false);
  assert.deepEqual(list.map((l) => [l.index, l.path]), [[3, "m/44'/607'/3'"], [4, "m/44'/607'/4'"], [5, "m/44'/607'/5'"], [6, "m/44'/607'/6'"]]);
  assert.equal(findTonIndex(seed, Address.parse(list[2]!.address), 10), 5);
  assert.equal(findTonIndex(seed, Address.parse(list[2]!.address), 5), null, 'beyond the search limit');
  assert.equal(findTonIndex(randomBytes(64), Address.parse(list[0]!.address), 10), null);
});
