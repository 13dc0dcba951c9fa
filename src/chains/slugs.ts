// The eleven chain slugs of the spec, in its order. Kept apart from the registry so that code
// which only names chains does not load every chain family's address libraries.

export const CHAIN_SLUGS = [
  'ethereum',
  'polygon',
  'bsc',
  'arbitrum',
  'optimism',
  'base',
  'avalanche',
  'bitcoin',
  'tron',
  'solana',
  'ton',
] as const;

export type ChainSlug = (typeof CHAIN_SLUGS)[number];

/** The chain families: one folder each under src/families/ (docs/indexers.md, "Adding a chain family"). */
export type ChainFamily = 'evm' | 'bitcoin' | 'tron' | 'solana' | 'ton';

const SLUG_SET: ReadonlySet<string> = new Set(CHAIN_SLUGS);

export function isChainSlug(value: string): value is ChainSlug {
  return SLUG_SET.has(value);
}
