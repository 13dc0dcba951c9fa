import { targetOf, type BitcoinNetworkName } from './networks.ts';

// What nBits a block must carry, given the block before it (Bitcoin Core src/pow.cpp
// GetNextWorkRequired / PermittedDifficultyTransition, chainparams.cpp). A block that meets its own
// target proves nothing if the target is one the chain would not accept: this is the check that
// stops a cheap, too-easy block from being taken as work.
//
// - mainnet and signet: the target changes only every 2016 blocks; at a change it moves by at
//   most a factor of 4 either way (the timespan clamp) and never past the network's limit.
// - testnet4 (BIP94): the same, and a block more than 20 minutes after its parent may use the
//   minimum difficulty (powLimit); the block after such a block returns to the period's target.
// - regtest: no retargeting (fPowNoRetargeting): every block has its parent's bits.

export const RETARGET_INTERVAL = 2016;
const MIN_DIFFICULTY_GAP_S = 20 * 60;

export interface HeaderFacts {
  height: bigint;
  bits: number;
  /** Unix seconds. */
  timestamp: number;
}

export interface DifficultyRules {
  retargets: boolean;
  minDifficultyBlocks: boolean;
  powLimitBits: number;
}

export function difficultyRules(network: BitcoinNetworkName, powLimitBits: number): DifficultyRules {
  return {
    retargets: network !== 'REGTEST',
    minDifficultyBlocks: network === 'TESTNET4',
    powLimitBits,
  };
}

const hexBits = (bits: number) => `0x${bits.toString(16).padStart(8, '0')}`;

/**
 * Why `block`'s bits are not what the chain demands after `prev`, or null when they are.
 * `periodBits` (testnet4) is the bits of the newest block of the period that was not a
 * minimum-difficulty one, when the reader has seen it; unknown, a block after a
 * minimum-difficulty block is held only to the network's limit.
 */
export function bitsViolation(rules: DifficultyRules, prev: HeaderFacts, block: HeaderFacts, periodBits: number | null = null): string | null {
  const target = targetOf(block.bits);
  const limit = targetOf(rules.powLimitBits);
  if (target === 0n || target > limit) return `bits ${hexBits(block.bits)} are easier than the network's limit ${hexBits(rules.powLimitBits)}`;
  if (!rules.retargets) return block.bits === prev.bits ? null : `bits ${hexBits(block.bits)} differ from the previous block's ${hexBits(prev.bits)} on a network without retargeting`;

  if (rules.minDifficultyBlocks && block.bits === rules.powLimitBits) {
    return block.timestamp > prev.timestamp + MIN_DIFFICULTY_GAP_S ? null : `minimum-difficulty bits ${hexBits(block.bits)} only 20 minutes after the previous block`;
  }
  // On testnet4 the previous block may be a minimum-difficulty one: the reference is the period's target.
  const reference = rules.minDifficultyBlocks && prev.bits === rules.powLimitBits ? periodBits : prev.bits;
  if (reference === null) return null;
  if (block.height % BigInt(RETARGET_INTERVAL) !== 0n) {
    return block.bits === reference ? null : `bits ${hexBits(block.bits)} within a retarget period where the chain demands ${hexBits(reference)}`;
  }
  // A retarget: at most 4x easier or harder. GetCompact keeps a 23-bit mantissa, so the encoded
  // target may fall a hair below a quarter of the old one: that rounding is allowed.
  const old = targetOf(reference);
  if (target > old * 4n) return `bits ${hexBits(block.bits)} at the retarget are more than 4 times easier than ${hexBits(reference)}`;
  if (target * 4n * 16_385n < old * 16_384n) return `bits ${hexBits(block.bits)} at the retarget are more than 4 times harder than ${hexBits(reference)}`;
  return null;
}
