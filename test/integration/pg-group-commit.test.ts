import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createMerchant } from '../../src/db/merchants.ts';
import { isUniqueViolation, KeyTakenError, StaleMerchantError, type ClaimInput } from '../../src/db/idempotency.ts';
import { invoiceInsertAfterClaim, type CreateInvoiceInput } from '../../src/db/invoices.ts';
import { claimAndInsertPgGrouped } from '../../src/db/pg-group-commit.ts';
import { dateOf, rawQuery } from '../../src/db/raw-sql.ts';
import { createSecretBox } from '../../src/domain/secret-box.ts';
import { openMigratedTestDatabase, skipUnless } from '../helpers/databases.ts';

// Group commit on PostgreSQL (src/db/pg-group-commit.ts): the signed creations of one turn share
// one statement, and each still gets exactly what it would have got alone. Rows written by one
// statement share its transaction id (xmin), which is how the grouping itself is seen here.

const box = createSecretBox('k'.repeat(64));

const input = (i: number, extra: Partial<CreateInvoiceInput> = {}): CreateInvoiceInput => ({
  orderId: `o-${i}`,
  amount: `${1000 + i}`,
  currency: 'USD',
  description: '',
  customerEmail: null,
  customerName: null,
  customerMetadata: {},
  metadata: { n: i },
  returnUrl: null,
  cancelUrl: null,
  expiresInMinutes: 30,
  ...extra,
});

describe('group commit on postgresql', { skip: await skipUnless('postgresql') }, () => {
  test('one statement for the writes of a turn: each written, replayed or refused as alone, values exact; a failing row falls back to each alone', async (t) => {
    const db = await openMigratedTestDatabase(t, 'postgresql');
    const { merchant } = await createMerchant(db.em(), box, { name: 'Group commit' });
    const now = new Date('2026-11-24T09:30:00.123Z');
    const claim = (key: string, version = merchant.version): ClaimInput => ({ merchantId: merchant.id, merchantVersion: version, key, fingerprint: `f-${key}`, ttlMs: 86_400_000 });
    let ref = 0;
    const write = (key: string, i: number, extra: Partial<CreateInvoiceInput> = {}, version = merchant.version, referenceId = `INV-20261124-${String(++ref).padStart(6, '0')}`) => {
      const { invoice, insert } = invoiceInsertAfterClaim(merchant.id, input(i, extra), now, referenceId);
      return { invoice, done: claimAndInsertPgGrouped(db, claim(key, version), 201, `{"answer":"${key}"}`, insert, now) };
    };
    const rows = async <R>(sql: string, params: string[] = []) => (await rawQuery<R>(db.em(), 'postgresql', sql, params)).rows;

    // Wave 1, all in one turn: 30 fresh keys (one with every awkward character), the same key five
    // times, one write against a merchant version that moved on.
    const odd = { description: 'quote " backslash \\ tab \t newline \n emoji 🧾 ünïcödé', customerEmail: 'a@b.example', customerName: "O'Brien", customerMetadata: { nested: { list: [1, 'two', null] } }, returnUrl: 'https://shop.example/r?a=1&b="2"' };
    const fresh = Array.from({ length: 30 }, (_, i) => write(`k-${i}`, i, i === 7 ? odd : {}));
    const same = Array.from({ length: 5 }, (_, i) => write('k-same', 100 + i));
    const stale = write('k-stale', 200, {}, merchant.version + 1);
    const results = await Promise.allSettled([...fresh, ...same, stale].map((w) => w.done));

    assert.deepEqual(results.slice(0, 30).map((r) => r.status), Array(30).fill('fulfilled'));
    const sameOutcomes = results.slice(30, 35);
    assert.equal(sameOutcomes.filter((r) => r.status === 'fulfilled').length, 1, 'one of the five writes of the same key is written');
    for (const r of sameOutcomes.filter((r) => r.status === 'rejected')) assert.ok((r as PromiseRejectedResult).reason instanceof KeyTakenError && isUniqueViolation((r as PromiseRejectedResult).reason));
    assert.ok((results[35] as PromiseRejectedResult).reason instanceof StaleMerchantError);

    const keys = await rows<{ key: string; state: string; response_body: string }>('select key, state, response_body from idempotency_record order by key');
    assert.equal(keys.length, 31);
    assert.ok(keys.every((k) => k.state === 'COMPLETED' && k.response_body === `{"answer":"${k.key}"}`));
    assert.equal(keys.some((k) => k.key === 'k-stale'), false);
    const invoices = await rows<{ n: string; statements: string }>('select count(*) as n, count(distinct xmin::text) as statements from invoice');
    assert.deepEqual(invoices, [{ n: '31', statements: '1' }], 'the 31 invoices were written by one statement');
    const writtenSame = same.findIndex((_, i) => sameOutcomes[i]!.status === 'fulfilled');
    assert.equal((await rows<{ id: string }>("select id from invoice where order_id like 'o-10_'")).map((r) => r.id).join(), same[writtenSame]!.invoice.id);

    // The awkward row, exactly as written alone would store it.
    const [stored] = await rows<Record<string, unknown>>('select * from invoice where id = ?', [fresh[7]!.invoice.id]);
    assert.deepEqual(
      { ...stored, expires_at: dateOf(stored!.expires_at).toISOString(), created_at: dateOf(stored!.created_at).toISOString(), updated_at: dateOf(stored!.updated_at).toISOString() },
      {
        id: fresh[7]!.invoice.id, reference_id: 'INV-20261124-000008', merchant_id: merchant.id, order_id: 'o-7', description: odd.description, amount: '1007', currency: 'USD', status: 'OPEN',
        customer_email: 'a@b.example', customer_name: "O'Brien", customer_metadata: odd.customerMetadata, metadata: { n: 7 }, return_url: odd.returnUrl, cancel_url: null,
        expires_at: '2026-11-24T10:00:00.123Z', viewed_at: null, paid_at: null, cancelled_at: null, created_at: '2026-11-24T09:30:00.123Z', updated_at: '2026-11-24T09:30:00.123Z',
      },
    );

    // Wave 2: one row's insert fails (its reference number is taken): the batch writes nothing, each
    // write runs alone, and only that one fails, its key left absent.
    const wave2 = [write('k-a', 300), write('k-clash', 301, {}, merchant.version, 'INV-20261124-000001'), write('k-b', 302)];
    const outcomes = await Promise.allSettled(wave2.map((w) => w.done));
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.ok(isUniqueViolation((outcomes[1] as PromiseRejectedResult).reason));
    assert.deepEqual((await rows<{ key: string }>("select key from idempotency_record where key in ('k-a', 'k-b', 'k-clash') order by key")).map((r) => r.key), ['k-a', 'k-b']);
  });
});
