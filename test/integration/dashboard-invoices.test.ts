import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyPaymentFact } from '../../src/store/lifecycle.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { signedInUser, type DashboardClient } from '../helpers/dashboard.ts';
import { seedInvoices, type SeedInvoice } from '../helpers/invoice-rows.ts';

// The dashboard's invoice list (docs/dashboard.md#invoices-and-payments) against a real serve on
// both databases: each filter and search key, keyset pages across inserts, the CSV and its
// escaping, roles per point, the live poll, and garbage parameters.

interface ListJson {
  items: { id: string; orderId: string; pointId: string; status: string; unusual: string[]; payment: { status: string } | null; createdAt: string }[];
  next: string | null;
  previous: string | null;
}

const T0 = Date.parse('2026-10-01T12:00:00.000Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000);

async function list(c: DashboardClient, qs: string): Promise<ListJson> {
  const r = await c.get(`/dashboard/api/invoices${qs}`, { Accept: 'application/json' });
  assert.equal(r.status, 200, r.text);
  return JSON.parse(r.text) as ListJson;
}

async function orders(c: DashboardClient, qs: string): Promise<string[]> {
  return (await list(c, qs)).items.map((i) => i.orderId);
}

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  return rows;
}

/** Two points; point A's invoices cover every status, chain, coin and unusual kind; point B's are B's. */
async function world(d: TestDaemon) {
  const a = d.merchant.id;
  const b = (await d.createMerchant({ name: 'Shop B' })).id;
  const A: SeedInvoice[] = [
    { merchantId: a, orderId: 'a-open', email: 'Buyer.One@Example.com', status: 'OPEN', createdAt: at(0), expiresAt: new Date(Date.now() + 86_400_000) },
    { merchantId: a, orderId: 'a-paid-eth', status: 'PAID', createdAt: at(1), payments: [{ status: 'COMPLETED', chain: 'ethereum', coin: 'ETH', expected: '1.5', received: '1.5', address: '0xAbCdEf0000000000000000000000000000000001', txHash: '0xAAA111' }] },
    { merchantId: a, orderId: 'a-under', status: 'PAID', createdAt: at(2), payments: [{ status: 'COMPLETED', chain: 'polygon', coin: 'USDT', decimals: 6, expected: '10', received: '9.999999' }] },
    { merchantId: a, orderId: 'a-over', status: 'PAID', createdAt: at(3), payments: [{ status: 'COMPLETED', chain: 'polygon', coin: 'USDC', decimals: 6, expected: '9.5', received: '10.25' }] },
    { merchantId: a, orderId: 'a-late', status: 'EXPIRED', createdAt: at(4), payments: [{ status: 'EXPIRED', chain: 'bitcoin', coin: 'BTC', decimals: 8, expected: '0.001', received: '0', transfer: { status: 'LATE', txHash: 'LateTxHashBTC' } }] },
    { merchantId: a, orderId: 'a-refunded', status: 'PAID', createdAt: at(5), payments: [{ status: 'REFUNDED', chain: 'tron', coin: 'USDT', decimals: 6, expected: '5', received: '5', refund: true }] },
    { merchantId: a, orderId: 'a-failed', status: 'PAYMENT_PENDING', createdAt: at(6), payments: [{ status: 'FAILED', chain: 'ethereum', coin: 'USDT', decimals: 6, expected: '3', received: '3' }, { status: 'PENDING', chain: 'ethereum', coin: 'ETH', expected: '0.1' }] },
    { merchantId: a, orderId: 'a-cancelled', status: 'CANCELLED', createdAt: at(7) },
    // 10 (longer) is more than 9.99 though shorter as text: the comparison is numeric.
    { merchantId: a, orderId: 'a-over-digits', status: 'PAID', createdAt: at(8), payments: [{ status: 'COMPLETED', chain: 'ethereum', coin: 'ETH', expected: '9.99', received: '10' }] },
  ];
  const B: SeedInvoice[] = [{ merchantId: b, orderId: 'b-secret', email: 'b@shop.example', status: 'PAID', createdAt: at(9), payments: [{ status: 'COMPLETED', chain: 'ethereum', coin: 'ETH', expected: '1', received: '0.5', address: '0xbbbb000000000000000000000000000000000002', txHash: '0xbbbtx' }] }];
  const seededA = await seedInvoices(d.common.db, A);
  const seededB = await seedInvoices(d.common.db, B);
  return { a, b, idsA: seededA.ids, paymentsA: seededA.paymentIds, idB: seededB.ids[0]! };
}

