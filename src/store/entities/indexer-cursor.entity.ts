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
    /** Block time (unix seconds) of the newest processed block: completion and expiry are judged at this height. */
    blockTime: p.bigint('string').nullable(),
    /** What the node last said: its head and its finalized height (null where the chain has no finality signal). */
    headNumber: p.string().length(32).nullable(),
    finalizedNumber: p.string().length(32).nullable(),
    headSeenAt: p.datetime(3).nullable(),
    /** The last tick failure, for status and metrics; cleared by the next good tick. */
    lastError: p.string().length(255).nullable(),
    lastErrorAt: p.datetime(3).nullable(),
    /** When the newest failure was recorded: a process still failing records one at least every minute or so. */
    lastErrorSeenAt: p.datetime(3).nullable(),
    updatedAt: updatedAtProperty(),
  },
});

export class IndexerCursor extends IndexerCursorSchema.class {}
IndexerCursorSchema.setClass(IndexerCursor);
export { IndexerCursorSchema };
