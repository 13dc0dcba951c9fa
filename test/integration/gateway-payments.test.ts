import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

async function makePayments(d: TestDaemon, n: number): Promise<string[]> {
  await d.seedPool('ethereum', evmAddresses(n));
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `o${i}`, amount: '100', currency: 'USD' });
    const co = await d.signed('POST', `/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC' });
    assert.equal(co.status, 201, co.text);
    ids.push(co.json.data.payment.id);
    // distinct createdAt values make the order observable
    await d.common.db.em().nativeUpdate(Payment, { id: co.json.data.payment.id }, { createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)) });
  }
  return ids;
}

for (const dialect of DIALECTS) {
  describe(`gateway payments on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('list is newest first with the spec pagination arithmetic', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const ids = await makePayments(d, 5);
      const all = await d.signed('GET', '/api/v1/payments');
      assert.equal(all.status, 200);
      assert.deepEqual(all.json.data.items.map((p: { id: string }) => p.id), [...ids].reverse());
      assert.deepEqual(all.json.data.pagination, { total: 5, page: 1, limit: 20, hasMore: false });
      const item = all.json.data.items[0];
      for (const key of ['id', 'referenceId', 'status', 'blockchain', 'network', 'isTestnet', 'cryptoCurrency', 'amount', 'expectedAmount', 'receivedAmount', 'address', 'confirmations', 'requiredConfirmations', 'transactionHash', 'expiresAt', 'createdAt', 'completedAt', 'invoice']) {
        assert.ok(key in item, key);
      }
      assert.deepEqual(Object.keys(item.invoice), ['id', 'referenceId', 'orderId', 'status']);

      const page2 = await d.signed('GET', '/api/v1/payments?skip=2&take=2');
      assert.deepEqual(page2.json.data.items.map((p: { id: string }) => p.id), [ids[2], ids[1]]);
      assert.deepEqual(page2.json.data.pagination, { total: 5, page: 2, limit: 2, hasMore: true });
      const last = await d.signed('GET', '/api/v1/payments?skip=4&take=2');
      assert.deepEqual(last.json.data.pagination, { total: 5, page: 3, limit: 2, hasMore: false });
      const odd = await d.signed('GET', '/api/v1/payments?skip=3&take=2');
      assert.deepEqual(odd.json.data.pagination, { total: 5, page: 2, limit: 2, hasMore: false }, 'floor(3/2)+1 = 2; 3+2 < 5 is false');
      const clamped = await d.signed('GET', '/api/v1/payments?take=1000');
      assert.equal(clamped.json.data.pagination.limit, 100);
    });

    test('filters are exact and case-sensitive; unknown values are a 400', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const ids = await makePayments(d, 2);
      await d.common.db.em().nativeUpdate(Payment, { id: ids[0]! }, { status: 'COMPLETED' });
      const done = await d.signed('GET', '/api/v1/payments?status=COMPLETED');
      assert.deepEqual(done.json.data.items.map((p: { id: string }) => p.id), [ids[0]]);
      const eth = await d.signed('GET', '/api/v1/payments?blockchain=ethereum&status=PENDING');
      assert.deepEqual(eth.json.data.items.map((p: { id: string }) => p.id), [ids[1]]);
      // the list applies lazy expiry too
      await d.common.db.em().nativeUpdate(Payment, { id: ids[1]! }, { expiresAt: new Date(Date.now() - 1000) });
      const expired = await d.signed('GET', '/api/v1/payments?status=EXPIRED');
      assert.deepEqual(expired.json.data.items.map((p: { id: string }) => p.id), [ids[1]]);
      const tron = await d.signed('GET', '/api/v1/payments?blockchain=tron');
      assert.equal(tron.json.data.pagination.total, 0);
      for (const q of ['status=pending', 'status=DONE', 'blockchain=ETHEREUM', 'blockchain=dogecoin', 'skip=-1', 'take=0', 'take=abc', 'skip=1.5', 'status=PENDING&status=FAILED', 'colour=red']) {
        const res = await d.signed('GET', `/api/v1/payments?${q}`);
        assert.deepEqual([res.status, res.json.error.code], [400, 'VALIDATION_ERROR'], q);
        assert.ok(res.json.error.details.length >= 1);
      }
    });

    test('the list expires every overdue payment in one write; a read with nothing due writes nothing', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const ids = await makePayments(d, 4);
      await d.common.db.em().nativeUpdate(Payment, { id: { $in: ids.slice(0, 3) } }, { expiresAt: new Date(Date.now() - 1000) });
      const db = d.common.db;
      const write = db.write.bind(db);
      let writes = 0;
      db.write = ((work) => {
        writes++;
        return write(work);
      }) as typeof db.write;
      t.after(() => {
        db.write = write;
      });
      const list = await d.signed('GET', '/api/v1/payments');
      assert.deepEqual(list.json.data.items.map((p: { status: string }) => p.status), ['PENDING', 'EXPIRED', 'EXPIRED', 'EXPIRED']);
      assert.equal(writes, 1, 'three invoices expired in one transaction');
      writes = 0;
      for (const path of ['/api/v1/payments', `/api/v1/payments/${ids[0]}`, `/api/v1/payments/${ids[3]}/status`]) assert.equal((await d.signed('GET', path)).status, 200);
      assert.equal(writes, 0, 'nothing due, nothing written');
    });

    test('get and status are scoped: another point and unknown ids are PAYMENT_NOT_FOUND', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const [id] = await makePayments(d, 1);
      const other = await d.createMerchant({ name: 'Other' });
      for (const path of [`/api/v1/payments/${id}`, `/api/v1/payments/${id}/status`, `/api/v1/payments/${id}/refunds`, '/api/v1/payments/nosuchpayment000000000000', '/api/v1/payments/nosuchpayment000000000000/refunds']) {
        const res = await d.signed('GET', path, undefined, path.includes(id!) ? { merchant: other } : {});
        assert.deepEqual([res.status, res.json.error.code], [404, 'PAYMENT_NOT_FOUND'], path);
      }
      const list = await d.signed('GET', '/api/v1/payments', undefined, { merchant: other });
      assert.equal(list.json.data.pagination.total, 0);
      const mine = await d.signed('GET', `/api/v1/payments/${id}`);
      assert.equal(mine.json.data.id, id);
      // The specification: the single read is "the same shape as a list item" (issue 42, item 5);
      // refunds have their own route.
      const [item] = (await d.signed('GET', '/api/v1/payments')).json.data.items;
      assert.deepEqual(mine.json.data, item);
      assert.ok(!('refunds' in mine.json.data));
      const refunds = await d.signed('GET', `/api/v1/payments/${id}/refunds`);
      assert.deepEqual([refunds.status, refunds.json.data], [200, { items: [] }]);
    });
  });
}
