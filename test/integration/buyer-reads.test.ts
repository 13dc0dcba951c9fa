import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Database } from '../../src/store/orm.ts';
import { createMerchant } from '../../src/store/merchants.ts';
import { nextReference } from '../../src/store/reference-ids.ts';
import { ormExecutor } from '../../src/store/transaction.ts';
import { readPublicInvoice } from '../../src/store/invoices.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { GatewayError } from '../../src/domain/errors.ts';
import { createSecretBox } from '../../src/domain/secret-box.ts';
import { DIALECTS, openMigratedTestDatabase, skipUnless } from '../helpers/databases.ts';

// The buyer's reads (docs/performance.md): one statement when nothing is due; whatever is due goes
// through the expiry rules in their transaction first, and the answer is the same either way.

const box = createSecretBox('k'.repeat(64));

async function openInvoice(db: Database, expiresAt: Date): Promise<string> {
  const em = db.em();
  const { merchant } = await createMerchant(db, box, { name: 'Reads' });
  const invoice = em.create(Invoice, {
    referenceId: await nextReference(ormExecutor(em, db.dialect), 'INV'),
    merchant: em.getReference(MerchantPoint, merchant.id),
    orderId: `o-${expiresAt.getTime()}`,
    amount: '2500',
    currency: 'USD',
    status: 'OPEN',
    customerEmail: null,
    customerName: null,
    customerMetadata: {},
    metadata: {},
    returnUrl: null,
    cancelUrl: null,
    expiresAt,
    viewedAt: null,
    paidAt: null,
    cancelledAt: null,
  });
  await em.flush();
  return invoice.id;
}

for (const dialect of DIALECTS) {
  describe(`buyer reads on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('a live invoice is read as it is stored', async (t) => {
      const db = await openMigratedTestDatabase(t, dialect);
      const id = await openInvoice(db, new Date(Date.now() + 3_600_000));
      const invoice = await readPublicInvoice(db, id);
      assert.equal(invoice.id, id);
      assert.equal(invoice.status, 'OPEN');
      assert.equal(invoice.amount, '2500');
      assert.equal(invoice.merchant.name, 'Reads');
    });

    test('an unknown invoice is INVOICE_NOT_FOUND, as a rejection (never a synchronous throw)', async (t) => {
      const db = await openMigratedTestDatabase(t, dialect);
      const notFound = (err: unknown) => err instanceof GatewayError && err.code === 'INVOICE_NOT_FOUND';
      const read = readPublicInvoice(db, 'nosuchinvoice');
      assert.ok(read instanceof Promise);
      await assert.rejects(read, notFound);
    });

    test('an invoice past its window is due: the expiry rules run and the read shows EXPIRED', async (t) => {
      const db = await openMigratedTestDatabase(t, dialect);
      const id = await openInvoice(db, new Date(Date.now() - 1000));
      assert.equal((await readPublicInvoice(db, id)).status, 'EXPIRED');
      // Stored as EXPIRED, so the next read has nothing due.
      assert.equal((await db.em().findOneOrFail(Invoice, id)).status, 'EXPIRED');
      assert.equal((await readPublicInvoice(db, id)).status, 'EXPIRED');
    });
  });
}
