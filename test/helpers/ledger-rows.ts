import type { EntityManager } from '@mikro-orm/sql';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';

/** A PAID invoice row for tests that build a ledger by hand (its payments are the test's own); the caller flushes. */
export function paidInvoice(em: EntityManager, merchantId: string, referenceId: string): Invoice {
  return em.create(Invoice, {
    referenceId,
    merchant: em.getReference(MerchantPoint, merchantId),
    orderId: 'o-1',
    amount: '100',
    currency: 'USD',
    status: 'PAID',
    customerEmail: null,
    customerName: null,
    customerMetadata: {},
    metadata: {},
    returnUrl: null,
    cancelUrl: null,
    expiresAt: new Date(Date.now() + 3_600_000),
    viewedAt: null,
    paidAt: null,
    cancelledAt: null,
  });
}
