import { z } from 'zod';
import { CHAIN_SLUGS } from '../../chains/slugs.ts';
import { PAYMENT_STATUSES } from '../../domain/lifecycle.ts';
import { absoluteUrl, jsonObject } from '../validation.ts';

export const createInvoiceBody = z.strictObject({
  orderId: z.string().min(1).max(255),
  // 1 to 10^15 - 1 minor units: zero is no invoice, and every accepted amount converts into a
  // crypto amount the database holds (docs/api.md#limits).
  amount: z.string().regex(/^[1-9]\d{0,14}$/, 'must be a string of a positive integer of minor units, at most 15 digits, e.g. "2500"'),
  currency: z
    .string()
    .min(1)
    .max(10)
    .regex(/^[A-Za-z0-9]+$/, 'must be a currency code such as "USD"')
    .transform((v) => v.toUpperCase()),
  description: z.string().max(500).default(''),
  customerEmail: z.email().max(320).optional(),
  customerName: z.string().max(255).optional(),
  customerMetadata: jsonObject.default({}),
  metadata: jsonObject.default({}),
  returnUrl: absoluteUrl.optional(),
  cancelUrl: absoluteUrl.optional(),
  expiresInMinutes: z.int().min(15).max(1440).default(60),
});

export const gatewayCheckoutBody = z.strictObject({
  blockchain: z.string().min(1).max(32),
  cryptoCurrency: z.string().min(1).max(16),
  /**
   * Selects the chain's testnet and its pool (gateway only; docs/api.md). Left out: false, or true on
   * a test deployment (checkout.offerTestnets), so one integration runs unchanged against both.
   */
  testnet: z.boolean().optional(),
});

const intParam = (name: string) =>
  z
    .string()
    .regex(/^\d{1,9}$/, `${name} must be a non-negative integer`)
    .transform(Number);

export const listPaymentsQuery = z.strictObject({
  status: z.enum(PAYMENT_STATUSES, { message: `must be one of ${PAYMENT_STATUSES.join(', ')} (case-sensitive)` }).optional(),
  blockchain: z.enum(CHAIN_SLUGS, { message: `must be one of ${CHAIN_SLUGS.join(', ')} (lowercase)` }).optional(),
  skip: intParam('skip').default(0),
  take: intParam('take')
    .refine((n) => n >= 1, 'take must be at least 1')
    .transform((n) => Math.min(n, 100))
    .default(20),
});
