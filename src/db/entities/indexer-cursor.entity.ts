import { defineEntity, p } from '@mikro-orm/core';
import { idProperty, updatedAtProperty } from './base.ts';

/** Last processed block per chain and network, written in the same transaction as what that range held. */
const IndexerCursorSchema = defineEntity({
  name: 'IndexerCursor',
  uniques: [{ properties: ['chain', 'network'] }],
  properties: {
    id: idProperty(),
    chain: p.string().length(32),
    network: p.string().length(32),
    blockNumber: p.string().length(32),
    blockHash: p.string().length(128),
    /** Lease so two indexers of one chain and network never run at once. */
    leaseOwner: p.string().length(64).nullable(),
    leaseUntil: p.datetime(3).nullable(),
    updatedAt: updatedAtProperty(),
  },
});

export class IndexerCursor extends IndexerCursorSchema.class {}
IndexerCursorSchema.setClass(IndexerCursor);
export { IndexerCursorSchema };
