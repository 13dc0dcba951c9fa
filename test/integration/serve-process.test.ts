import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, skipUnless } from '../helpers/databases.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { recordIndexerReport } from '../helpers/indexer-report.ts';

interface Creds {
  apiKey: string;
  apiSecret: string;
}

async function signedFetch(base: string, creds: Creds, method: string, path: string, body?: unknown, idempotencyKey?: string) {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  const headers = signRequest({ ...creds, method, path, body: raw ?? '', idempotencyKey });
  const res = await fetch(base + path, { method, headers, body: raw });
  return { status: res.status, json: (await res.json()) as { data: any; error?: { code: string } } };
}

describe('chaingate serve as a real process', () => {
  test('serves the signed API on the embedded SQLite default and finishes an in-flight request on SIGTERM', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cg-serve-'));
    mkdirSync(join(dir, 'data'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const env = { CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'data', 'chaingate.db')}` };
    const creds = JSON.parse((await runCli(['merchant', 'create', '--name', 'Acme', '--json'], env)).stdout) as Creds;
    const serve = await spawnServe({ ...env, CHAINGATE_LOG_LEVEL: 'info' });
    const created = await signedFetch(serve.url, creds, 'POST', '/api/v1/invoices', { orderId: 'o1', amount: '2500', currency: 'USD' });
    assert.equal(created.status, 201);
    // a checkout that leaves the pool under pools.lowWaterMark (20) logs a warning
    const pool = join(dir, 'pool.txt');
    writeFileSync(pool, ['0x1000000000000000000000000000000000000001', '0x1000000000000000000000000000000000000002'].join('\n'));
    assert.equal((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', pool], env)).code, 0);
    const checkout = () => signedFetch(serve.url, creds, 'POST', `/api/v1/invoices/${created.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
    // No indexer has reported for ethereum yet: nothing is leased on a chain nobody watches.
    const unwatched = await checkout();
    assert.deepEqual([unwatched.status, unwatched.json.error?.code], [503, 'CHAIN_NOT_MONITORED']);
    await recordIndexerReport(env.CHAINGATE_DATABASE_URL, 'ethereum');
    const co = await checkout();
    assert.equal(co.status, 201);
    await waitFor('low-water warning', async () => /wallet pool is running low/.test(serve.output()));
    assert.match(serve.output(), /"free":1,"lowWaterMark":20/);
    assert.match(serve.output(), /"notOffered":\["ethereum:MAINNET",.*"ton:MAINNET"\].*"msg":"offered to buyers: nothing; not offered: ethereum, polygon, .*, ton \(no free address, no indexer\)/);

    // An in-flight request: headers sent, body still coming when SIGTERM arrives.
    const body = JSON.stringify({ orderId: 'o2', amount: '100', currency: 'USD' });
    const headers = signRequest({ ...creds, method: 'POST', path: '/api/v1/invoices', body });
    const { hostname, port } = new URL(serve.url);
    const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request({ host: hostname, port, method: 'POST', path: '/api/v1/invoices', headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        void serve.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 300);
      }, 200);
    });
    const finished = await response;
    assert.equal(finished.status, 201, finished.text);
    assert.equal(await serve.exited, 0, serve.output());
    assert.match(serve.output(), /shutting down gracefully/);
  });
});

describe('several serve processes on one PostgreSQL', { skip: await skipUnless('postgresql') }, () => {
  test('20 concurrent identical requests run once and concurrent checkouts leave one payment, across two processes', async (t) => {
    const tdb = await createTestDatabase('postgresql', { migrated: true });
    t.after(() => tdb.drop());
    // The spec's service-wide buckets (10 req/s per IP) would throttle this one-IP burst: off here.
    const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'm'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ rateLimit: { enabled: false } }) };
    const creds = JSON.parse((await runCli(['merchant', 'create', '--name', 'Acme', '--json'], env)).stdout) as Creds;
    const a = await spawnServe(env);
    const b = await spawnServe(env);
    t.after(async () => {
      await a.stop();
      await b.stop();
    });
    const invoice = { orderId: 'same', amount: '2500', currency: 'USD' };
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => signedFetch(i % 2 ? a.url : b.url, creds, 'POST', '/api/v1/invoices', invoice, 'one-key')));
    const ok = burst.filter((r) => r.status === 201);
    assert.equal(ok.length + burst.filter((r) => r.status === 409).length, 20);
    assert.equal(new Set(ok.map((r) => r.json.data.id)).size, 1, 'one handler run, replayed to the others');
    const listed = await signedFetch(a.url, creds, 'GET', '/api/v1/payments');
    assert.equal(listed.status, 200);

    const addresses = Array.from({ length: 10 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
    const { writeFileSync } = await import('node:fs');
    const file = join(mkdtempSync(join(tmpdir(), 'cg-pool-')), 'pool.txt');
    writeFileSync(file, addresses.join('\n'));
    assert.equal((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', file], env)).code, 0);
    await recordIndexerReport(tdb.url, 'ethereum'); // as `chaingate index ethereum` would: the gateway leases only on a watched chain
    const id = ok[0]!.json.data.id as string;
    const checkouts = await Promise.all(Array.from({ length: 10 }, (_, i) => signedFetch(i % 2 ? a.url : b.url, creds, 'POST', `/api/v1/invoices/${id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' }, `co-${i}`)));
    assert.equal(checkouts.filter((r) => r.status === 201).length, 1, JSON.stringify(checkouts.map((r) => r.json.error?.code ?? r.status)));
    const inv = await signedFetch(a.url, creds, 'GET', `/api/v1/invoices/${id}`);
    assert.equal(inv.json.data.payments.length, 1);
  });
});
