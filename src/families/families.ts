import type { ChainOverride } from '../chains/chain-config-schema.ts';
import { resolveRegistry, type ResolvedNetwork, type ResolvedRegistry } from '../chains/registry.ts';
import type { ChainFamily } from '../chains/slugs.ts';
import type { Config } from '../config/schema.ts';
import { InvalidAddressError } from '../domain/errors.ts';
import { OTHER_COIN_IDS } from '../domain/rate-source-http.ts';
import type { Logger } from '../logger.ts';
import { bitcoinFamily } from './bitcoin/family.ts';
import { evmFamily } from './evm/family.ts';
import type { AddressScript, ChainFamilyAdapter, SecretKeyForm, ValidateAddressOptions } from './family.ts';
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

/** The families in one list: every list, table or switch of families is derived from it by the functions below. */
export const FAMILY_LIST: readonly ChainFamilyAdapter[] = Object.values(FAMILIES);

// Each derivation takes the list so that a test can hand it one with a family more.

/** The families' names (a sweep plan's `family`). */
export function familyNames(families: readonly ChainFamilyAdapter[] = FAMILY_LIST): [ChainFamily, ...ChainFamily[]] {
  const names = families.map((f) => f.family);
  if (names.length === 0) throw new Error('no chain family');
  return names as [ChainFamily, ...ChainFamily[]];
}

/** The name of each family's smallest unit of its coin (wei, sat, …). */
export function atomicUnits(families: readonly ChainFamilyAdapter[] = FAMILY_LIST): Readonly<Record<string, string>> {
  return Object.fromEntries(families.map((f) => [f.family, f.native.atomicUnit]));
}

/** CoinGecko ids by symbol: each family's coin, then the coins that belong to no family (src/domain/rate-source-http.ts). */
export function coinRateIds(families: readonly ChainFamilyAdapter[] = FAMILY_LIST): Readonly<Record<string, string>> {
  return { ...Object.fromEntries(families.map((f) => [f.native.symbol, f.native.rateId])), ...OTHER_COIN_IDS };
}

/** The secret forms any family's wallets export (key-file rules). */
export function secretKeyForms(families: readonly ChainFamilyAdapter[] = FAMILY_LIST): SecretKeyForm[] {
  return families.flatMap((f) => f.secretKeyForms ?? []);
}

/** The output scripts a family lets a pool choose (bitcoin: p2wpkh, p2tr). */
export function addressScripts(families: readonly ChainFamilyAdapter[] = FAMILY_LIST): AddressScript[] {
  return [...new Set(families.flatMap((f) => f.keys?.scripts ?? []))];
}

/** Families whose pools are seeded from an address list, not derived from an xpub. */
export function seededFromFile(families: readonly ChainFamilyAdapter[] = FAMILY_LIST): ChainFamily[] {
  return families.filter((f) => !f.keys).map((f) => f.family);
}

/** Families with a payment contract (web3 and service_wallet payments, claimed with /confirm): those that read claims. */
export function contractFamilies(families: readonly ChainFamilyAdapter[] = FAMILY_LIST): ChainFamily[] {
  return families.filter((f) => f.receipts !== undefined).map((f) => f.family);
}

/** How messages name some families: "EVM", "EVM or Tron". */
export function familyLabels(names: readonly ChainFamily[], families: readonly ChainFamilyAdapter[] = FAMILY_LIST): string {
  return names.map((n) => families.find((f) => f.family === n)?.label ?? n).join(' or ');
}

/** Whether the family has a payment contract. */
export function hasPaymentContract(family: ChainFamily): boolean {
  return FAMILIES[family].receipts !== undefined;
}

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
