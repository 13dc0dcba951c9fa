import type { FamilyAddresses } from '../chains/family-addresses.ts';
import type { ChainFamily, ResolvedNetwork } from '../chains/registry.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../logger.ts';
import { bitcoinAddresses } from './bitcoin/address.ts';
import { evmAddresses } from './evm/address.ts';
import { solanaAddresses } from './solana/address.ts';
import type { ChainSource, SourceFactory } from './source.ts';
import { tonAddresses } from './ton/address.ts';
import { tronAddresses } from './tron/address.ts';

// Every chain family, each in its own folder src/indexers/<family>/: its addresses (validated and
// derived) and its reader. The reader is imported only by `chaingate index`, so serve never loads a
// chain client it does not use. A new family is a folder, a line here, and registry data
// (docs/indexers.md, "Adding a chain family").

export interface ChainFamilyAdapter {
  addresses: FamilyAddresses;
  connect(): Promise<SourceFactory>;
}

export const FAMILIES: Readonly<Record<ChainFamily, ChainFamilyAdapter>> = {
  evm: { addresses: evmAddresses, connect: async () => (await import('./evm/connect.ts')).connectEvm },
  tron: { addresses: tronAddresses, connect: async () => (await import('./tron/connect.ts')).connectTron },
  bitcoin: { addresses: bitcoinAddresses, connect: async () => (await import('./bitcoin/connect.ts')).connectBitcoin },
  solana: { addresses: solanaAddresses, connect: async () => (await import('./solana/connect.ts')).connectSolana },
  ton: { addresses: tonAddresses, connect: async () => (await import('./ton/connect.ts')).connectTon },
};

/** The reader of a network's family, connected and checked (see SourceFactory). */
export async function createChainSource(network: ResolvedNetwork, config: Config, log: Logger): Promise<ChainSource> {
  const connect = await FAMILIES[network.family].connect();
  return connect(network, config, log);
}
