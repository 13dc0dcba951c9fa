import { defineEntity, p } from '@mikro-orm/core';
import { amountColumn, createdAtProperty, idProperty, updatedAtProperty } from './base.ts';

import type { SweepTxStatus } from '../../domain/sweep-lifecycle.ts';

/** One transaction of a sweep plan, recorded before it is sent and followed to finality (src/domain/sweep-lifecycle.ts). */
const SweepTxSchema = defineEntity({
  name: 'SweepTx',
  uniques: [{ properties: ['planId', 'txKey'] }],
  indexes: [{ properties: ['txid'] }, { properties: ['chain', 'isTestnet', 'status'] }],
  properties: {
    id: idProperty(),
    planId: p.string().length(64),
    /** The plan's id for it: tx-0, tx-1, … */
    txKey: p.string().length(16),
    chain: p.string().length(32),
    network: p.string().length(32),
    isTestnet: p.boolean().default(false),
    txid: p.string().length(128),
    /** The signed transaction in the family's raw form, so a resumed broadcast sends the same bytes. */
    raw: p.text(),
    /** Deposit addresses this transaction empties, JSON array. */
    deposits: p.text(),
    /** What moves to the destination per symbol, JSON object of atomic decimal strings. */
    moves: p.text(),
    /** Fee in the native coin's atomic units (planned; the chain's figure once final, where it tells). */
    fee: amountColumn(),
    status: p.string().length(16).$type<SweepTxStatus>().default('SIGNED'),
    /** The node's message for the last refusal or failure. */
    error: p.string().length(500).nullable(),
    attempts: p.integer().default(0),
    sentAt: p.datetime(3).nullable(),
    finalAt: p.datetime(3).nullable(),
    createdAt: createdAtProperty(),
    updatedAt: updatedAtProperty(),
  },
});

export class SweepTx extends SweepTxSchema.class {}
SweepTxSchema.setClass(SweepTx);
export { SweepTxSchema };
