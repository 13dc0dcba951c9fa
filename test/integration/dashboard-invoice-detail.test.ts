import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AttentionItem, Overview } from '../../src/app/dashboard-overview.ts';
import type { InvoiceDetail, TimelineEntry } from '../../src/app/invoice-timeline.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { dashboardClient, signedInUser, type DashboardClient } from '../helpers/dashboard.ts';
import { startMoneyShop, until } from '../helpers/dashboard-money.ts';

// The overview and the invoice detail against a real `serve` process on each database: an
// underpaid, an overpaid, a late-funds, a reorged and a stuck payment, and a point whose webhook
// endpoint fails, each where it belongs with its exact amounts; scoping by point; garbage ids.

async function json<T>(c: DashboardClient, path: string): Promise<{ status: number; body: { success: boolean; data: T; error?: { code: string } } }> {
  const res = await c.get(path, { Accept: 'application/json' });
  return { status: res.status, body: JSON.parse(res.text) };
}

const detail = async (c: DashboardClient, id: string) => (await json<InvoiceDetail>(c, `/dashboard/api/invoices/${id}`)).body.data;
const types = (d: InvoiceDetail) => d.timeline.map((e) => e.type);
const fact = (e: TimelineEntry | AttentionItem | undefined, label: string) => e?.facts.find((f) => f.label === label)?.value;
const item = (o: Overview, kind: AttentionItem['kind'], paymentId?: string) => o.attention.find((a) => a.kind === kind && (paymentId === undefined || a.paymentId === paymentId));

