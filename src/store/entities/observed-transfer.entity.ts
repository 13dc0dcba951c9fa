import { defineEntity, p } from '@mikro-orm/core';
import { amountColumn, createdAtProperty, idProperty, updatedAtProperty } from './base.ts';

import type { TransferStatus } from '../../domain/lifecycle.ts';

/** Every transfer an indexer saw to a watched address, credited or not. Unique per chain + tx + output/log index. */
const ObservedTransferSchema = defineEntity({
  name: 'ObservedTransfer',
  uniques: [{ properties: ['chain', 'network', 'txHash', 'logIndex'] }],
  indexes: [
    { properties: ['paymentId'] },
    { properties: ['chain', 'network', 'blockNumber'] },
    { properties: ['status'] },
    // The dashboard's list: search by any transfer's hash (any case), the live poll.
    { properties: ['updatedAt'] },
    { name: 'observed_transfer_tx_hash_lower_index', expression: 'create index observed_transfer_tx_hash_lower_index on observed_transfer (lower(tx_hash))' },
  ],
  properties: {
    id: idProperty(),
    chain: p.string().length(32),
    network: p.string().length(32),
    txHash: p.string().length(128),
    /** Log index for token transfers, output index for UTXO chains, -1 for a native transfer, -2 - n for trace n. */
    logIndex: p.integer(),
    blockNumber: p.string().length(32),
    blockHash: p.string().length(128),
    fromAddress: p.string().length(128).nullable(),
    toAddress: p.string().length(128),
    /** Token contract; null for the native coin. */
    tokenAddress: p.string().length(128).nullable(),
    symbol: p.string().length(16).nullable(),
    /** Atomic units, integer decimal string. */
    amount: amountColumn(),
    paymentId: p.string().length(32).nullable(),
    status: p.string().length(16).$type<TransferStatus>(),
    note: p.string().length(255).nullable(),
    createdAt: createdAtProperty(),
    updatedAt: updatedAtProperty(),
  },
});

export class ObservedTransfer extends ObservedTransferSchema.class {}
ObservedTransferSchema.setClass(ObservedTransfer);
export { ObservedTransferSchema };
