import { z } from 'zod';

// Operator overrides per chain and network, merged over the registry's defaults (src/chains/registry.ts).

const tokenOverride = z.strictObject({
  address: z.string().min(1),
  decimals: z.int().min(0).max(36).optional(),
});

export const networkOverrideSchema = z.strictObject({
  rpcUrl: z.url().optional(),
  confirmations: z.int().min(1).max(10_000).optional(),
  blockTimeMs: z.int().min(1).optional(),
  tokens: z.record(z.string().regex(/^[A-Z0-9]{2,10}$/, 'a token symbol in capitals'), tokenOverride).optional(),
  paymentContract: z.string().optional(),
  treasury: z.string().optional(),
  traces: z.boolean().optional(),
  startMargin: z.int().min(0).optional(),
});

export const chainOverrideSchema = z.strictObject({
  enabled: z.boolean().optional(),
  mainnet: networkOverrideSchema.optional(),
  testnet: networkOverrideSchema.optional(),
});

export type NetworkOverride = z.infer<typeof networkOverrideSchema>;
export type ChainOverride = z.infer<typeof chainOverrideSchema>;
