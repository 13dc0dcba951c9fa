import { defineEntity, p } from '@mikro-orm/core';
import { amountColumn, createdAtProperty, idProperty, updatedAtProperty } from './base.ts';
import { Invoice } from './invoice.entity.ts';
import { MerchantPoint } from './merchant-point.entity.ts';

import type { PaymentStatus } from '../../domain/lifecycle.ts';
import type { PaymentMethod, PaymentType } from '../../domain/payment-methods.ts';

const PaymentSchema = defineEntity({
  name: 'Payment',
  indexes: [
    { properties: ['merchant', 'createdAt'] },
    { properties: ['invoice', 'createdAt'] },
    { properties: ['blockchain', 'isTestnet', 'status'] },
    { properties: ['status', 'expiresAt'] },
    // The indexer's read of the payments changed since its previous poll (src/indexer/watch-set.ts).
    { properties: ['blockchain', 'isTestnet', 'updatedAt'] },
    // The dashboard's list: search by deposit address and transaction hash (any case), the live poll.
    { properties: ['updatedAt'] },
    { name: 'payment_address_lower_index', expression: 'create index payment_address_lower_index on payment (lower(address))' },
    { name: 'payment_transaction_hash_lower_index', expression: 'create index payment_transaction_hash_lower_index on payment (lower(transaction_hash))' },
    // The "underpaid" and "overpaid" filters: the few completed payments whose amounts differ.
    { name: 'payment_settled_off_index', properties: ['invoice', 'receivedAmount', 'expectedAmount'], where: "status = 'COMPLETED' and received_amount <> expected_amount" },
  ],
  properties: {
    id: idProperty(),
    referenceId: p.string().length(32).unique(),
    invoice: () => p.manyToOne(Invoice),
    merchant: () => p.manyToOne(MerchantPoint),
    status: p.string().length(24).$type<PaymentStatus>().default('PENDING'),
    paymentType: p.string().length(24).$type<PaymentType>().default('DIRECT'),
    method: p.string().length(24).$type<PaymentMethod>().default('direct'),
    blockchain: p.string().length(32),
    network: p.string().length(32),
    isTestnet: p.boolean().default(false),
    cryptoCurrency: p.string().length(16),
    decimals: p.integer(),
    /** Token contract / mint / jetton master; null for the native coin. */
    tokenAddress: p.string().length(128).nullable(),
    /** Stored paymentAmount, serialised as `amount` (decimal string in coin units). */
    amount: amountColumn(),
    expectedAmount: amountColumn(),
    receivedAmount: amountColumn().default('0'),
    /** Deposit address for direct payments; treasury wallet for contract payments. */
    address: p.string().length(128),
    confirmations: p.integer().default(0),
    requiredConfirmations: p.integer(),
    transactionHash: p.string().length(128).nullable(),
    /** Block of the first credited transfer, for confirmation counting. */
    blockNumber: p.string().length(32).nullable(),
    contractAddress: p.string().length(128).nullable(),
    externalId: p.string().length(66).nullable().unique(),
    externalIdUuid: p.string().length(36).nullable(),
    metadata: p.json<Record<string, unknown>>(),
    expiresAt: p.datetime(3),
    completedAt: p.datetime(3).nullable(),
    createdAt: createdAtProperty(),
    updatedAt: updatedAtProperty(),
  },
});

export class Payment extends PaymentSchema.class {}
PaymentSchema.setClass(Payment);
export { PaymentSchema };
