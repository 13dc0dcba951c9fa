import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BITCOIN_NETWORKS } from './networks.ts';
import { bitsViolation, difficultyRules } from './difficulty.ts';

// Real mainnet values: bits 0x1d00ffff from genesis to block 32255; the first retarget that changed
// them, block 32256 (2009-12-30), set 0x1d00d86a; block 100,000 carries 0x1b04864c.
const mainnet = difficultyRules('MAINNET', BITCOIN_NETWORKS.MAINNET.powLimitBits);
const at = (height: number, bits: number, timestamp = 1_262_152_739) => ({ height: BigInt(height), bits, timestamp });

test('mainnet: within a 2016-block period the bits must be the previous block\'s; a too-easy block is refused', () => {
  assert.equal(bitsViolation(mainnet, at(32256, 0x1d00d86a), at(32257, 0x1d00d86a)), null);
  assert.match(bitsViolation(mainnet, at(32256, 0x1d00d86a), at(32257, 0x1d00ffff)) ?? '', /bits 0x1d00ffff within a retarget period where the chain demands 0x1d00d86a/);
  // 256 times easier than block 100,000's target, still far under the network's limit: only the period rule catches it.
  assert.match(bitsViolation(mainnet, at(100_000, 0x1b04864c), at(100_001, 0x1c04864c)) ?? '', /bits 0x1c04864c within a retarget period where the chain demands 0x1b04864c/);
  assert.match(bitsViolation(mainnet, at(5, 0x1d00ffff), at(6, 0x1e00ffff)) ?? '', /easier than the network's limit/);
});

test('mainnet: at a retarget the target moves at most 4 times either way', () => {
  assert.equal(bitsViolation(mainnet, at(32255, 0x1d00ffff), at(32256, 0x1d00d86a)), null, 'the real first retarget');
  assert.equal(bitsViolation(mainnet, at(32255, 0x1c3fffc0), at(32256, 0x1d00ffff)), null, '4x easier, capped at the limit');
  assert.equal(bitsViolation(mainnet, at(32255, 0x1c3fffc0), at(32256, 0x1c7fffc0)), null, '2x easier');
  assert.match(bitsViolation(mainnet, at(4031, 0x1c0fffff), at(4032, 0x1c5fffff)) ?? '', /more than 4 times easier/);
  assert.match(bitsViolation(mainnet, at(4031, 0x1c0fffff), at(4032, 0x1c02ffff)) ?? '', /more than 4 times harder/);
  assert.equal(bitsViolation(mainnet, at(4031, 0x1c0fffff), at(4032, 0x1c04ffff)), null);
});

test('testnet4: a minimum-difficulty block only after 20 minutes; the next block returns to the period\'s target', () => {
  const testnet4 = difficultyRules('TESTNET4', BITCOIN_NETWORKS.TESTNET4.powLimitBits);
  const prev = at(70_001, 0x1960ab12, 1_700_000_000);
  assert.equal(bitsViolation(testnet4, prev, at(70_002, 0x1d00ffff, 1_700_000_000 + 1201)), null);
  assert.match(bitsViolation(testnet4, prev, at(70_002, 0x1d00ffff, 1_700_000_000 + 600)) ?? '', /only 20 minutes/);
  const minBlock = at(70_002, 0x1d00ffff, 1_700_001_300);
  assert.equal(bitsViolation(testnet4, minBlock, at(70_003, 0x1960ab12, 1_700_001_400), 0x1960ab12), null);
  assert.match(bitsViolation(testnet4, minBlock, at(70_003, 0x1a60ab12, 1_700_001_400), 0x1960ab12) ?? '', /demands 0x1960ab12/);
});

test('regtest: no retargeting, every block has its parent\'s bits', () => {
  const regtest = difficultyRules('REGTEST', BITCOIN_NETWORKS.REGTEST.powLimitBits);
  assert.equal(bitsViolation(regtest, at(2015, 0x207fffff), at(2016, 0x207fffff)), null);
  assert.match(bitsViolation(regtest, at(10, 0x207fffff), at(11, 0x2000ffff)) ?? '', /without retargeting/);
});
