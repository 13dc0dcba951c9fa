import { UsageError } from '../domain/errors.ts';
import { parseUnits } from '../domain/money.ts';
import { CHAIN_DEFAULTS } from './chain-defaults.ts';
import type { ChainSlug } from './slugs.ts';

// What the offline signer and the broadcast know of chains without a configuration: which network
// labels a chain has, which chain ids its transactions may carry, and the fee bounds a careful
// operator accepts (docs/sweeps.md#fee-bounds). A plan's own labels never switch a check off.

/** Chain ids of local development chains (Hardhat and Anvil: 31337; Ganache and geth --dev: 1337). */
export const DEVNET_CHAIN_IDS: readonly number[] = [31_337, 1_337];

/** The testnet variants an operator may name in the configuration (chains.<slug>.testnet.network), by family. */
const TESTNET_VARIANTS: Readonly<Record<string, readonly string[]>> = {
  bitcoin: ['TESTNET4', 'SIGNET', 'REGTEST'],
  evm: ['DEVNET'],
};

/** The network labels the registry names for a chain: MAINNET, or its testnet and the family's variants. */
export function knownNetworks(chain: ChainSlug, testnet: boolean): string[] {
  const defaults = CHAIN_DEFAULTS[chain];
  if (!testnet) return [defaults.mainnet.network];
  return [defaults.testnet.network, ...(TESTNET_VARIANTS[defaults.family] ?? [])];
}

/** Refuses a plan whose chain, family and network the registry does not name together. */
export function checkPlanNetwork(plan: { chain: ChainSlug; family: string; network: string; testnet: boolean }): void {
  const defaults = CHAIN_DEFAULTS[plan.chain];
  if (!defaults) throw new UsageError(`the plan names chain ${plan.chain}, which this version does not know`);
  if (defaults.family !== plan.family) throw new UsageError(`the plan says ${plan.chain} is a ${plan.family} chain; it is ${defaults.family}`);
  const known = knownNetworks(plan.chain, plan.testnet);
  if (!known.includes(plan.network)) {
    throw new UsageError(`the plan says ${plan.chain} ${plan.testnet ? 'testnet' : 'mainnet'} ${plan.network}; the registry's ${plan.testnet ? 'testnet networks are' : 'mainnet is'} ${known.join(', ')}`);
  }
}

/** The chain ids a transaction of this network may carry (decimal strings); null where the family's transactions carry none. */
export function expectedChainIds(chain: ChainSlug, network: string, testnet: boolean): string[] | null {
  const defaults = CHAIN_DEFAULTS[chain];
  if (defaults.family !== 'evm') return null;
  if (testnet && network === 'DEVNET') return DEVNET_CHAIN_IDS.map(String);
  const id = (testnet ? defaults.testnet : defaults.mainnet).chainId;
  return id === null ? null : [String(id)];
}

/**
 * Per chain, in the native coin: `ceiling`, the most a careful operator pays to move one deposit
 * (whatever moves); `floor`, a fee always accepted for one deposit even when it is more than
 * FEE_SHARE_PERCENT of a small native amount (a small refund). Chosen at several times the fees seen
 * in busy periods (docs/sweeps.md#fee-bounds); `--max-fee` allows more, explicitly.
 */
const FEE_BOUNDS: Readonly<Record<ChainSlug, { floor: string; ceiling: string }>> = {
  ethereum: { floor: '0.0005', ceiling: '0.005' },
  polygon: { floor: '0.2', ceiling: '2' },
  bsc: { floor: '0.0002', ceiling: '0.002' },
  arbitrum: { floor: '0.00005', ceiling: '0.0005' },
  optimism: { floor: '0.00005', ceiling: '0.0005' },
  base: { floor: '0.00005', ceiling: '0.0005' },
  avalanche: { floor: '0.005', ceiling: '0.05' },
  bitcoin: { floor: '0.00002', ceiling: '0.0002' },
  tron: { floor: '2', ceiling: '40' },
  solana: { floor: '0.005', ceiling: '0.01' },
  ton: { floor: '0.1', ceiling: '0.5' },
};

/** The fee a plan may pay, by default, as a share of the native coin it moves (when only the native coin moves). */
export const FEE_SHARE_PERCENT = 2;

export function feeBounds(chain: ChainSlug): { floor: bigint; ceiling: bigint } {
  const decimals = CHAIN_DEFAULTS[chain].native.decimals;
  const b = FEE_BOUNDS[chain];
  return { floor: parseUnits(b.floor, decimals), ceiling: parseUnits(b.ceiling, decimals) };
}
