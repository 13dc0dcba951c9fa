import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../helpers/cli.ts';
import { skipUnless } from '../helpers/databases.ts';
import { startTestDaemon } from '../helpers/daemon.ts';
import { dashboardClient, PASSWORD, setupTokenOf } from '../helpers/dashboard.ts';
import { newShop } from '../helpers/serve-shop.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { totpAt } from '../../src/domain/totp.ts';

// The operator's side of the dashboard: `chaingate users …` and `chaingate audit list`, run as the
// real binary; the dashboard on its own listener or off; and sessions shared by real `serve`
// processes on one PostgreSQL.

/** Set-up link → password → TOTP through `base`; the client holds a full session. */
async function firstSignIn(base: string, link: string) {
  const c = dashboardClient(base);
  const token = setupTokenOf(link);
  await c.get(`/dashboard/setup?token=${token}`);
  assert.equal((await c.post('/dashboard/api/setup', { token, password: PASSWORD, confirm: PASSWORD })).status, 303);
  const enrol = await c.get('/dashboard/enrol');
  const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.text)![1]!;
  const sealed = /name="sealed" value="([^"]+)"/.exec(enrol.text)![1]!;
  assert.equal((await c.post('/dashboard/api/totp', { sealed, code: totpAt(secret, Date.now()) })).status, 200);
  return c;
}

