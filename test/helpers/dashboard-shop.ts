import assert from 'node:assert/strict';
import { totpAt } from '../../src/domain/totp.ts';
import { runCli } from './cli.ts';
import { createTestDatabase, type DialectName } from './databases.ts';
import { dashboardClient, PASSWORD, setupTokenOf, type DashboardClient } from './dashboard.ts';
import { writeConfigFile } from './indexer-process.ts';
import { spawnServe, type ServeProcess } from './serve-process.ts';

// A shop for the dashboard's tests against the real binary: a fresh database, merchant points made
// by `chaingate merchant create`, a real `serve` process, and users made by `chaingate users create`
// who sign in through the set-up link with a password and TOTP as a browser would.

export interface ShopPoint {
  id: string;
  apiKey: string;
  apiSecret: string;
}

export interface DashboardShop {
  env: Record<string, string>;
  serve: ServeProcess;
  url: string;
  point(name: string, webhookUrl?: string): Promise<ShopPoint>;
  /** A user made by the operator and signed in (password, TOTP); the client holds a full session. */
  user(email: string, role: string, pointIds?: string[]): Promise<DashboardClient>;
  /** The set-up link of a new user, not yet used (the browser tests walk it themselves). */
  setupLink(email: string, role: string, pointIds?: string[]): Promise<string>;
}

export async function startDashboardShop(t: { after(fn: () => Promise<void> | void): void }, dialect: DialectName, config: Record<string, unknown> = {}): Promise<DashboardShop> {
  const tdb = await createTestDatabase(dialect, { migrated: dialect === 'postgresql' });
  t.after(() => tdb.drop());
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'k'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ rateLimit: { enabled: false }, ...config }) };
  // The first command migrates a SQLite database; serve then finds it ready.
  const points: ShopPoint[] = [];
  const point = async (name: string, webhookUrl?: string): Promise<ShopPoint> => {
    const made = await runCli(['merchant', 'create', '--name', name, ...(webhookUrl ? ['--webhook-url', webhookUrl] : []), '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    const p = JSON.parse(made.stdout) as ShopPoint;
    points.push(p);
    return p;
  };
  await runCli(['migrate'], env);
  const serve = await spawnServe(env);
  t.after(() => serve.stop().then(() => undefined));
  const setupLink = async (email: string, role: string, pointIds: string[] = []) => {
    const made = await runCli(['users', 'create', '--email', email, '--role', role, ...(pointIds.length ? ['--points', pointIds.join(',')] : []), '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    return (JSON.parse(made.stdout) as { setupLink: string }).setupLink;
  };
  return {
    env,
    serve,
    url: serve.url,
    point,
    setupLink,
    async user(email, role, pointIds = []) {
      const link = await setupLink(email, role, pointIds);
      const c = dashboardClient(serve.url);
      const token = setupTokenOf(link);
      await c.get(`/dashboard/setup?token=${token}`);
      assert.equal((await c.post('/dashboard/api/setup', { token, password: PASSWORD, confirm: PASSWORD })).status, 303);
      const enrol = await c.get('/dashboard/enrol');
      const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.text)![1]!;
      const sealed = /name="sealed" value="([^"]+)"/.exec(enrol.text)![1]!;
      assert.equal((await c.post('/dashboard/api/totp', { sealed, code: totpAt(secret, Date.now()) })).status, 200);
      await c.get('/dashboard/points');
      return c;
    },
  };
}
