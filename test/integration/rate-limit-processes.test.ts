import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, skipUnless } from '../helpers/databases.ts';
import { waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { sample } from '../helpers/prometheus.ts';
import { spawnServe, type ServeProcess } from '../helpers/serve-process.ts';

// Two real `serve` processes on one PostgreSQL database, as behind a load balancer: every limit
// holds across both (docs/rate-limits.md#several-serve-processes). Each phase is one client, named
// by X-Forwarded-For (server.trustProxy), so the phases do not share a budget; the limits are the
// spec's, except the service-wide buckets: a burst bucket too large to matter and a sustained one of
// 20 a minute, so which layer refuses a request does not depend on how fast the machine is.

const SUSTAINED = 20;
const CHECKOUTS_PER_MINUTE = 10; // the spec's, the default

interface Answer {
  status: number;
  headers: Headers;
  json: { success: boolean; data?: any; error?: { code: string; message: string }; requestId?: string };
}

async function call(base: string, method: string, path: string, client: string, init: { body?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const body = init.body === undefined ? undefined : JSON.stringify(init.body);
  const res = await fetch(base + path, { method, body, headers: { 'x-forwarded-for': client, ...(body ? { 'content-type': 'application/json' } : {}), ...init.headers } });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Answer['json'] };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function assertLimited(res: Answer, what: string): void {
  assert.equal(res.status, 429, what);
  assert.equal(res.json.success, false, what);
  assert.equal(res.json.error?.code, 'RATE_LIMITED', what);
  assert.match(res.json.requestId ?? '', /^req_/, what);
  const retry = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `${what}: Retry-After ${res.headers.get('retry-after')}`);
}

describe('rate limits across two serve processes on one postgresql database', { skip: await skipUnless('postgresql') }, () => {
  test('each limit holds across both processes, and a locked store lets requests through', async (t) => {
    const tdb = await createTestDatabase('postgresql');
    t.after(() => tdb.drop());
    const config = writeConfigFile({
      server: { trustProxy: true },
      checkout: { indexerStaleAfterSeconds: null },
      rateLimit: { enabled: true, serviceWide: { burst: { max: 100_000, windowMs: 1000 }, sustained: { max: SUSTAINED, windowMs: 60_000 } } },
    });
    const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'k'.repeat(64), CHAINGATE_CONFIG: config };
    assert.equal((await runCli(['migrate'], env)).code, 0);
    const creds = JSON.parse((await runCli(['merchant', 'create', '--name', 'Acme', '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
    const pool = join(mkdtempSync(join(tmpdir(), 'cg-rl-pool-')), 'pool.txt');
    writeFileSync(pool, Array.from({ length: 30 }, (_, i) => `0x20000000000000000000000000000000000000${String(i + 10)}`).join('\n'));
    assert.equal((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', pool], env)).code, 0);

    const ports = [await freePort(), await freePort()];
    const serves: ServeProcess[] = [];
    t.after(async () => {
      for (const s of serves) await s.stop();
    });
    // Info: the store's recovery is logged at that level.
    for (const port of ports) serves.push(await spawnServe({ ...env, CHAINGATE_METRICS_PORT: String(port), CHAINGATE_LOG_LEVEL: 'info' }));
    const [a, b] = serves.map((s) => s.url) as [string, string];
    const either = (i: number) => (i % 2 ? b : a);

    // 30 invoices, created by the merchant's back end (signed: outside the buyer-facing buckets).
    const invoices: string[] = [];
    for (let i = 0; i < 30; i++) {
      const body = JSON.stringify({ orderId: `o${i}`, amount: '2500', currency: 'USD' });
      const res = await fetch(`${a}/api/v1/invoices`, { method: 'POST', body, headers: signRequest({ ...creds, method: 'POST', path: '/api/v1/invoices', body, idempotencyKey: `k${i}` }) });
      const text = await res.text();
      assert.equal(res.status, 201, text);
      invoices.push((JSON.parse(text) as { data: { id: string } }).data.id);
    }

    // One buyer, 30 checkouts spread over both processes: the spec's 10 a minute, not 10 each.
    const checkouts: Answer[] = [];
    for (let i = 0; i < 30; i++) {
      checkouts.push(await call(either(i), 'POST', `/checkout/api/v1/invoices/${invoices[i]}/checkout`, '203.0.113.1', { body: { blockchain: 'ethereum', cryptoCurrency: 'USDC' } }));
    }
    assert.deepEqual(checkouts.slice(0, CHECKOUTS_PER_MINUTE).map((r) => r.status), Array(CHECKOUTS_PER_MINUTE).fill(201), JSON.stringify(checkouts.find((r) => r.status !== 201)?.json));
    assert.equal(checkouts.filter((r) => r.status === 201).length, CHECKOUTS_PER_MINUTE, 'exactly 10 accepted');
    for (const [i, r] of checkouts.entries()) if (i >= CHECKOUTS_PER_MINUTE) assertLimited(r, `checkout #${i + 1}`);
    // The next ten passed the buckets and met the route's limit; after them the sustained bucket (20) is full.
    for (const r of checkouts.slice(CHECKOUTS_PER_MINUTE, SUSTAINED)) {
      assert.match(r.json.error!.message, /route limit/);
      assert.equal(r.headers.get('x-ratelimit-limit'), String(CHECKOUTS_PER_MINUTE));
      assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
    }
    for (const r of checkouts.slice(SUSTAINED)) assert.match(r.json.error!.message, /service-wide limit/);

    // The service-wide buckets count every route of both processes.
    const health = [];
    for (let i = 0; i < 30; i++) health.push((await call(either(i), 'GET', '/healthz', '203.0.113.2')).status);
    assert.equal(health.filter((s) => s === 200).length, SUSTAINED);
    assert.deepEqual(health.slice(SUSTAINED), Array(30 - SUSTAINED).fill(429));

    // Unsigned and unknown-key /api/v1 requests count in the same buckets, whichever process answers.
    const gateway: Answer[] = [];
    for (let i = 0; i < 30; i++) {
      const headers: Record<string, string> = i % 3 === 0 ? {} : { 'x-api-key': `unknown${i}`, 'x-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` };
      gateway.push(await call(either(i), 'GET', '/api/v1/invoices', '203.0.113.3', { headers }));
    }
    assert.equal(gateway.filter((r) => r.status === 401).length, SUSTAINED, JSON.stringify(gateway.map((r) => r.status)));
    for (const [i, r] of gateway.entries()) if (i >= SUSTAINED) assertLimited(r, `unsigned or unknown-key #${i + 1}`);

    // The limiter's store stops answering (its tables locked): requests still flow, at once, on both.
    const locker = new pg.Client({ connectionString: tdb.url });
    await locker.connect();
    locker.on('error', () => {});
    await locker.query('begin');
    await locker.query('lock table rate_limit_log in access exclusive mode');
    const read = `/checkout/api/v1/invoices/${invoices[29]}`;
    const locked = [];
    for (let i = 0; i < 2 * SUSTAINED; i++) locked.push((await call(either(i), 'GET', read, '203.0.113.4')).status);
    assert.deepEqual(locked, Array(2 * SUSTAINED).fill(200), 'twice the sustained bucket, none refused');
    for (const port of ports) {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const letThrough = ['timeout', 'unavailable', 'error'].reduce((n, reason) => n + (sample(text, 'chaingate_rate_limit_fail_open_total', { reason }) ?? 0), 0);
      assert.ok(letThrough >= 1, `fail-open counted on :${port}`);
    }
    for (const s of serves) assert.equal(s.output().split('\n').filter((l) => l.includes('fail open')).length, 1, 'logged once a process, not once a request');
    await locker.query('rollback');
    await locker.end();

    // Once the store answers again, both processes count in it again (a request of another client asks it).
    await waitFor('the store answering both processes', async () => {
      for (const base of [a, b]) await call(base, 'GET', '/healthz', '203.0.113.9');
      return serves.every((s) => s.output().includes('store answers again'));
    }, 20_000, 200);
    const after = [];
    for (let i = 0; i < 30; i++) after.push((await call(either(i), 'GET', read, '203.0.113.5')).status);
    assert.equal(after.filter((s) => s === 200).length, SUSTAINED);
  });
});
