import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMerchant } from '../../src/db/merchants.ts';
import { claimAndInsertPg, isUniqueViolation, StaleMerchantError, type ClaimInput } from '../../src/db/idempotency.ts';
import { invoiceInsertAfterClaim, type CreateInvoiceInput } from '../../src/db/invoices.ts';
import { rawQuery } from '../../src/db/raw-sql.ts';
import { createSecretBox } from '../../src/domain/secret-box.ts';
import { openMigratedTestDatabase, skipUnless } from '../helpers/databases.ts';

// The signed creation on PostgreSQL as one statement (src/db/idempotency.ts, claimAndInsertPg):
// the key inserted COMPLETED with its answer and the invoice inserted from that claim, atomic on
// its own. What the gateway's tests see end to end, here at the statement: all or nothing.

const box = createSecretBox('k'.repeat(64));

const input: CreateInvoiceInput = {
  orderId: 'o-1',
  amount: '2500',
  currency: 'USD',
  description: '',
  customerEmail: null,
  customerName: null,
  customerMetadata: { tier: 'gold' },
  metadata: { n: 1 },
  returnUrl: null,
  cancelUrl: null,
  expiresInMinutes: 30,
};

describe('one-statement signed write on postgresql', { skip: await skipUnless('postgresql') }, () => {
  test('the key is stored completed with its answer and the invoice from it; the same key again writes nothing; a changed merchant point writes nothing', async (t) => {
    const db = await openMigratedTestDatabase(t, 'postgresql');
    const { merchant } = await createMerchant(db.em(), box, { name: 'One statement' });
    const claim: ClaimInput = { merchantId: merchant.id, merchantVersion: merchant.version, key: 'k-1', fingerprint: 'f-1', ttlMs: 86_400_000 };
    const now = new Date();
    const first = invoiceInsertAfterClaim(merchant.id, input, now, 'INV-20261124-000001');
    await claimAndInsertPg(db, claim, 201, '{"answer":1}', first.insert, now);

    const count = async (sql: string, params: (string | number)[] = []) => Number((await rawQuery<{ n: string }>(db.em(), 'postgresql', sql, params)).rows[0]!.n);
    const key = (await rawQuery<{ state: string; status_code: number; response_body: string }>(db.em(), 'postgresql', 'select state, status_code, response_body from idempotency_record where key = ?', ['k-1'])).rows;
    assert.deepEqual(key, [{ state: 'COMPLETED', status_code: 201, response_body: '{"answer":1}' }]);
    const inv = (await rawQuery<{ id: string; reference_id: string; status: string; metadata: unknown; customer_metadata: unknown }>(db.em(), 'postgresql', 'select id, reference_id, status, metadata, customer_metadata from invoice')).rows;
    assert.deepEqual(inv, [{ id: first.invoice.id, reference_id: 'INV-20261124-000001', status: 'OPEN', metadata: { n: 1 }, customer_metadata: { tier: 'gold' } }]);

    // The same key: a unique violation, and the second invoice is not written.
    const second = invoiceInsertAfterClaim(merchant.id, input, now, 'INV-20261124-000002');
    await assert.rejects(claimAndInsertPg(db, claim, 201, '{"answer":2}', second.insert, now), (err) => isUniqueViolation(err));
    assert.equal(await count('select count(*) as n from invoice'), 1);

    // The merchant point moved on since it was cached: nothing is written, and the caller is told.
    const third = invoiceInsertAfterClaim(merchant.id, input, now, 'INV-20261124-000003');
    await assert.rejects(claimAndInsertPg(db, { ...claim, key: 'k-3', merchantVersion: merchant.version + 1 }, 201, '{}', third.insert, now), StaleMerchantError);
    assert.equal(await count('select count(*) as n from invoice'), 1);
    assert.equal(await count('select count(*) as n from idempotency_record'), 1);

    // An insert that fails after the claim (here a reference number already taken) takes the claim with it.
    const clash = invoiceInsertAfterClaim(merchant.id, input, now, 'INV-20261124-000001');
    await assert.rejects(claimAndInsertPg(db, { ...claim, key: 'k-4' }, 201, '{}', clash.insert, now), (err) => isUniqueViolation(err));
    assert.equal(await count('select count(*) as n from idempotency_record where key = ?', ['k-4']), 0);
  });
});
