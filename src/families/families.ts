import type { ChainOverride } from '../chains/chain-config-schema.ts';
import { resolveRegistry, type ResolvedNetwork, type ResolvedRegistry } from '../chains/registry.ts';
import type { ChainFamily } from '../chains/slugs.ts';
import type { Config } from '../config/schema.ts';
import { InvalidAddressError } from '../domain/errors.ts';
import type { Logger } from '../logger.ts';
import { bitcoinFamily } from './bitcoin/family.ts';
import { evmFamily } from './evm/family.ts';
import type { ChainFamilyAdapter, ValidateAddressOptions } from './family.ts';
import { solanaFamily } from './solana/family.ts';
import type { ChainSource, ReceiptReader } from './source.ts';
import { tonFamily } from './ton/family.ts';
import { tronFamily } from './tron/family.ts';

// Every chain family, each in its own folder src/families/<family>/ with its family.ts. A new family
// is a folder, a line here, and registry data (docs/indexers.md, "Adding a chain family").

export const FAMILIES: Readonly<Record<ChainFamily, ChainFamilyAdapter>> = {
  evm: evmFamily,
  tron: tronFamily,
  bitcoin: bitcoinFamily,
  solana: solanaFamily,
  ton: tonFamily,
};

/** Returns the address in its canonical form for the family and network, or throws InvalidAddressError (family rules: src/families/<family>/address.ts). */
export function validateAddress(family: ChainFamily, address: string, testnet: boolean, options: ValidateAddressOptions = {}): string {
  const input = address.trim();
  if (input === '') throw new InvalidAddressError(`empty ${family} address`);
  return FAMILIES[family].addresses.validate(input, testnet, options);
}

/** The chain registry with the operator's overrides, every configured address checked by its family. */
export function resolveChains(overrides: Record<string, ChainOverride>): ResolvedRegistry {
  return resolveRegistry(overrides, validateAddress);
}

/** The reader of a network's family, connected and checked (see SourceFactory). */
export async function createChainSource(network: ResolvedNetwork, config: Config, log: Logger): Promise<ChainSource> {
  const connect = await FAMILIES[network.family].connect();
  return connect(network, config, log);
}

/** The reader of buyers' claims on a network (ChainSource.receipt), or null where its family has no payment contract. */
export async function openReceiptReader(network: ResolvedNetwork, log: Logger): Promise<ReceiptReader | null> {
  const receipts = FAMILIES[network.family].receipts;
  return receipts ? (await receipts())(network, log) : null;
}
