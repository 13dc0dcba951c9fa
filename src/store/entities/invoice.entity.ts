import { defineEntity, p } from '@mikro-orm/core';
import { amountColumn, createdAtProperty, idProperty, updatedAtProperty } from './base.ts';
import { MerchantPoint } from './merchant-point.entity.ts';

import type { InvoiceStatus } from '../../domain/lifecycle.ts';

const InvoiceSchema = defineEntity({
  name: 'Invoice',
  indexes: [
    { properties: ['merchant', 'orderId'] },
    { properties: ['status', 'expiresAt'] },
    // The dashboard's list (src/store/invoice-search.ts): keyset pages per point and over every
    // point, search by order id and email, the live poll by updated_at.
    { properties: ['merchant', 'createdAt', 'id'] },
    { properties: ['createdAt', 'id'] },
    { properties: ['orderId'] },
    { properties: ['updatedAt'] },
    { name: 'invoice_customer_email_lower_index', expression: 'create index invoice_customer_email_lower_index on invoice (lower(customer_email))' },
  ],
  properties: {
    id: idProperty(),
    referenceId: p.string().length(32).unique(),
    merchant: () => p.manyToOne(MerchantPoint),
    orderId: p.string().length(255),
    description: p.string().length(500).default(''),
    /** Minor units of `currency`, an integer as a string. */
    amount: amountColumn(),
    currency: p.string().length(10),
    status: p.string().length(24).$type<InvoiceStatus>().default('DRAFT'),
    customerEmail: p.string().length(320).nullable(),
    customerName: p.string().length(255).nullable(),
    // `json`, not `jsonb`, on PostgreSQL: merchant data is echoed with its keys in the order sent.
    customerMetadata: p.json<Record<string, unknown>>().columnType('json'),
    metadata: p.json<Record<string, unknown>>().columnType('json'),
    returnUrl: p.string().length(2048).nullable(),
    cancelUrl: p.string().length(2048).nullable(),
    expiresAt: p.datetime(3),
    viewedAt: p.datetime(3).nullable(),
    paidAt: p.datetime(3).nullable(),
    cancelledAt: p.datetime(3).nullable(),
    createdAt: createdAtProperty(),
    updatedAt: updatedAtProperty(),
  },
});

export class Invoice extends InvoiceSchema.class {}
InvoiceSchema.setClass(Invoice);
export { InvoiceSchema };
