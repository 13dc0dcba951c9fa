import { z } from 'zod';
import { PAYMENT_METHODS } from '../../domain/payment-methods.ts';

/** POST /checkout/api/v1/invoices/{id}/checkout. No testnet selector here (spec): `testnet` is an unknown field. */
export const publicCheckoutBody = z.strictObject({
  blockchain: z.string().min(1).max(32),
  cryptoCurrency: z.string().min(1).max(16),
  /** direct when omitted (docs/checkout.md). */
  method: z.enum(PAYMENT_METHODS, { message: `must be one of ${PAYMENT_METHODS.join(', ')}` }).default('direct'),
});

/** POST /checkout/api/v1/payments/{id}/confirm. */
export const confirmBody = z.strictObject({
  txHash: z.string().regex(/^0x[a-fA-F0-9]{64}$/, 'must be a transaction hash: 0x followed by 64 hex digits'),
});
