import { z } from 'zod';
import { httpUrlProblem } from '../domain/http-url.ts';

// Operator overrides per chain and network, merged over the registry's defaults (src/chains/registry.ts).

/** An http(s) URL with a host (src/domain/http-url.ts): refused when the configuration loads. */
export const httpUrl = z.string().superRefine((value, ctx) => {
  const problem = httpUrlProblem(value);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** An explorer's transaction page: an http(s) URL holding `{txHash}` once. */
const explorerTemplate = z.string().superRefine((value, ctx) => {
  if (value.split('{txHash}').length !== 2) return ctx.addIssue({ code: 'custom', message: 'must hold {txHash} once, where the hash goes' });
  const problem = httpUrlProblem(value.replace('{txHash}', 'tx'));
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const tokenOverride = z.strictObject({
  address: z.string().min(1),
  decimals: z.int().min(0).max(36).optional(),
});

export const networkOverrideSchema = z.strictObject({
  rpcUrl: httpUrl.optional(),
  /** What buyers see as the network's name (the devnet: "Ethereum devnet (local)"). */
  label: z.string().min(1).max(60).optional(),
  /** A second endpoint where a family needs one (java-tron's HTTP API beside its /jsonrpc). */
  apiUrl: httpUrl.optional(),
  /** Provider API key, sent as the provider's header (TronGrid: TRON-PRO-API-KEY); never logged. */
  apiKey: z.string().min(1).max(256).optional(),
  confirmations: z.int().min(1).max(10_000).optional(),
  /** A block explorer's transaction page, `{txHash}` standing for the hash; null: no link (docs/chains.md#block-explorers). */
  explorerTxUrl: z.union([explorerTemplate, z.null()]).optional(),
  blockTimeMs: z.int().min(1).optional(),
  tokens: z.record(z.string().regex(/^[A-Z0-9]{2,10}$/, 'a token symbol in capitals'), tokenOverride).optional(),
  paymentContract: z.string().optional(),
  treasury: z.string().optional(),
  traces: z.boolean().optional(),
  startMargin: z.int().min(0).optional(),
  /** How often the indexer asks for the tip, when it should be more often than the block time (bitcoin). */
  pollMs: z.int().min(1000).max(600_000).optional(),
  /**
   * testnet only: which test network. bitcoin: TESTNET4, SIGNET or REGTEST (addresses bcrt1… on
   * REGTEST). EVM: DEVNET, a local development chain of your own (the devnet's Hardhat node).
   */
  network: z.enum(['TESTNET4', 'SIGNET', 'REGTEST', 'DEVNET']).optional(),
  /**
   * EVM only: whether the network takes EIP-7702 (type-4) transactions, which batch sweeps use
   * (docs/sweeps/evm.md). Defaults to the registry's answer for the network; a DEVNET inherits the
   * public testnet's, so a local chain without EIP-7702 sets false (sweeps then top up each deposit).
   */
  eip7702: z.boolean().optional(),
  /** EVM DEVNET only: the local chain's own id (Hardhat's is 31337). */
  chainId: z.int().min(1).max(2 ** 53 - 1).optional(),
  /** bitcoin only: read blocks from an Esplora API (default) or a Bitcoin Core node's JSON-RPC. */
  source: z.enum(['esplora', 'core']).optional(),
  /** solana only: read every block (`blocks`) or the history of each open deposit (`addresses`). */
  mode: z.enum(['blocks', 'addresses']).optional(),
  /** solana blocks mode: getBlock calls in flight at once. */
  concurrency: z.int().min(1).max(32).optional(),
});

export const chainOverrideSchema = z.strictObject({
  enabled: z.boolean().optional(),
  mainnet: networkOverrideSchema.optional(),
  testnet: networkOverrideSchema.optional(),
});

export type NetworkOverride = z.infer<typeof networkOverrideSchema>;
export type ChainOverride = z.infer<typeof chainOverrideSchema>;
