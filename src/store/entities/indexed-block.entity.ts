import { defineEntity, p } from '@mikro-orm/core';
import { idProperty } from './base.ts';

/** The unfinalized window: recent block hashes, checked on every poll to detect reorgs. */
const IndexedBlockSchema = defineEntity({
  name: 'IndexedBlock',
  uniques: [{ properties: ['chain', 'network', 'number'] }],
  properties: {
    id: idProperty(),
    chain: p.string().length(32),
    network: p.string().length(32),
    number: p.bigint('string'),
    hash: p.string().length(128),
    parentHash: p.string().length(128),
    /** Block time, unix seconds: completedAt of a payment that waited for finality is the time its depth was reached. */
    timestamp: p.bigint('string').nullable(),
  },
});

export class IndexedBlock extends IndexedBlockSchema.class {}
IndexedBlockSchema.setClass(IndexedBlock);
export { IndexedBlockSchema };
