import { defineEntity, p } from '@mikro-orm/core';
import { amountColumn, createdAtProperty, idProperty } from './base.ts';

/**
 * A refund of a payment (docs/refunds.md), written once by `refund plan`. Its transaction, fee and
 * state are the refund plan's sweep transactions (sweep_tx by plan_id), never copied here.
 */
const RefundSchema = defineEntity({
  name: 'Refund',
  indexes: [{ properties: ['paymentId', 'createdAt'] }],
  properties: {
    id: idProperty(),
    paymentId: p.string().length(32),
    /** The refund plan (sweep_plan.id): one refund per plan. */
    planId: p.string().length(64).unique(),
    chain: p.string().length(32),
    network: p.string().length(32),
    isTestnet: p.boolean().default(false),
    symbol: p.string().length(16),
    tokenAddress: p.string().length(128).nullable(),
    decimals: p.integer(),
    /** Atomic units the refund covers of the payment (what leaves the address for the buyer, fee included when taken from it). */
    amount: amountColumn(),
    toAddress: p.string().length(128),
    fromAddress: p.string().length(128),
    /** `deposit`: the payment's own deposit; `wallet`: a merchant wallet address named by --from-address. */
    fromKind: p.string().length(16),
    /**
     * The planned network fee paid out of what the payment received, on top of `amount` (atomic; a
     * native refund from the deposit with no fee payer, where what stays covers the fee; "0"
     * otherwise): that fee, as the chain charged it, is part of what the refund uses up of the payment.
     */
    feeFromPayment: amountColumn().default('0'),
    createdAt: createdAtProperty(),
  },
});

export class Refund extends RefundSchema.class {}
RefundSchema.setClass(Refund);
export { RefundSchema };
