import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import type { DashboardClient } from '../helpers/dashboard.ts';
import { seedLedger, startDashboardShop } from '../helpers/dashboard-shop.ts';

// The Reports page against a real `serve` on each database: the download is `chaingate report`'s
// own file for the same range (all points, or one with --merchant), the roles that may export get
// it, a viewer is refused by the page and the endpoint, and bad dates are coded 400s.

async function download(c: DashboardClient, fields: Record<string, string>, json = false) {
  const res = await fetch(`${c.base}/dashboard/api/reports`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: c.base, Cookie: c.cookieHeader(), ...(json ? { Accept: 'application/json' } : {}) },
    body: new URLSearchParams({ _csrf: c.csrf, ...fields }).toString(),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

for (const dialect of DIALECTS) {
  describe(`the dashboard's reports on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test("the download is chaingate report's file; roles that export get it, a viewer is refused; bad dates are coded 400s", async (t) => {
      const shop = await startDashboardShop(t, dialect);
      const a = await shop.point('Shop A');
      const b = await shop.point('Shop B');
      await seedLedger(shop.env.CHAINGATE_DATABASE_URL!, a.id, b.id);
      const day = new Date().toISOString().slice(0, 10);
      const accountant = await shop.user('books@shop.example', 'accountant');
      const manager = await shop.user('manager@shop.example', 'manager', [a.id]);
      const viewer = await shop.user('viewer@shop.example', 'viewer');

      // Every point, CSV: byte for byte the CLI's file, as an attachment.
      const page = await accountant.get('/dashboard/reports');
      assert.equal(page.status, 200);
      assert.ok(page.text.includes('href="/dashboard/reports"'), 'in the navigation');
      assert.ok(page.text.includes('<option value="" selected>Every point (sweeps included)</option>'));
      const all = await download(accountant, { from: day, to: day, point: '', format: 'csv' });
      assert.equal(all.status, 200, all.text);
      assert.equal(all.headers.get('content-type'), 'text/csv; charset=utf-8');
      assert.equal(all.headers.get('content-disposition'), `attachment; filename="chaingate-report-${day}-${day}.csv"`);
      const cli = await runCli(['report', '--from', day, '--to', day], shop.env);
      assert.equal(cli.code, 0, cli.stderr);
      assert.equal(all.text, cli.stdout);
      const kinds = all.text.split('\r\n').slice(1, -1).map((l) => l.split(',')[0]);
      assert.deepEqual(kinds.filter((k) => k !== 'total').sort(), ['late_funds', 'payment', 'payment', 'sweep']);

      // One point, JSON: the CLI's --merchant file; that point's rows only, no sweep.
      const one = await download(accountant, { from: day, to: day, point: a.id, format: 'json' });
      assert.equal(one.status, 200, one.text);
      assert.equal(one.headers.get('content-disposition'), `attachment; filename="chaingate-report-${day}-${day}-${a.id}.json"`);
      const cliOne = await runCli(['report', '--from', day, '--to', day, '--merchant', a.id, '--format', 'json'], shop.env);
      assert.equal(one.text, cliOne.stdout);
      const rows = (JSON.parse(one.text) as { rows: { kind: string; merchant_id: string | null }[] }).rows;
      assert.deepEqual(rows.map((r) => [r.kind, r.merchant_id]).sort(), [['late_funds', a.id], ['payment', a.id]]);

      // A manager of one point exports that point, not every point, not another.
      const mine = await download(manager, { from: day, to: day, point: a.id, format: 'csv' });
      assert.equal(mine.status, 200);
      assert.equal(mine.text, (await runCli(['report', '--from', day, '--to', day, '--merchant', a.id], shop.env)).stdout);
      const managerPage = await manager.get('/dashboard/reports');
      assert.ok(!managerPage.text.includes('Every point'));
      assert.equal((await download(manager, { from: day, to: day, point: '', format: 'csv' }, true)).status, 403);
      assert.equal((await download(manager, { from: day, to: day, point: b.id, format: 'csv' }, true)).status, 404, 'a point not granted does not exist');

      // A viewer: no link, the page and the endpoint refuse (coded 403).
      const viewed = await viewer.get('/dashboard/points');
      assert.ok(!viewed.text.includes('href="/dashboard/reports"'));
      assert.equal((await viewer.get('/dashboard/reports')).status, 403);
      const refused = await download(viewer, { from: day, to: day, point: a.id, format: 'csv' }, true);
      assert.equal(refused.status, 403);
      assert.equal(JSON.parse(refused.text).error.code, 'FORBIDDEN');
      assert.ok(!refused.text.includes('PAY-REPORT'));

      // Bad input: coded 400s (the form comes back with the reason), never a 500.
      for (const [fields, said] of [
        [{ from: '2026-02-31', to: day }, /^from 2026-02-31: not a date/i],
        [{ from: day, to: '2020-01-01' }, /^to must be after from/i],
        [{ from: 'yesterday', to: day }, /^from yesterday: not a date/i],
        [{ from: '', to: day }, /^from is required/i],
        [{ from: day, to: day, format: 'xml' }, /^format xml: csv or json/i],
      ] as const) {
        const res = await download(accountant, { point: '', format: 'csv', ...fields }, true);
        assert.equal(res.status, 400, JSON.stringify(fields));
        const body = JSON.parse(res.text) as { error: { code: string; message: string } };
        assert.equal(body.error.code, 'VALIDATION_ERROR');
        assert.match(body.error.message, said);
      }
      const formError = await download(accountant, { from: '2026-02-31', to: day, point: a.id, format: 'csv' });
      assert.equal(formError.status, 400);
      assert.match(formError.text, /role="alert">From 2026-02-31: not a date/);
      assert.ok(formError.text.includes(`<option value="${a.id}" selected>`), 'the choices kept');
      assert.equal((await download(accountant, { from: day, to: day, point: 'nosuchpoint', format: 'csv' }, true)).status, 404);

      // Each export is in the audit log.
      const audit = JSON.parse((await runCli(['audit', 'list', '--json'], shop.env)).stdout) as { action: string; pointId: string | null; actor: string }[];
      assert.deepEqual(audit.filter((r) => r.action === 'report.export').map((r) => [r.actor, r.pointId]).reverse(), [
        ['books@shop.example', null],
        ['books@shop.example', a.id],
        ['manager@shop.example', a.id],
      ]);
    });
  });
}
