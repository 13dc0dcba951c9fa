import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { authenticate } from '../../src/app/authenticate.ts';
import { setDashboardUserActive, setDashboardUserRole } from '../../src/app/dashboard-users.ts';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { totpAt } from '../../src/domain/totp.ts';
import { failureDelayMs } from '../../src/app/dashboard-signin.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { dashboardClient, PASSWORD, signedInUser } from '../helpers/dashboard.ts';

const OPERATOR = { userId: null, actor: 'test', ip: null, userAgent: null };

for (const dialect of DIALECTS) {
  describe(`dashboard sessions on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('a session cookie is no API key, an API key is no session (spec rule 3)', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const { client } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      const token = client.sessionToken()!;
      assert.ok(token, 'a __Host- session cookie');
      assert.equal((await client.get('/dashboard/points')).status, 200);
      // Through the one authenticate use case: the cookie proves a session, never an API key.
      const asRequest = { method: 'GET', path: '/x', header: (n: string) => (n === 'cookie' ? client.cookieHeader() : undefined), body: new Uint8Array(), log: { error() {} } };
      const principal = await authenticate(d.daemon.deps, asRequest, ['session']);
      assert.equal(principal.kind, 'session');
      assert.deepEqual(principal.merchantPointIds, [d.merchant.id], 'an owner of every point: every point');
      await assert.rejects(authenticate(d.daemon.deps, asRequest, ['api-key']), (err: { code?: string }) => err.code === 'API_KEY_INVALID');

      // The cookie to the gateway: refused exactly as a request without an API key.
      const body = JSON.stringify({ orderId: 'o-1', amount: '2500', currency: 'USD' });
      const none = await fetch(`${d.url}/api/v1/invoices`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k1' }, body });
      const withCookie = await fetch(`${d.url}/api/v1/invoices`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k1', Cookie: client.cookieHeader(), Origin: d.url }, body });
      assert.equal(withCookie.status, 401);
      assert.equal(none.status, 401);
      assert.equal(((await withCookie.json()) as { error: { code: string } }).error.code, 'API_KEY_INVALID');
      assert.equal(((await none.json()) as { error: { code: string } }).error.code, 'API_KEY_INVALID');
      const read = await fetch(`${d.url}/api/v1/payments`, { headers: { Cookie: client.cookieHeader() } });
      assert.equal(read.status, 401);

      // The session token as the checkout confirm's bearer: refused.
      const confirm = await fetch(`${d.url}/checkout/api/v1/payments/abcdefghijklmnopqrstuvwx/confirm`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, Cookie: client.cookieHeader(), 'Content-Type': 'application/json' }, body: JSON.stringify({ txHash: `0x${'1'.repeat(64)}` }) });
      assert.equal(confirm.status, 401);

      // A valid signed request (and the key pair as Basic credentials) to the dashboard: sign in first.
      const signed = signRequest({ apiKey: d.merchant.apiKey, apiSecret: d.merchant.apiSecret, method: 'GET', path: '/dashboard/points', body: '' });
      const page = await fetch(`${d.url}/dashboard/points`, { redirect: 'manual', headers: signed });
      assert.ok(page.status === 401 || (page.status === 303 && page.headers.get('location') === '/dashboard/sign-in'), `refused: ${page.status}`);
      const pageHtml = await fetch(`${d.url}/dashboard/points`, { redirect: 'manual', headers: { ...signed, Accept: 'text/html' } });
      assert.equal(pageHtml.status, 303);
      assert.equal(pageHtml.headers.get('location'), '/dashboard/sign-in');
      const basic = await fetch(`${d.url}/dashboard/points`, { redirect: 'manual', headers: { Authorization: `Basic ${Buffer.from(`${d.merchant.apiKey}:${d.merchant.apiSecret}`).toString('base64')}` } });
      assert.equal(basic.status, 303);
      const postBody = 'name=Evil';
      const signedPost = signRequest({ apiKey: d.merchant.apiKey, apiSecret: d.merchant.apiSecret, method: 'POST', path: '/dashboard/api/points', body: postBody, idempotencyKey: 'x' });
      const post = await fetch(`${d.url}/dashboard/api/points`, { method: 'POST', headers: { ...signedPost, 'Content-Type': 'application/x-www-form-urlencoded', Origin: d.url, Accept: 'application/json' }, body: postBody });
      assert.equal(post.status, 401);
      assert.equal(((await post.json()) as { error: { code: string } }).error.code, 'SIGN_IN_REQUIRED');
    });

    test('a cross-site POST and a POST without the CSRF token are refused; the same-origin form goes through', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const { client } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      await client.get('/dashboard/points');
      const cross = await client.post('/dashboard/api/points', { name: 'Forged' }, { Origin: 'https://evil.example' });
      assert.equal(cross.status, 403);
      const noOrigin = await fetch(`${d.url}/dashboard/api/points`, { method: 'POST', headers: { Cookie: client.cookieHeader(), 'Content-Type': 'application/x-www-form-urlencoded', 'Sec-Fetch-Site': 'cross-site' }, body: `_csrf=${client.csrf}&name=Forged` });
      assert.equal(noOrigin.status, 403);
      const noToken = await client.post('/dashboard/api/points', { name: 'Forged', _csrf: '' });
      assert.equal(noToken.status, 403);
      const wrongToken = await client.post('/dashboard/api/points', { name: 'Forged', _csrf: 'x'.repeat(43) });
      assert.equal(wrongToken.status, 403);
      const ok = await client.post('/dashboard/api/points', { name: 'Real shop', accepted: ['ethereum', 'ethereum:ETH'] });
      assert.equal(ok.status, 201, ok.text);
      const points = await client.get('/dashboard/points');
      assert.ok(!points.text.includes('Forged'));
      assert.ok(points.text.includes('Real shop'));
      // A sign-in form from another site is refused too (no session yet: the Origin check and the pre-session token).
      const anon = dashboardClient(d.url);
      await anon.get('/dashboard/sign-in');
      assert.equal((await anon.post('/dashboard/api/sign-in', { email: 'owner@shop.example', password: PASSWORD }, { Origin: 'https://evil.example' })).status, 403);
      assert.equal((await anon.post('/dashboard/api/sign-in', { email: 'owner@shop.example', password: PASSWORD, _csrf: 'nope' })).status, 403);
    });

    test('sign-in failures look alike for unknown and known emails and grow a delay per account and IP', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const { totpSecret } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      const anon = dashboardClient(d.url);
      await anon.get('/dashboard/sign-in');
      const unknown = await anon.post('/dashboard/api/sign-in', { email: 'nobody@shop.example', password: 'wrong password!!' });
      const wrong = await anon.post('/dashboard/api/sign-in', { email: 'owner@shop.example', password: 'wrong password!!' });
      assert.equal(unknown.status, 401);
      assert.equal(wrong.status, 401);
      const said = (s: string) => /<p class="error" role="alert">([^<]*)</.exec(s)?.[1];
      assert.equal(said(unknown.text), said(wrong.text));
      assert.equal(said(wrong.text), 'The email or password is wrong');
      for (let i = 0; i < 2; i++) assert.equal((await anon.post('/dashboard/api/sign-in', { email: 'owner@shop.example', password: 'wrong password!!' })).status, 401);
      // The fourth failure from this IP set a delay: even the right password waits now.
      const waiting = await anon.post('/dashboard/api/sign-in', { email: 'owner@shop.example', password: PASSWORD });
      assert.equal(waiting.status, 429);
      assert.ok(Number(waiting.headers.get('retry-after')) >= 1);
      assert.deepEqual([1, 3, 4, 5, 6, 30].map(failureDelayMs), [0, 0, 1000, 2000, 4000, 15 * 60_000]);
      // The failed attempts are in the audit log, without the password.
      const audit = await d.common.db.orm.em.fork().getConnection().execute('select action, actor from audit_entry where action = ?', ['signin.failed']);
      assert.ok(audit.length >= 4);
      assert.ok(!JSON.stringify(audit).includes('wrong password'));
      void totpSecret;
    });

    test('failures against one account from many IPs still delay that account', async (t) => {
      const d = await startTestDaemon(t, dialect, { server: { trustProxy: true } });
      await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      const anon = dashboardClient(d.url);
      await anon.get('/dashboard/sign-in');
      for (let i = 1; i <= 4; i++) {
        const r = await anon.post('/dashboard/api/sign-in', { email: 'owner@shop.example', password: 'wrong password!!' }, { 'X-Forwarded-For': `203.0.113.${i}` });
        assert.equal(r.status, 401);
      }
      const fifth = await anon.post('/dashboard/api/sign-in', { email: 'owner@shop.example', password: PASSWORD }, { 'X-Forwarded-For': '203.0.113.99' });
      assert.equal(fifth.status, 429, 'the account waits, whatever the IP');
      // Another account from a fresh IP is not held up.
      const other = await anon.post('/dashboard/api/sign-in', { email: 'someone@shop.example', password: 'wrong password!!' }, { 'X-Forwarded-For': '203.0.113.100' });
      assert.equal(other.status, 401);
    });

    test('password, then TOTP or a recovery code; sign-out, a password change and disabling the user end sessions', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const first = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
      const other = dashboardClient(d.url);
      await other.get('/dashboard/sign-in');
      const pw = await other.post('/dashboard/api/sign-in', { email: 'OWNER@shop.example', password: PASSWORD });
      assert.equal(pw.status, 303);
      assert.equal(pw.headers.get('location'), '/dashboard/second-factor');
      const mfaToken = other.sessionToken();
      // Half signed in: no page but the second factor's.
      assert.equal((await other.get('/dashboard/points')).headers.get('location'), '/dashboard/second-factor');
      await other.get('/dashboard/second-factor');
      assert.equal((await other.post('/dashboard/api/second-factor', { code: '000000' })).status, 401);
      const ok = await other.post('/dashboard/api/second-factor', { code: totpAt(first.totpSecret, Date.now() + 30_000) });
      assert.equal(ok.status, 303, ok.text);
      assert.notEqual(other.sessionToken(), mfaToken, 'rotated on sign-in');
      const stale = dashboardClient(d.url);
      stale.jar.set('__Host-cg_session', mfaToken!);
      assert.equal((await stale.get('/dashboard/points')).status, 303, 'the pre-rotation token is dead');
      assert.equal((await other.get('/dashboard/points')).status, 200);

      // A recovery code works once.
      const third = dashboardClient(d.url);
      await third.get('/dashboard/sign-in');
      await third.post('/dashboard/api/sign-in', { email: 'owner@shop.example', password: PASSWORD });
      await third.get('/dashboard/second-factor');
      assert.equal((await third.post('/dashboard/api/second-factor', { code: first.recoveryCodes[0]! })).status, 303);
      const fourth = dashboardClient(d.url);
      await fourth.get('/dashboard/sign-in');
      await fourth.post('/dashboard/api/sign-in', { email: 'owner@shop.example', password: PASSWORD });
      await fourth.get('/dashboard/second-factor');
      assert.equal((await fourth.post('/dashboard/api/second-factor', { code: first.recoveryCodes[0]! })).status, 401);

      // Sign-out ends that session only.
      await third.get('/dashboard/points');
      assert.equal((await third.post('/dashboard/api/sign-out', {})).status, 303);
      assert.equal((await third.get('/dashboard/points')).status, 303);
      assert.equal((await other.get('/dashboard/points')).status, 200);

      // A password change ends every other session of the user.
      await first.client.get('/dashboard/account');
      const changed = await first.client.post('/dashboard/api/password', { current: PASSWORD, password: 'another long password', confirm: 'another long password' });
      assert.equal(changed.status, 303, changed.text);
      assert.equal((await first.client.get('/dashboard/points')).status, 200, 'this browser keeps a new session');
      assert.equal((await other.get('/dashboard/points')).status, 303, "the other browser's session ended");

      // Disabling the user ends the rest.
      await setDashboardUserActive(d.common, 'owner@shop.example', false, OPERATOR);
      assert.equal((await first.client.get('/dashboard/points')).status, 303);
    });

    test('roles per point: a viewer sees only granted points (404 otherwise) and can change nothing', async (t) => {
      const d = await startTestDaemon(t, dialect);
      const a = await d.createMerchant({ name: 'Shop A' });
      const b = await d.createMerchant({ name: 'Shop B' });
      const viewer = await signedInUser(d.common, d.url, { email: 'viewer@shop.example', role: 'viewer', pointIds: [a.id] });
      const list = await viewer.client.get('/dashboard/points');
      assert.ok(list.text.includes('Shop A'));
      assert.ok(!list.text.includes('Shop B'));
      assert.ok(!list.text.includes('Create a point'));
      const pageA = await viewer.client.get(`/dashboard/points/${a.id}`);
      assert.equal(pageA.status, 200);
      assert.ok(!pageA.text.includes('Rotate secret') && !pageA.text.includes('>Save<') && !pageA.text.includes('Disable point'), 'no buttons a viewer cannot use');
      assert.equal((await viewer.client.get(`/dashboard/points/${b.id}`)).status, 404);
      assert.equal((await viewer.client.get('/dashboard/points/nonexistentpointidxxxxxx')).status, 404);
      // The endpoints refuse, whatever the page shows.
      assert.equal((await viewer.client.post(`/dashboard/api/points/${a.id}`, { name: 'Renamed' })).status, 403);
      assert.equal((await viewer.client.post(`/dashboard/api/points/${a.id}/rotate`, { confirm: 'Shop A' })).status, 403);
      assert.equal((await viewer.client.post(`/dashboard/api/points/${a.id}/active`, { active: 'false' })).status, 403);
      assert.equal((await viewer.client.post(`/dashboard/api/points/${b.id}`, { name: 'Renamed' })).status, 404, 'an ungranted point does not exist');
      assert.equal((await viewer.client.post('/dashboard/api/points', { name: 'New' })).status, 403);
      assert.equal((await viewer.client.get('/dashboard/users')).status, 403);
      // A change of role ends the user's sessions: the next request signs in under the new role.
      await setDashboardUserRole(d.common, 'viewer@shop.example', { role: 'manager', pointIds: [a.id] }, OPERATOR);
      assert.equal((await viewer.client.get(`/dashboard/points/${a.id}`)).status, 303);
      // A manager may change settings but not rotate the secret.
      const manager = await signedInUser(d.common, d.url, { email: 'manager@shop.example', role: 'manager', pointIds: [b.id] });
      await manager.client.get(`/dashboard/points/${b.id}`);
      assert.equal((await manager.client.post(`/dashboard/api/points/${b.id}`, { name: 'Shop B2', webhookUrl: '', accepted: ['ethereum', 'ethereum:ETH'] })).status, 303);
      assert.equal((await manager.client.post(`/dashboard/api/points/${b.id}/rotate`, { confirm: 'Shop B2' })).status, 403);
      assert.equal((await manager.client.get(`/dashboard/points/${a.id}`)).status, 404);
      assert.equal((await manager.client.get('/dashboard/audit')).status, 403, 'only owners read the audit log');
      // An owner of A alone: may rotate A's secret, reads the audit rows of A and not those of B.
      const ownerA = await signedInUser(d.common, d.url, { email: 'owner-a@shop.example', role: 'owner', pointIds: [a.id] });
      await ownerA.client.get(`/dashboard/points/${a.id}`);
      assert.equal((await ownerA.client.post(`/dashboard/api/points/${a.id}/rotate`, { confirm: 'Shop A' })).status, 200);
      const audit = await ownerA.client.get('/dashboard/audit');
      assert.equal(audit.status, 200);
      assert.ok(audit.text.includes('point.rotate-secret') && audit.text.includes(a.id));
      assert.ok(!audit.text.includes(b.id), "B's rows stay hidden");
      assert.equal((await ownerA.client.post('/dashboard/api/points', { name: 'New' })).status, 403, 'creating points takes an owner of every point');
    });
  });
}

describe('dashboard sessions across two serve processes on one PostgreSQL', { skip: await skipUnless('postgresql') }, () => {
  test('a session made on one process works on the other and ends on both at sign-out', async (t) => {
    const d = await startTestDaemon(t, 'postgresql');
    const { openCommon } = await import('../../src/cli/context.ts');
    const { startDaemon } = await import('../../src/daemon/serve.ts');
    const common2 = await openCommon({ env: { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_LOG_LEVEL: 'silent', CHAINGATE_PORT: '0', CHAINGATE_METRICS_PORT: '0' }, overrides: { rateLimit: { enabled: false } } });
    const second = await startDaemon(common2, { schedule: false });
    t.after(() => second.stop());
    const { client } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
    const there = dashboardClient(second.url);
    for (const [k, v] of client.jar) there.jar.set(k, v);
    assert.equal((await there.get('/dashboard/points')).status, 200);
    await client.get('/dashboard/points');
    assert.equal((await client.post('/dashboard/api/sign-out', {})).status, 303);
    assert.equal((await there.get('/dashboard/points')).status, 303, 'revoked on the other process at once');
  });
});

describe('dashboard endpoints and bad input', () => {
  test('every dashboard POST answers garbage with a coded 4xx, never a 500', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const { client } = await signedInUser(d.common, d.url, { email: 'owner@shop.example', role: 'owner' });
    await client.get('/dashboard/points');
    const id = d.merchant.id;
    const routes = d.daemon.app.registeredRoutes// Sign-out would end the session the rest need; it has its own tests.
      .filter((r) => r.method === 'POST' && r.url.startsWith('/dashboard/api/') && !r.url.endsWith('/sign-out'))
      .map((r) => r.url.replace(':id', id));
    assert.ok(routes.length >= 13, routes.join(' '));
    const bodies: [string, string][] = [
      ['application/json', '{"response": {"id": 5, "response": {"clientDataJSON": "!!"}}, "name": ["x"], "accepted": {"a": 1}}'],
      ['application/json', 'not json'],
      ['application/json', '[]'],
      ['application/x-www-form-urlencoded', `_csrf=${client.csrf}&name=${'x'.repeat(300)}&webhookUrl=ftp://x&accepted=nochain&accepted=ethereum:DOGE&active=maybe&code=%00&sealed=v1.x.y&email=%3C&role=root&points=nope&confirm=`],
      ['application/x-www-form-urlencoded', `_csrf=${client.csrf}&accepted=ethereum`],
      ['text/plain', 'hello'],
    ];
    for (const url of routes) {
      for (const [type, body] of bodies) {
        const res = await fetch(d.url + url, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': type, Origin: d.url, Cookie: client.cookieHeader(), 'X-CSRF-Token': client.csrf, Accept: 'application/json' }, body });
        const text = await res.text();
        assert.ok(res.status < 500 && (res.status >= 300 || url.endsWith('/options')), `${url} ${type} ${body.slice(0, 30)}: ${res.status} ${text.slice(0, 200)}`);
        if (res.status >= 400) assert.match(text, /"code":"[A-Z_]+"/, `${url}: a coded answer`);
      }
    }
    // Nothing of the point was changed by any of it.
    const point = await d.common.db.write((x) => x.get<{ name: string; active: unknown }>('select name, active from merchant_point where id = ?', [id]));
    assert.equal(point?.name, 'Acme Corp');
    assert.ok(point?.active === true || point?.active === 1);
  });
});
