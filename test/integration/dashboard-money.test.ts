import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { parseEther, Wallet } from 'ethers';
import { formatUnits } from '../../src/domain/money.ts';
import { poolReader } from '../../src/store/raw-sql.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { signedInUser, type DashboardClient } from '../helpers/dashboard.ts';
import { startMoneyWorld } from '../helpers/dashboard-refunds.ts';
import { waitFor } from '../helpers/indexer-process.ts';

// Refunds and sweeps from the dashboard (issue 40, item 5) against a real serve on each database, a
// Hardhat chain read by the real indexer, and the real `chaingate sweep sign` binary: plan in the
// dashboard, download, sign offline, upload, broadcast; serve follows it to CONFIRMED / REFUNDED /
// FINAL. The CLI's checks hold (over-ask, pool destination, tampered file), two uploads at once
// move money once, and a viewer is refused at every endpoint with a coded 403.

const planIdOf = (location: string | null) => /\/dashboard\/plans\/([0-9a-f]{64})\?planned=1$/.exec(location ?? '')?.[1] ?? assert.fail(`a plan page: ${location}`);

async function stateOf(c: DashboardClient, planId: string): Promise<string> {
  const res = await fetch(`${c.base}/dashboard/plans/${planId}`, { headers: { Cookie: c.cookieHeader(), Accept: 'application/json' } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { state: string }).state;
}

async function download(c: DashboardClient, planId: string, path: string): Promise<void> {
  const res = await fetch(`${c.base}/dashboard/api/plans/${planId}/file`, { headers: { Cookie: c.cookieHeader() } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="(refund|sweep)-plan-[0-9a-f]{16}\.json"$/);
  writeFileSync(path, await res.text());
}

/** The signed file as a browser's form sends it: multipart, with the page's CSRF token. */
async function uploadForm(c: DashboardClient, planId: string, text: string): Promise<{ status: number; text: string; location: string | null }> {
  const form = new FormData();
  form.append('_csrf', c.csrf);
  form.append('signed', new Blob([text], { type: 'application/json' }), 'signed.json');
  const res = await fetch(`${c.base}/dashboard/api/plans/${planId}/signed`, { method: 'POST', redirect: 'manual', headers: { Origin: c.base, Cookie: c.cookieHeader() }, body: form });
  return { status: res.status, text: await res.text(), location: res.headers.get('location') };
}

/** The signed file itself as a JSON body (a script's upload). */
async function uploadJson(c: DashboardClient, planId: string, text: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${c.base}/dashboard/api/plans/${planId}/signed`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json', Origin: c.base, 'X-CSRF-Token': c.csrf, Cookie: c.cookieHeader() }, body: text });
  return { status: res.status, json: await res.json() };
}

/** The status answered to an upload larger than the limit (the server may answer before reading it all). */
function oversized(c: DashboardClient, planId: string, bytes: number): Promise<number> {
  const url = new URL(`${c.base}/dashboard/api/plans/${planId}/signed`);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'Content-Type': 'multipart/form-data; boundary=x', 'Content-Length': bytes, Origin: c.base, Cookie: c.cookieHeader(), Accept: 'application/json' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
    req.end(Buffer.alloc(bytes, 'x'));
  });
}

for (const dialect of DIALECTS) {
  describe(`refunds and sweeps from the dashboard on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('plan → download → sign offline → upload → broadcast → CONFIRMED, REFUNDED and FINAL; refusals; a viewer can do none of it', async (t) => {
      const m = await startMoneyWorld(t, dialect);
      const { w, dir } = m;
      const { d, node } = w;
      const { client: manager } = await signedInUser(d.common, d.url, { email: 'manager@shop.example', role: 'manager' });
      const { client: viewer } = await signedInUser(d.common, d.url, { email: 'viewer@shop.example', role: 'viewer' });
      const over = parseEther('0.1');
      const first = await m.paidEth('money-1', over);
      const second = await m.paidEth('money-2', 0n);
      const buyer = Wallet.createRandom().address;

      // The refund page: the over-payment offered by default; the viewer sees the states and no form.
      const page = await manager.get(`/dashboard/payments/${first.id}/refund`);
      assert.equal(page.status, 200);
      assert.ok(page.text.includes(`empty: the over-payment, ${formatUnits(over, 18)} ETH`), 'the default is the over-payment');
      assert.ok(page.text.includes('Plan refund'));
      const seen = await viewer.get(`/dashboard/payments/${first.id}/refund`);
      assert.equal(seen.status, 200);
      assert.ok(!seen.text.includes('Plan refund') && !seen.text.includes('<form class="card"'), 'no form for a viewer');

      // The CLI's checks, on the page: an over-ask, the pool as destination, a bad address.
      const overAsk = await manager.post(`/dashboard/api/payments/${first.id}/refund`, { to: buyer, amount: '1000' });
      assert.equal(overAsk.status, 400);
      assert.match(overAsk.text, /is more than was received: the payment received/);
      const toPool = await manager.post(`/dashboard/api/payments/${first.id}/refund`, { to: second.address, amount: '' });
      assert.equal(toPool.status, 400);
      assert.match(toPool.text, /is an address of the ethereum deposit pool/);
      const badAddress = await manager.postJson(`/dashboard/api/payments/${first.id}/refund`, { to: 'not-an-address' }, { Accept: 'application/json' });
      assert.equal(badAddress.status, 400);
      assert.equal(badAddress.json.error.code, 'VALIDATION_ERROR');

      // A plan, then cancelled: its reservation is given back.
      const small = await manager.post(`/dashboard/api/payments/${first.id}/refund`, { to: buyer, amount: '0.01' });
      assert.equal(small.status, 303, small.text);
      const cancelledId = planIdOf(small.headers.get('location'));
      await manager.get(`/dashboard/plans/${cancelledId}`);
      const vCancel = await viewer.postJson(`/dashboard/api/plans/${cancelledId}/cancel`, {}, { Accept: 'application/json' });
      assert.equal(vCancel.status, 403);
      assert.equal(vCancel.json.error.code, 'FORBIDDEN');
      assert.equal((await manager.post(`/dashboard/api/plans/${cancelledId}/cancel`, {})).status, 303);
      assert.equal(await stateOf(manager, cancelledId), 'CANCELLED');

      // The over-payment: planned by default amount, downloaded, signed offline by the real binary.
      const planned = await manager.post(`/dashboard/api/payments/${first.id}/refund`, { to: buyer, amount: '' });
      assert.equal(planned.status, 303, planned.text);
      const planId = planIdOf(planned.headers.get('location'));
      const planPage = await manager.get(`/dashboard/plans/${planId}`);
      const shortId = planId.slice(0, 16);
      const view = (await (await fetch(`${d.url}/dashboard/plans/${planId}`, { headers: { Cookie: manager.cookieHeader(), Accept: 'application/json' } })).json()) as { signCommand: string; to: string };
      assert.equal(view.to.toLowerCase(), buyer.toLowerCase());
      assert.equal(view.signCommand, `chaingate sweep sign --plan refund-plan-${shortId}.json --out refund-signed-${shortId}.json --seed-file <path> --expect-to ${view.to}`);
      assert.ok(planPage.text.includes(view.signCommand.replace('<path>', '&#60;path&#62;')), 'the exact command on the page');
      const planFile = join(dir, `refund-plan-${shortId}.json`);
      const signedFile = join(dir, `refund-signed-${shortId}.json`);
      await download(manager, planId, planFile);
      assert.equal(JSON.parse(readFileSync(planFile, 'utf8')).refund.amount, over.toString());
      await m.sign(planFile, signedFile, buyer);
      const signedText = readFileSync(signedFile, 'utf8');

      // The viewer, at every money endpoint: 403 with a code, nothing done.
      for (const [path, body] of [
        [`/dashboard/api/payments/${first.id}/refund`, { to: buyer }],
        ['/dashboard/api/sweeps', { chain: 'ethereum', to: buyer }],
        [`/dashboard/api/plans/${planId}/cancel`, {}],
      ] as const) {
        await viewer.get('/dashboard/sweeps');
        const r = await viewer.postJson(path, body, { Accept: 'application/json' });
        assert.equal(r.status, 403, path);
        assert.equal(r.json.error.code, 'FORBIDDEN', path);
      }
      const vUpload = await uploadJson(viewer, planId, signedText);
      assert.equal(vUpload.status, 403);
      assert.equal(vUpload.json.error.code, 'FORBIDDEN');
      const vFile = await fetch(`${d.url}/dashboard/api/plans/${planId}/file`, { headers: { Cookie: viewer.cookieHeader(), Accept: 'application/json' } });
      assert.equal(vFile.status, 403);

      // Garbage and a tampered file: a coded 400, and the one-line reason on the page.
      const garbage = await uploadJson(manager, planId, '{"format":"nonsense"}');
      assert.equal(garbage.status, 400);
      assert.equal(garbage.json.error.code, 'VALIDATION_ERROR');
      const notJson = await uploadForm(manager, planId, 'certainly not json');
      assert.equal(notJson.status, 400);
      assert.match(notJson.text, /the uploaded file is not JSON/);
      const signed = JSON.parse(signedText) as { transactions: { raw: string }[] };
      const raw = signed.transactions[0]!.raw;
      const tampered = { ...signed, transactions: [{ ...signed.transactions[0]!, raw: `${raw.slice(0, -6)}${raw.slice(-6, -5) === '0' ? '1' : '0'}${raw.slice(-5)}` }] };
      const refusedPage = await uploadForm(manager, planId, JSON.stringify(tampered));
      assert.equal(refusedPage.status, 400);
      assert.match(refusedPage.text, /role="alert">Refused, nothing sent: [^<]+<\/p>/);
      const unreadable = await uploadJson(manager, planId, JSON.stringify({ ...signed, transactions: [{ ...signed.transactions[0]!, raw: '0x02deadbeef' }] }));
      assert.equal(unreadable.status, 400);
      assert.match(unreadable.json.error.message, /raw transaction cannot be read|raw is not an EVM transaction/);
      assert.equal(await stateOf(manager, planId), 'PLANNED', 'nothing recorded');
      assert.equal(await oversized(manager, planId, 1200 * 1024), 413);

      // Two uploads of the same signed file at once: recorded once, the money moves once.
      const before = await node.provider.getBalance(buyer);
      const both = await Promise.all([uploadJson(manager, planId, signedText), uploadJson(manager, planId, signedText)]);
      for (const r of both) assert.equal(r.status, 200, JSON.stringify(r.json));
      const txRows = await poolReader(d.common.db).all<{ txid: string }>('select txid from sweep_tx where plan_id = ?', [planId]);
      assert.equal(txRows.length, 1);
      await waitFor('the refund CONFIRMED by serve', async () => (await stateOf(manager, planId)) === 'CONFIRMED', 30_000);
      assert.equal((await node.provider.getBalance(buyer)) - before, over, 'paid once');
      assert.equal((await m.payment(first.id)).status, 'COMPLETED', 'a partial refund leaves the payment as it was');
      assert.ok((await manager.get(`/dashboard/payments/${first.id}/refund`)).text.includes('state-confirmed'));

      // A full refund of the second payment through the browser-style form: REFUNDED.
      const full = await manager.post(`/dashboard/api/payments/${second.id}/refund`, { to: buyer, amount: formatUnits(second.paid, 18) });
      assert.equal(full.status, 303, full.text);
      const fullId = planIdOf(full.headers.get('location'));
      await manager.get(`/dashboard/plans/${fullId}`);
      await download(manager, fullId, join(dir, 'full.json'));
      await m.sign(join(dir, 'full.json'), join(dir, 'full.signed.json'), buyer);
      const sent = await uploadForm(manager, fullId, readFileSync(join(dir, 'full.signed.json'), 'utf8'));
      assert.equal(sent.status, 303, sent.text);
      assert.equal(sent.location, `/dashboard/plans/${fullId}?sent=1`);
      await waitFor('payment REFUNDED', async () => (await m.payment(second.id)).status === 'REFUNDED', 30_000);
      await waitFor('the full refund CONFIRMED', async () => (await stateOf(manager, fullId)) === 'CONFIRMED', 30_000);

      // A refund from a swept deposit is refused: sweep first. The sweep: planned, signed, uploaded, FINAL.
      const cold = Wallet.createRandom().address;
      await manager.get('/dashboard/sweeps');
      const intoPool = await manager.post('/dashboard/api/sweeps', { chain: 'ethereum', to: first.address });
      assert.equal(intoPool.status, 400);
      assert.match(intoPool.text, /deposit pool/);
      const sweep = await manager.post('/dashboard/api/sweeps', { chain: 'ethereum', to: cold });
      assert.equal(sweep.status, 303, sweep.text);
      const sweepId = planIdOf(sweep.headers.get('location'));
      await manager.get(`/dashboard/plans/${sweepId}`);
      await download(manager, sweepId, join(dir, 'sweep.json'));
      await m.sign(join(dir, 'sweep.json'), join(dir, 'sweep.signed.json'), cold);
      const swept = await uploadForm(manager, sweepId, readFileSync(join(dir, 'sweep.signed.json'), 'utf8'));
      assert.equal(swept.status, 303, swept.text);
      await waitFor('the sweep FINAL', async () => (await stateOf(manager, sweepId)) === 'FINAL', 30_000);
      assert.ok((await node.provider.getBalance(cold)) > 0n);
      const afterSweep = await manager.post(`/dashboard/api/payments/${first.id}/refund`, { to: buyer, amount: '0.001' });
      assert.equal(afterSweep.status, 400);
      assert.match(afterSweep.text, /was swept on/);

      // The list, as both see it; and every step in the audit log.
      const list = await viewer.get('/dashboard/sweeps');
      for (const id of [cancelledId, planId, fullId, sweepId]) assert.ok(list.text.includes(`/dashboard/plans/${id}`), id);
      assert.ok(!list.text.includes('Plan sweep'), 'no sweep form for a viewer');
      const actions = (await poolReader(d.common.db).all<{ action: string; actor: string }>('select action, actor from audit_entry where action like ? or action like ?', ['refund.%', 'sweep.%'])).map((r) => `${r.actor} ${r.action}`);
      for (const a of ['refund.plan', 'refund.cancel', 'refund.download', 'refund.broadcast', 'sweep.plan', 'sweep.download', 'sweep.broadcast']) assert.ok(actions.includes(`manager@shop.example ${a}`), `${a} in ${actions.join(', ')}`);
      assert.ok(!actions.some((a) => a.startsWith('viewer@')), 'the viewer did nothing');
    });
  });
}