for (const dialect of DIALECTS) {
  describe(`dashboard overview and invoice detail on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('under-, over-paid, late funds, a reorg and a stuck payment appear in the overview and their timelines with exact amounts', async (t) => {
      const shop = await startMoneyShop(t, dialect);
      const { client: owner } = await signedInUser(shop.common, shop.url, { email: 'owner@shop.example', role: 'owner' });
      const { client: viewer } = await signedInUser(shop.common, shop.url, { email: 'viewer@shop.example', role: 'viewer', pointIds: [shop.pointA.id] });
      const { cases } = shop;

      // Point B's three events (CONFIRMING, COMPLETED, PAID) each got a 500: its endpoint is failing.
      await shop.failing.waitFor(3);
      const overview = await until('the failing endpoint in the overview', async () => {
        const o = (await json<Overview>(owner, '/dashboard/api/overview')).body.data;
        return item(o, 'webhook_failing') ? o : undefined;
      });

      // Received today and this month: 24.5 + 26.25 + 25 + 25 USDT, completed; the late 3 USDT and the reorged 25 are not.
      for (const period of [overview.today, overview.month]) {
        assert.deepEqual(period.coins, [{ blockchain: 'ethereum', network: 'MAINNET', cryptoCurrency: 'USDT', amount: '100.75', payments: 4 }]);
        assert.deepEqual(period.fiat, [{ currency: 'USD', amount: '100.75' }]);
        assert.equal(period.unpriced, 0);
      }
      // Open: the reorged one (PENDING again), the stuck one, and the one without a checkout.
      assert.equal(overview.openInvoices, 3);

      const under = item(overview, 'underpaid', cases.under.paymentId)!;
      assert.equal(under.summary, 'Underpaid by 0.5 USDT');
      assert.equal(fact(under, 'difference'), '-0.5 USDT (-0.50 USD at the priced rate)');
      assert.deepEqual(under.action, { href: `/dashboard/invoices/${cases.under.invoiceId}`, label: 'Open the invoice' });
      const over = item(overview, 'overpaid', cases.over.paymentId)!;
      assert.equal(over.summary, 'Overpaid by 1.25 USDT');
      assert.equal(fact(over, 'expected'), '25 USDT');
      assert.equal(fact(over, 'received'), '26.25 USDT');
      assert.equal(fact(over, 'difference'), '1.25 USDT (1.25 USD at the priced rate)');
      assert.deepEqual(over.action, { href: `/dashboard/payments/${cases.over.paymentId}/refund`, label: 'Refund the over-payment' });
      const late = item(overview, 'late_funds', cases.late.paymentId)!;
      assert.equal(late.summary, 'Late funds: 3 USDT not credited (after_completion)');
      assert.equal(fact(late, 'transaction'), shop.txHashes.lateExtra);
      assert.equal(late.action.href, `/dashboard/payments/${cases.late.paymentId}/refund`);
      const stuck = item(overview, 'stuck', cases.stuck.paymentId)!;
      assert.match(stuck.summary, /^CONFIRMING for 12\d min \(normally about 24 s\)$/);
      assert.equal(fact(stuck, 'confirmations'), '1 of 2');
      const failing = item(overview, 'webhook_failing')!;
      assert.equal(failing.pointId, shop.pointB.id);
      assert.equal(fact(failing, 'last answer'), 'HTTP 500');
      assert.equal(failing.action.href, `/dashboard/points/${shop.pointB.id}/webhooks`);
      // The late payment paid exactly, the reorged one has nothing credited: neither is under- or over-paid.
      assert.equal(overview.attention.filter((a) => a.kind === 'underpaid' || a.kind === 'overpaid').length, 2);
      assert.ok(!overview.attention.some((a) => a.paymentId === cases.reorg.paymentId));
      // Deployment-wide: the test's indexer never read the head, and 6 of 10 addresses are leased (low-water mark 20).
      assert.equal(item(overview, 'indexer_behind')?.summary, 'Indexer ethereum MAINNET has not read the chain for over 2 minutes');
      assert.equal(item(overview, 'pool_low')?.summary, 'Wallet pool ethereum MAINNET is running low: 4 free addresses');

      // The same page as HTML, for the same user.
      const page = await owner.get('/dashboard/overview');
      assert.equal(page.status, 200);
      assert.match(page.text, /<strong>100\.75 USD<\/strong>/);
      assert.match(page.text, /id="open-invoices">3</);
      assert.ok(page.text.includes(`href="/dashboard/payments/${cases.over.paymentId}/refund"`));

      // A viewer of point A: A's items, no refund links, nothing of point B.
      const seen = (await json<Overview>(viewer, '/dashboard/api/overview')).body.data;
      assert.deepEqual(seen.today.coins.map((c) => c.amount), ['75.75']);
      assert.equal(seen.openInvoices, 3);
      assert.equal(item(seen, 'webhook_failing'), undefined);
      assert.deepEqual(item(seen, 'overpaid', cases.over.paymentId)!.action, { href: `/dashboard/invoices/${cases.over.invoiceId}`, label: 'Open the invoice' });
      assert.ok(!seen.attention.some((a) => a.pointId === shop.pointB.id));

      // The underpaid invoice: its amounts and one timeline in time order.
      await shop.ok.waitFor(3);
      const u = await until('the underpaid invoice\'s webhooks in its timeline', async () => {
        const d = await detail(owner, cases.under.invoiceId);
        return d.timeline.filter((e) => e.type === 'webhook.attempt').length === 3 ? d : undefined;
      });
      assert.equal(u.invoice.status, 'PAID');
      assert.equal(u.invoice.amountText, '25.00');
      assert.equal(u.invoice.customerName, 'Ada Buyer');
      assert.deepEqual(u.invoice.metadata, { cart: 'c-1' });
      const [pu] = u.payments;
      assert.deepEqual([pu!.expected, pu!.received, pu!.difference, pu!.outcome], ['25', '24.5', '-0.5', 'underpaid']);
      assert.deepEqual(pu!.fiat, { currency: 'USD', rate: '1', source: 'peg', expected: '25.00', received: '24.50', difference: '-0.50' });
      assert.equal(pu!.transactionUrl, `https://etherscan.io/tx/${shop.txHashes.under}`);
      assert.deepEqual(types(u), [
        'invoice.created',
        'invoice.viewed',
        'payment.checkout',
        'transfer.seen',
        'payment.confirming',
        'payment.completed',
        'invoice.paid',
        'webhook.attempt',
        'webhook.attempt',
        'webhook.attempt',
      ]);
      const ordered = u.timeline.map((e) => e.at);
      assert.deepEqual(ordered, [...ordered].sort(), 'in time order');
      const checkoutEntry = u.timeline.find((e) => e.type === 'payment.checkout')!;
      assert.equal(fact(checkoutEntry, 'rate used'), '1 USDT = 1 USD (peg)');
      assert.equal(fact(checkoutEntry, 'expected'), '25 USDT');
      const seenEntry = u.timeline.find((e) => e.type === 'transfer.seen')!;
      assert.equal(fact(seenEntry, 'amount'), '24.5 USDT');
      assert.deepEqual(seenEntry.link, { href: `https://etherscan.io/tx/${shop.txHashes.under}`, label: 'View the transaction' });
      assert.equal(fact(u.timeline.find((e) => e.type === 'payment.completed'), 'confirmations'), '2 of 2');
      assert.equal(fact(u.timeline.find((e) => e.type === 'payment.completed'), 'difference'), '-0.5 USDT');
      const attempts = u.timeline.filter((e) => e.type === 'webhook.attempt');
      assert.deepEqual(attempts.map((e) => e.summary.replace(/in \d+ ms/, 'in N ms')).sort(), ['payment.completed', 'payment.confirming', 'invoice.paid'].map((ty) => `Webhook ${ty}: HTTP 200 in N ms`).sort());
      assert.ok(attempts.every((e) => fact(e, 'url') === shop.ok.url));

      // Overpaid: +1.25 USDT, 1.25 USD, and the refund link for an owner.
      const o = await detail(owner, cases.over.invoiceId);
      assert.deepEqual([o.payments[0]!.difference, o.payments[0]!.fiat?.difference, o.payments[0]!.outcome, o.payments[0]!.refundUrl], ['1.25', '1.25', 'overpaid', `/dashboard/payments/${cases.over.paymentId}/refund`]);
      assert.equal((await detail(viewer, cases.over.invoiceId)).payments[0]!.refundUrl, null, 'a viewer moves no money');

      // Late funds: the extra transfer and its event after COMPLETED; the payment itself exact.
      const l = await detail(owner, cases.late.invoiceId);
      assert.deepEqual([l.payments[0]!.received, l.payments[0]!.difference, l.payments[0]!.outcome], ['25', '0', 'exact']);
      const lt = types(l);
      assert.ok(lt.indexOf('payment.completed') < lt.indexOf('payment.late_funds'));
      const extra = l.timeline.find((e) => e.type === 'transfer.seen' && fact(e, 'transaction') === shop.txHashes.lateExtra)!;
      assert.equal(extra.summary, 'Extra funds after completion: transfer seen, not credited');
      assert.equal(fact(extra, 'amount'), '3 USDT');
      assert.equal(fact(l.timeline.find((e) => e.type === 'payment.late_funds'), 'amount'), '3 USDT');
      assert.ok(lt.indexOf('payment.completed') < l.timeline.indexOf(extra));

      // The reorg: credited, first confirmation, then un-credited; the payment PENDING again with nothing received.
      const r = await detail(owner, cases.reorg.invoiceId);
      assert.deepEqual([r.payments[0]!.status, r.payments[0]!.received, r.payments[0]!.outcome], ['PENDING', '0', 'nothing']);
      assert.deepEqual(types(r).filter((x) => !x.startsWith('webhook')), ['invoice.created', 'payment.checkout', 'transfer.seen', 'payment.confirming', 'transfer.reorged']);
      const reorged = r.timeline.find((e) => e.type === 'transfer.reorged')!;
      assert.equal(fact(reorged, 'amount'), '25 USDT');
      assert.match(fact(reorged, 'why') ?? '', /^block 104 left the canonical chain$/);
      assert.equal(reorged.tone, 'error');

      // Point B's invoice: the failed attempts with their status; 404 for the viewer of A only.
      const b = await until('point B\'s attempts', async () => {
        const d = await detail(owner, cases.paidB.invoiceId);
        return d.timeline.filter((e) => e.type === 'webhook.attempt').length >= 3 ? d : undefined;
      });
      assert.ok(b.timeline.filter((e) => e.type === 'webhook.attempt').every((e) => /^Webhook [a-z._]+: HTTP 500 in \d+ ms$/.test(e.summary) && e.tone === 'error'));
      const hidden = await json(viewer, `/dashboard/api/invoices/${cases.paidB.invoiceId}`);
      assert.equal(hidden.status, 404);
      assert.equal(hidden.body.error?.code, 'INVOICE_NOT_FOUND');
      assert.equal((await viewer.get(`/dashboard/invoices/${cases.paidB.invoiceId}`)).status, 404);
      assert.equal((await viewer.get(`/dashboard/invoices/${cases.under.invoiceId}`)).status, 200);

      // The page: the amounts, the explorer link, the timeline.
      const html = (await owner.get(`/dashboard/invoices/${cases.under.invoiceId}`)).text;
      assert.ok(html.includes(`href="https://etherscan.io/tx/${shop.txHashes.under}"`));
      assert.match(html, /<td class="num">-0\.5 USDT<\/td><td class="num">-0\.50 USD<\/td>/);
      assert.equal((html.match(/<li class="event/g) ?? []).length, u.timeline.length);
    });

    test('garbage and foreign ids get coded 4xx answers, never a 500', async (t) => {
      const shop = await startMoneyShop(t, dialect);
      const { client: owner } = await signedInUser(shop.common, shop.url, { email: 'owner@shop.example', role: 'owner' });
      for (const id of ['%3Cscript%3E', "x'%20or%20'1'='1", 'a'.repeat(33), 'ABCDEF', '..%2F..%2Fetc', 'abcdefghijklmnopqrstuvwx', shop.cases.under.paymentId]) {
        for (const path of [`/dashboard/api/invoices/${id}`, `/dashboard/invoices/${id}`]) {
          const res = await owner.get(path, { Accept: 'application/json' });
          assert.equal(res.status, 404, `${path}: ${res.text}`);
          assert.equal(JSON.parse(res.text).error.code, 'INVOICE_NOT_FOUND', path);
          assert.equal((await owner.get(path)).status, 404);
        }
      }
      // Not signed in: sign-in first (JSON: 401 SIGN_IN_REQUIRED).
      const anon = dashboardClient(shop.url);
      for (const path of ['/dashboard/api/overview', `/dashboard/api/invoices/${shop.cases.under.invoiceId}`]) {
        const res = await anon.get(path, { Accept: 'application/json' });
        assert.equal(res.status, 401);
        assert.equal(JSON.parse(res.text).error.code, 'SIGN_IN_REQUIRED');
      }
      assert.equal((await anon.get('/dashboard/overview')).headers.get('location'), '/dashboard/sign-in');
      // Signed in: the root sends to the overview.
      assert.equal((await owner.get('/dashboard/')).headers.get('location'), '/dashboard/overview');
    });
  });
}