describe('chaingate users and audit', () => {
  test('users create prints a single-use link; list, disable, reset-2fa and audit list --json work; bad input exits 2', async (t) => {
    const shop = await newShop('sqlite');
    t.after(() => shop.drop());
    const made = await runCli(['users', 'create', '--email', 'Owner@Shop.example', '--role', 'owner', '--json'], shop.env);
    assert.equal(made.code, 0, made.stderr);
    const out = JSON.parse(made.stdout) as { user: { id: string; email: string; grants: unknown[] }; setupLink: string; expiresAt: string };
    assert.equal(out.user.email, 'owner@shop.example');
    assert.deepEqual(out.user.grants, [{ pointId: '*', role: 'owner' }]);
    assert.match(out.setupLink, /\/dashboard\/setup\?token=[A-Za-z0-9_-]{43}$/);
    const hours = (Date.parse(out.expiresAt) - Date.now()) / 3_600_000;
    assert.ok(hours > 23.9 && hours <= 24, 'expires in 24 h');

    for (const bad of [
      ['users', 'create', '--email', 'not-an-email', '--role', 'owner'],
      ['users', 'create', '--email', 'a@b.example', '--role', 'admin'],
      ['users', 'create', '--email', 'owner@shop.example', '--role', 'viewer'],
      ['users', 'create', '--email', 'c@b.example', '--role', 'viewer', '--points', 'nosuchpoint'],
      ['users', 'disable', 'nobody@shop.example'],
      ['audit', 'list', '--limit', '0'],
    ]) {
      const r = await runCli(bad, shop.env);
      assert.equal(r.code, 2, `${bad.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, 'one line');
    }

    const pointId = (shop.creds as unknown as { id: string }).id;
    const viewer = await runCli(['users', 'create', '--email', 'viewer@shop.example', '--role', 'viewer', '--points', pointId, '--json'], shop.env);
    assert.equal(viewer.code, 0, viewer.stderr);
    const list = JSON.parse((await runCli(['users', 'list', '--json'], shop.env)).stdout) as { email: string; grants: { pointId: string; role: string }[]; setupPending: boolean }[];
    assert.deepEqual(list.map((u) => [u.email, u.grants, u.setupPending]), [
      ['owner@shop.example', [{ pointId: '*', role: 'owner' }], true],
      ['viewer@shop.example', [{ pointId, role: 'viewer' }], true],
    ]);
    const granted = await runCli(['users', 'grant', 'viewer@shop.example', '--role', 'manager', '--json'], shop.env);
    assert.equal(granted.code, 0, granted.stderr);
    assert.deepEqual(JSON.parse(granted.stdout).grants, [{ pointId: '*', role: 'manager' }]);
    assert.equal((await runCli(['users', 'grant', 'viewer@shop.example', '--role', 'boss'], shop.env)).code, 2);
    assert.equal((await runCli(['users', 'disable', 'viewer@shop.example'], shop.env)).code, 0);
    const reset = await runCli(['users', 'reset-2fa', 'owner@shop.example', '--json'], shop.env);
    assert.equal(reset.code, 0, reset.stderr);
    assert.notEqual(JSON.parse(reset.stdout).setupLink, out.setupLink);

    const audit = JSON.parse((await runCli(['audit', 'list', '--json'], shop.env)).stdout) as { action: string; actor: string; at: string }[];
    assert.deepEqual(audit.map((r) => r.action), ['user.reset-2fa', 'user.disable', 'user.grant', 'user.create', 'user.create']);
    assert.ok(audit.every((r) => r.actor === 'cli' && !Number.isNaN(Date.parse(r.at))));
  });

  test('the set-up link works once and not after it expired', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const { createDashboardUser } = await import('../../src/app/dashboard-users.ts');
    const { setupLink } = await createDashboardUser(d.common, { email: 'o@shop.example', role: 'owner', pointIds: [] }, { userId: null, actor: 'cli', ip: null, userAgent: null });
    await firstSignIn(d.url, setupLink);
    const again = dashboardClient(d.url);
    const page = await again.get(`/dashboard/setup?token=${setupTokenOf(setupLink)}`);
    assert.match(page.text, /used already or has expired/);
    const post = await again.post('/dashboard/api/setup', { token: setupTokenOf(setupLink), password: PASSWORD, confirm: PASSWORD });
    assert.equal(post.status, 400);
    // An expired link: the row's expiry moved into the past.
    const second = await createDashboardUser(d.common, { email: 'p@shop.example', role: 'viewer', pointIds: [] }, { userId: null, actor: 'cli', ip: null, userAgent: null });
    await d.common.db.write((x) => x.run('update dashboard_user set setup_expires_at = ? where email = ?', [new Date(Date.now() - 1000), 'p@shop.example']));
    const late = dashboardClient(d.url);
    assert.match((await late.get(`/dashboard/setup?token=${setupTokenOf(second.setupLink)}`)).text, /used already or has expired/);
    assert.equal((await late.post('/dashboard/api/setup', { token: setupTokenOf(second.setupLink), password: PASSWORD, confirm: PASSWORD })).status, 400);
  });

  test('idle and absolute timeouts end a session', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', { dashboard: { idleTimeoutMinutes: 30, absoluteTimeoutHours: 12 } });
    const { createDashboardUser } = await import('../../src/app/dashboard-users.ts');
    const { sessionOf } = await import('../../src/app/dashboard-session.ts');
    const { setupLink } = await createDashboardUser(d.common, { email: 'o@shop.example', role: 'owner', pointIds: [] }, { userId: null, actor: 'cli', ip: null, userAgent: null });
    const c = await firstSignIn(d.url, setupLink);
    const token = c.sessionToken()!;
    assert.ok(await sessionOf(d.common, token, new Date(Date.now() + 29 * 60_000)), 'within the idle timeout');
    // That request moved its last-seen time: 31 minutes after it, the session is gone.
    assert.equal(await sessionOf(d.common, token, new Date(Date.now() + 60 * 60_000)), null, 'idle for 31 minutes');
    assert.equal((await c.get('/dashboard/points')).status, 303, 'and ended for good');
    const q = await createDashboardUser(d.common, { email: 'q@shop.example', role: 'owner', pointIds: [] }, { userId: null, actor: 'cli', ip: null, userAgent: null });
    const c2 = await firstSignIn(d.url, q.setupLink);
    assert.equal((await c2.get('/dashboard/points')).status, 200);
    await d.common.db.write((x) => x.run('update dashboard_session set expires_at = ?', [new Date(Date.now() - 1)]));
    assert.equal((await c2.get('/dashboard/points')).status, 303, 'past its absolute end');
  });

  test('dashboard.port puts the dashboard on its own listener; dashboard.enabled: false turns it off', async (t) => {
    const own = await startTestDaemon(t, 'sqlite', { dashboard: { port: 0 } });
    assert.ok(own.daemon.dashboardUrl);
    assert.equal((await fetch(`${own.url}/dashboard/sign-in`)).status, 404, 'not on the public listener');
    const there = await fetch(`${own.daemon.dashboardUrl}/dashboard/sign-in`);
    assert.equal(there.status, 200);
    assert.match(there.headers.get('content-security-policy') ?? '', /script-src 'self'.*frame-ancestors 'none'/);
    assert.equal(there.headers.get('x-frame-options'), 'DENY');
    assert.equal((await fetch(`${own.daemon.dashboardUrl}/api/v1/payments`)).status, 404, 'no gateway beside it');
    const off = await startTestDaemon(t, 'sqlite', { dashboard: { enabled: false } });
    assert.equal((await fetch(`${off.url}/dashboard/sign-in`)).status, 404);
    assert.equal(off.daemon.dashboardUrl, null);
  });
});

describe('dashboard sessions across real serve processes on one PostgreSQL', { skip: await skipUnless('postgresql') }, () => {
  test('a session works on both processes and ends on both at sign-out and when the operator disables the user', async (t) => {
    const shop = await newShop('postgresql');
    t.after(() => shop.drop());
    const a = await spawnServe(shop.env);
    t.after(() => a.stop().then(() => undefined));
    const b = await spawnServe(shop.env);
    t.after(() => b.stop().then(() => undefined));
    const made = JSON.parse((await runCli(['users', 'create', '--email', 'o@shop.example', '--role', 'owner', '--json'], shop.env)).stdout) as { setupLink: string };
    const onA = await firstSignIn(a.url, made.setupLink);
    const onB = dashboardClient(b.url);
    for (const [k, v] of onA.jar) onB.jar.set(k, v);
    assert.equal((await onB.get('/dashboard/points')).status, 200, 'the session made on A works on B');
    await onA.get('/dashboard/points');
    assert.equal((await onA.post('/dashboard/api/sign-out', {})).status, 303);
    assert.equal((await onB.get('/dashboard/points')).status, 303, 'signed out on A: refused on B');

    // A new sign-in on B, ended by the operator from a third process.
    const again = dashboardClient(b.url);
    await again.get('/dashboard/sign-in');
    assert.equal((await again.post('/dashboard/api/sign-in', { email: 'o@shop.example', password: PASSWORD })).status, 303);
    assert.equal((await runCli(['users', 'disable', 'o@shop.example'], shop.env)).code, 0);
    const onAagain = dashboardClient(a.url);
    for (const [k, v] of again.jar) onAagain.jar.set(k, v);
    assert.equal((await again.get('/dashboard/second-factor')).status, 303);
    assert.equal((await onAagain.get('/dashboard/second-factor')).status, 303);
  });
});
