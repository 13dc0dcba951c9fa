import { defineEntity, p } from '@mikro-orm/core';
import { createdAtProperty, idProperty } from './base.ts';

export const WALLET_STATUSES = ['FREE', 'LEASED'] as const;
export type WalletStatus = (typeof WALLET_STATUSES)[number];

/** One watch-only deposit address of a pool. Leased once, to one payment, forever. */
const WalletAddressSchema = defineEntity({
  name: 'WalletAddress',
  uniques: [{ properties: ['chain', 'isTestnet', 'address'] }],
  // The lease's whole order (derivation index, then created_at and id for list-file addresses), so
  // PostgreSQL reads the first free row off the index instead of sorting the pool (docs/wallets.md).
  indexes: [{ properties: ['chain', 'isTestnet', 'status', 'derivationIndex', 'createdAt', 'id'] }],
  properties: {
    id: idProperty(),
    chain: p.string().length(32),
    isTestnet: p.boolean().default(false),
    address: p.string().length(128),
    status: p.string().length(16).$type<WalletStatus>().default('FREE'),
    /** Child index `0/i` under the account key; null for addresses from a list file. */
    derivationIndex: p.integer().nullable(),
    /** Fingerprint of the account key the address came from, or "file". */
    source: p.string().length(64),
    paymentId: p.string().length(32).nullable().unique(),
    leasedAt: p.datetime(3).nullable(),
    createdAt: createdAtProperty(),
  },
});

export class WalletAddress extends WalletAddressSchema.class {}
WalletAddressSchema.setClass(WalletAddress);
export { WalletAddressSchema };