for (const dialect of DIALECTS) {
  describe(`dashboard invoice list on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('each filter, combined filters and each search key find exactly their rows', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const w = await world(d);
      const { client: owner } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      const aOnly = `&point=${w.a}`;
      assert.deepEqual(await orders(owner, `?point=${w.a}&sort=asc`), ['a-open', 'a-paid-eth', 'a-under', 'a-over', 'a-late', 'a-refunded', 'a-failed', 'a-cancelled', 'a-over-digits']);
      assert.equal((await orders(owner, '')).length, 10, 'an owner of every point sees both points');
      assert.deepEqual(await orders(owner, `?status=PAID${aOnly}&sort=asc`), ['a-paid-eth', 'a-under', 'a-over', 'a-refunded', 'a-over-digits']);
      assert.deepEqual(await orders(owner, `?status=OPEN,CANCELLED${aOnly}&sort=asc`), ['a-open', 'a-cancelled']);
      assert.deepEqual(await orders(owner, `?chain=polygon${aOnly}&sort=asc`), ['a-under', 'a-over']);
      assert.deepEqual(await orders(owner, `?coin=usdt${aOnly}&sort=asc`), ['a-under', 'a-refunded', 'a-failed']);
      assert.deepEqual(await orders(owner, `?chain=ethereum&coin=USDT${aOnly}`), ['a-failed'], 'chain and coin of the same payment');
      assert.deepEqual(await orders(owner, `?from=${at(2).toISOString()}&to=${at(5).toISOString()}${aOnly}&sort=asc`), ['a-under', 'a-over', 'a-late']);
      assert.deepEqual(await orders(owner, `?from=2026-10-01&to=2026-10-01${aOnly}`).then((o) => o.length), 9, 'a date to is the whole day');
      assert.deepEqual(await orders(owner, `?to=2026-09-30`), []);
      assert.deepEqual(await orders(owner, `?unusual=underpaid${aOnly}`), ['a-under']);
      assert.deepEqual(await orders(owner, `?unusual=overpaid${aOnly}&sort=asc`), ['a-over', 'a-over-digits']);
      assert.deepEqual(await orders(owner, `?unusual=late${aOnly}`), ['a-late']);
      assert.deepEqual(await orders(owner, `?unusual=refunded${aOnly}`), ['a-refunded']);
      assert.deepEqual(await orders(owner, `?unusual=failed${aOnly}`), ['a-failed']);
      assert.deepEqual(await orders(owner, `?unusual=any${aOnly}&sort=asc`), ['a-under', 'a-over', 'a-late', 'a-refunded', 'a-failed', 'a-over-digits']);
      assert.deepEqual(await orders(owner, '?unusual=underpaid'), ['b-secret', 'a-under']);
      assert.deepEqual(await orders(owner, `?status=PAID&chain=polygon&unusual=overpaid`), ['a-over'], 'combined');
      assert.deepEqual(await orders(owner, `?status=PAID&coin=ETH&unusual=any&sort=asc`), ['a-over-digits', 'b-secret']);
      // Each row carries its flags, computed exactly as the filter selects.
      const flags = new Map((await list(owner, '?limit=200')).items.map((i) => [i.orderId, i.unusual]));
      assert.deepEqual(flags.get('a-under'), ['underpaid']);
      assert.deepEqual(flags.get('a-over-digits'), ['overpaid']);
      assert.deepEqual(flags.get('a-paid-eth'), []);
      assert.deepEqual(flags.get('a-failed'), ['failed']);

      // Search: each key, exact, the emails, addresses and hashes in any case.
      const [open, paidEth, , , late] = w.idsA;
      const page = await list(owner, `?q=${paidEth}`);
      assert.deepEqual(page.items.map((i) => i.orderId), ['a-paid-eth'], 'invoice id');
      assert.deepEqual(await orders(owner, `?q=${w.paymentsA[1]![0]}`), ['a-paid-eth'], 'payment id');
      assert.deepEqual(await orders(owner, `?q=INV${open!.toUpperCase()}`), ['a-open'], 'invoice referenceId');
      assert.deepEqual(await orders(owner, `?q=PAY${w.paymentsA[4]![0]!.toUpperCase()}`), ['a-late'], 'payment referenceId');
      assert.deepEqual(await orders(owner, '?q=a-refunded'), ['a-refunded'], 'orderId');
      assert.deepEqual(await orders(owner, '?q=buyer.one%40example.com'), ['a-open'], 'email, any case');
      assert.deepEqual(await orders(owner, '?q=0xabcdef0000000000000000000000000000000001'), ['a-paid-eth'], 'deposit address, any case');
      assert.deepEqual(await orders(owner, '?q=0xaaa111'), ['a-paid-eth'], 'the payment transaction hash');
      assert.deepEqual(await orders(owner, '?q=latetxhashbtc'), ['a-late'], "a late transfer's hash");
      assert.deepEqual(await orders(owner, '?q=a-refund'), [], 'exact, not a prefix');
      assert.deepEqual(await orders(owner, `?q=a-refunded&status=OPEN`), [], 'search and a filter');
      void late;
    });

    test('underpaid and overpaid compare exactly, beyond what a double holds', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const a = d.merchant.id;
      const pay = (expected: string, received: string) => [{ status: 'COMPLETED' as const, decimals: 18, expected, received }];
      await seedInvoices(d.common.db, [
        { merchantId: a, orderId: 'tiny-under', status: 'PAID', createdAt: at(0), payments: pay('1.000000000000000001', '1') },
        { merchantId: a, orderId: 'tiny-over', status: 'PAID', createdAt: at(1), payments: pay('1', '1.000000000000000001') },
        { merchantId: a, orderId: 'same-value', status: 'PAID', createdAt: at(2), payments: pay('2.50', '2.5') },
        { merchantId: a, orderId: 'big-under', status: 'PAID', createdAt: at(3), payments: pay('123456789012345678901234567890.5', '123456789012345678901234567890.49') },
      ]);
      const { client } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      assert.deepEqual(await orders(client, '?unusual=underpaid&sort=asc'), ['tiny-under', 'big-under']);
      assert.deepEqual(await orders(client, '?unusual=overpaid'), ['tiny-over']);
      const flags = new Map((await list(client, '')).items.map((i) => [i.orderId, i.unusual]));
      assert.deepEqual(flags.get('same-value'), [], 'the same amount written two ways is not unusual');
    });

    test('keyset pages: inserts between pages skip and repeat nothing, both orders, back and forth', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const a = d.merchant.id;
      // Ties on created_at too: the id breaks them.
      const seeded = await seedInvoices(d.common.db, Array.from({ length: 23 }, (_, n) => ({ merchantId: a, orderId: `o-${String(n).padStart(2, '0')}`, createdAt: at(Math.floor(n / 3)) })));
      const { client } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      for (const sort of ['desc', 'asc'] as const) {
        const seen: string[] = [];
        let qs = `?limit=5&sort=${sort}`;
        let pages = 0;
        for (;;) {
          const p = await list(client, qs);
          seen.push(...p.items.map((i) => i.id));
          pages++;
          // Rows inserted between pages: newer ones (before the walk on desc, after it on asc).
          await seedInvoices(d.common.db, [{ merchantId: a, orderId: `new-${sort}-${pages}`, createdAt: new Date(Date.now() + pages * 1000) }]);
          if (!p.next) break;
          qs = `?limit=5&sort=${sort}&after=${p.next}`;
        }
        const original = seeded.ids;
        const fromWalk = seen.filter((id) => original.includes(id));
        assert.equal(new Set(seen).size, seen.length, `${sort}: no row twice`);
        assert.equal(fromWalk.length, original.length, `${sort}: no row skipped`);
        if (sort === 'desc') assert.equal(seen.length, original.length, 'desc: newer rows never enter a later page');
      }
      // Back: the page before the second is the first.
      const first = await list(client, '?limit=4');
      const second = await list(client, `?limit=4&after=${first.next}`);
      const back = await list(client, `?limit=4&before=${second.previous}`);
      assert.deepEqual(back.items.map((i) => i.id), first.items.map((i) => i.id));
      assert.equal(back.previous, null, 'nothing before the first page');
      // The page shows links to both.
      const html = await client.get(`/dashboard/invoices?limit=4&after=${first.next}`);
      assert.equal(html.status, 200);
      assert.match(html.text, /rel="prev" href="\/dashboard\/invoices\?limit=|rel="prev" href="\/dashboard\/invoices\?before=/);
      assert.match(html.text, /rel="next"/);
    });

    test('roles: a user never sees, finds, polls or exports a point not granted; exports need the role', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const w = await world(d);
      const { client: viewerA } = await signedInUser(d.common, d.url, { email: 'viewer@shop.example', role: 'viewer', pointIds: [w.a] });
      const { client: accountantB } = await signedInUser(d.common, d.url, { email: 'acc@shop.example', role: 'accountant', pointIds: [w.b] });
      const all = await list(viewerA, '?limit=200');
      assert.equal(all.items.length, 9);
      assert.ok(all.items.every((i) => i.pointId === w.a));
      assert.deepEqual(await orders(viewerA, '?q=b-secret'), []);
      assert.deepEqual(await orders(viewerA, `?q=${w.idB}`), []);
      assert.deepEqual(await orders(viewerA, '?q=0xbbbtx'), []);
      assert.deepEqual(await orders(viewerA, '?unusual=underpaid'), ['a-under']);
      const other = await viewerA.get(`/dashboard/api/invoices?point=${w.b}`, { Accept: 'application/json' });
      assert.equal(other.status, 404);
      assert.equal(JSON.parse(other.text).error.code, 'NOT_FOUND');
      const pageHtml = await viewerA.get('/dashboard/invoices');
      assert.equal(pageHtml.status, 200);
      assert.ok(!pageHtml.text.includes('b-secret'));
      assert.ok(!pageHtml.text.includes('Export CSV'), 'a viewer is offered no export');
      // The poll: B's row changes, A's viewer hears nothing of it.
      const since = String(Date.now() - 60_000);
      await d.common.db.write((x) => x.run('update invoice set updated_at = ? where id = ?', [new Date(), w.idB]));
      const polled = await viewerA.get(`/dashboard/api/invoices/changes?since=${since}`, { Accept: 'application/json' });
      assert.equal(polled.status, 200);
      assert.ok(!polled.text.includes(w.idB));
      // Exports: a viewer is refused; an accountant of B gets B's rows only; the export is audited.
      const refused = await viewerA.get('/dashboard/api/invoices.csv', { Accept: 'application/json' });
      assert.equal(refused.status, 403);
      assert.equal(JSON.parse(refused.text).error.code, 'FORBIDDEN');
      const csv = await accountantB.get('/dashboard/api/invoices.csv');
      assert.equal(csv.status, 200);
      assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
      assert.match(csv.headers.get('content-disposition') ?? '', /^attachment; filename="invoices-/);
      const rows = parseCsv(csv.text);
      assert.equal(rows.length, 2);
      assert.equal(rows[1]![5], 'b-secret');
      assert.equal((await accountantB.get(`/dashboard/api/invoices.csv?point=${w.a}`, { Accept: 'application/json' })).status, 404);
      const audit = await d.common.db.orm.em.fork().getConnection().execute('select actor, action from audit_entry where action = ?', ['invoices.export']);
      assert.deepEqual(audit.map((r: { actor: string }) => r.actor), ['acc@shop.example']);
    });

    test('the CSV holds the filtered list, every cell escaped, formulas defused', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const a = d.merchant.id;
      const nasty = ['=HYPERLINK("http://evil.example","x")', '+1+1', '-2+3', '@SUM(A1)', 'comma, "quote"\nline'];
      await seedInvoices(d.common.db, nasty.map((orderId, n) => ({ merchantId: a, orderId, email: n === 0 ? '=cmd@evil.example' : null, status: 'PAID', createdAt: at(n), payments: [{ status: 'COMPLETED', expected: '1', received: '1' }] })));
      await seedInvoices(d.common.db, [{ merchantId: a, orderId: 'not-paid', status: 'OPEN', createdAt: at(10) }]);
      const { client } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      const csv = await client.get('/dashboard/api/invoices.csv?status=PAID&sort=asc');
      assert.equal(csv.status, 200);
      const rows = parseCsv(csv.text);
      assert.equal(rows[0]![0], 'created_at');
      assert.equal(rows.length, 1 + nasty.length, 'the filter holds: no OPEN row');
      const order = rows[0]!.indexOf('order_id');
      assert.deepEqual(rows.slice(1).map((r) => r[order]), ["'=HYPERLINK(\"http://evil.example\",\"x\")", "'+1+1", "'-2+3", "'@SUM(A1)", 'comma, "quote"\nline']);
      assert.equal(rows[1]![rows[0]!.indexOf('customer_email')], "'=cmd@evil.example");
      assert.equal(rows[1]![rows[0]!.indexOf('amount')], '25.00');
      assert.ok(csv.text.endsWith('\r\n'));
      // A page cursor is no part of an export.
      const withCursor = await client.get('/dashboard/api/invoices.csv?after=abc', { Accept: 'application/json' });
      assert.equal(withCursor.status, 400);
    });

    test('the live poll reports a payment that completes, with whether it matches the filter', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const a = d.merchant.id;
      const seeded = await seedInvoices(d.common.db, [{ merchantId: a, orderId: 'live-1', status: 'PAYMENT_PENDING', createdAt: at(0), updatedAt: at(0), payments: [{ status: 'CONFIRMING', expected: '1', received: '1', updatedAt: at(0) }] }]);
      const { client } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      const first = await client.get('/dashboard/api/invoices/changes?status=PAYMENT_PENDING', { Accept: 'application/json' });
      assert.equal(first.status, 200);
      const { cursor } = JSON.parse(first.text) as { cursor: string };
      const quiet = JSON.parse((await client.get(`/dashboard/api/invoices/changes?since=${cursor}&status=PAYMENT_PENDING`, { Accept: 'application/json' })).text);
      assert.deepEqual(quiet.rows, []);
      await d.common.db.write((x) => applyPaymentFact(x, seeded.paymentIds[0]![0]!, 'settled', new Date()));
      const polled = JSON.parse((await client.get(`/dashboard/api/invoices/changes?since=${cursor}&status=PAYMENT_PENDING`, { Accept: 'application/json' })).text) as { rows: { id: string; matches: boolean; payment: { status: string }; html: string }[] };
      assert.equal(polled.rows.length, 1);
      assert.equal(polled.rows[0]!.id, seeded.ids[0]);
      assert.equal(polled.rows[0]!.payment.status, 'COMPLETED');
      assert.equal(polled.rows[0]!.matches, true);
      assert.match(polled.rows[0]!.html, /^<tr data-id="/);
      const paidOnly = JSON.parse((await client.get(`/dashboard/api/invoices/changes?since=${cursor}&status=OPEN`, { Accept: 'application/json' })).text) as { rows: { matches: boolean }[] };
      assert.equal(paidOnly.rows[0]!.matches, false, 'a row that does not match leaves the page');
    });

    test('garbage parameters get a coded 400, as JSON and as a page', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const { client } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      const bad = [
        '?status=SHIPPED',
        '?status=paid',
        '?limit=0',
        '?limit=201',
        '?limit=abc',
        '?limit=1e2',
        '?after=garbage!',
        `?after=${Buffer.from('notanumber.abc').toString('base64url')}`,
        '?after=a&before=b',
        '?from=2026-13-45',
        '?from=2026-02-30',
        '?from=yesterday',
        '?from=2026-10-02&to=2026-10-01',
        '?sort=sideways',
        '?unusual=weird',
        '?chain=Ether%20eum',
        '?coin=%3Cscript%3E',
        '?point=..%2F..',
        '?q=a&q=b',
        `?q=${'x'.repeat(400)}`,
        '?q=%00',
        '?nonsense=1',
      ];
      for (const qs of bad) {
        const r = await client.get(`/dashboard/api/invoices${qs}`, { Accept: 'application/json' });
        assert.equal(r.status, 400, `${qs}: ${r.text}`);
        assert.equal(JSON.parse(r.text).error.code, 'VALIDATION_ERROR', qs);
        const page = await client.get(`/dashboard/invoices${qs}`);
        assert.equal(page.status, 400, qs);
        assert.match(page.text, /<p class="error" role="alert">/);
      }
      for (const qs of ['?since=abc', '?since=1&since=2']) {
        const r = await client.get(`/dashboard/api/invoices/changes${qs}`, { Accept: 'application/json' });
        assert.equal(r.status, 400, qs);
        assert.equal(JSON.parse(r.text).error.code, 'VALIDATION_ERROR');
      }
      // Empty fields of the GET form mean "not given".
      assert.equal((await client.get('/dashboard/invoices?q=&status=&chain=&coin=&from=&to=&unusual=&sort=desc')).status, 200);
      // Without a session: the sign-in page, or 401 as JSON.
      const anon = await fetch(`${d.url}/dashboard/api/invoices`, { headers: { Accept: 'application/json' } });
      assert.equal(anon.status, 401);
      const anonCsv = await fetch(`${d.url}/dashboard/api/invoices.csv`, { redirect: 'manual' });
      assert.equal(anonCsv.status, 303);
    });
  });
}
