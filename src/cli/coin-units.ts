import type { Config } from '../config/schema.ts';
import { formatUnits } from '../domain/money.ts';
import { atomicUnits, resolveChains } from '../families/families.ts';

// What commands print for an amount held as atomic units (sweep and refund broadcasts, sweep show,
// transfers): coin units with the symbol ("0.00831233233303932 ETH"), never a bare atomic number
// labelled as a coin. Where an atomic figure is the useful one it carries its unit's name.

/** The name of each family's smallest unit of its native coin (the family's descriptor names it). */
export const ATOMIC_UNIT: Readonly<Record<string, string>> = atomicUnits();

export interface CoinUnits {
  /** `amount` atomic units of `symbol` in coin units with the symbol; a symbol the network does not know is labelled atomic. */
  coins(symbol: string, atomic: string | bigint): string;
  /** A native-coin amount (fees) in coin units with the symbol. */
  native(atomic: string | bigint): string;
  /** A native-coin amount in atomic units, with the unit's name ("21000000147000 wei"). */
  atomic(atomic: string | bigint): string;
  nativeSymbol: string;
  /** The decimals of `symbol` on this network; null when the registry does not know it. */
  decimals(symbol: string): number | null;
}

/** The units of one network, `network` being a payment's network name (MAINNET, SEPOLIA, DEVNET, …). */
export function coinUnitsOf(config: Pick<Config, 'chains'>, chain: string, network: string | null): CoinUnits {
  const registry = resolveChains(config.chains);
  const entry = registry.chains[chain as keyof typeof registry.chains];
  if (!entry) return unknownUnits(chain);
  // A payment's network names which side of the chain it is on; a plan from before the column was kept says nothing: mainnet's decimals are the same.
  const net = network && network !== entry.mainnet.network && network === entry.testnet.network ? entry.testnet : entry.mainnet;
  const decimals = new Map<string, number>();
  for (const side of [entry.mainnet, entry.testnet]) for (const t of side.tokens) if (!decimals.has(t.symbol)) decimals.set(t.symbol, t.decimals);
  for (const t of net.tokens) decimals.set(t.symbol, t.decimals);
  const native = entry.mainnet.native;
  const unit = ATOMIC_UNIT[entry.family];
  const coins = (symbol: string, atomic: string | bigint): string => {
    const d = decimals.get(symbol.toUpperCase());
    return d === undefined ? `${atomic} atomic units of ${symbol}` : `${formatUnits(BigInt(atomic), d)} ${symbol}`;
  };
  return {
    coins,
    native: (atomic) => `${formatUnits(BigInt(atomic), native.decimals)} ${native.symbol}`,
    atomic: (atomic) => `${BigInt(atomic)} ${unit}`,
    nativeSymbol: native.symbol,
    decimals: (symbol) => decimals.get(symbol.toUpperCase()) ?? (symbol.toUpperCase() === native.symbol ? native.decimals : null),
  };
}

/** `coinUnitsOf` for many rows: each chain and network resolved once. */
export function coinUnitsFor(config: Pick<Config, 'chains'>): (chain: string, network: string | null) => CoinUnits {
  const known = new Map<string, CoinUnits>();
  return (chain, network) => {
    const key = `${chain}:${network ?? ''}`;
    let units = known.get(key);
    if (!units) known.set(key, (units = coinUnitsOf(config, chain, network)));
    return units;
  };
}

function unknownUnits(chain: string): CoinUnits {
  const label = (atomic: string | bigint) => `${atomic} atomic units on ${chain}`;
  return { coins: (symbol, atomic) => `${atomic} atomic units of ${symbol}`, native: label, atomic: label, nativeSymbol: '?', decimals: () => null };
}
