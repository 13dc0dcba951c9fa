// npm run bench: throughput of the signed gateway and the buyer's status poll on this machine,
// measured, never asserted. A real `chaingate serve` process on a fresh database (SQLite by default;
// BENCH_DATABASE=postgresql uses the local PostgreSQL) is driven from this process with C requests
// in flight. Both share the machine's cores, so the numbers are a floor for a dedicated server.
//   BENCH_REQUESTS=2000 BENCH_CONCURRENCY=16 BENCH_DATABASE=sqlite npm run bench
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { signRequest } from '../src/sdk/sign-request.ts';
import { runCli } from '../test/helpers/cli.ts';
import { createTestDatabase, type DialectName } from '../test/helpers/databases.ts';
import { writeConfigFile } from '../test/helpers/indexer-process.ts';
import { spawnServe } from '../test/helpers/serve-process.ts';

const dialect = (process.env.BENCH_DATABASE ?? 'sqlite') as DialectName;
const N = Number(process.env.BENCH_REQUESTS ?? 2000);
const C = Number(process.env.BENCH_CONCURRENCY ?? 16);

const tdb = await createTestDatabase(dialect);
const dir = mkdtempSync(join(tmpdir(), 'cg-bench-'));
const env = {
  CHAINGATE_DATABASE_URL: tdb.url,
  CHAINGATE_MASTER_KEY: 'b'.repeat(64),
  CHAINGATE_LOG_LEVEL: 'error',
  // Measured without the buyer-facing rate limits, which would otherwise be the bottleneck.
  CHAINGATE_CONFIG: writeConfigFile({ rateLimit: { enabled: false } }),
};
if (dialect === 'postgresql') await runCli(['migrate'], env);
const creds = JSON.parse((await runCli(['merchant', 'create', '--name', 'Bench', '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
const pool = join(dir, 'pool.txt');
writeFileSync(pool, Array.from({ length: N }, (_, i) => `0x${(0x10000 + i).toString(16).padStart(40, '0')}`).join('\n'));
await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', pool], env);
const serve = await spawnServe(env);

async function signed(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  const res = await fetch(serve.url + path, { method, headers: signRequest({ ...creds, method, path, body: raw ?? '' }), body: raw });
  return { status: res.status, json: await res.json() };
}

async function run(name: string, n: number, task: (i: number) => Promise<{ status: number }>, expect: number): Promise<void> {
  let next = 0;
  let failed = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t0 = performance.now();
        const res = await task(i);
        latencies.push(performance.now() - t0);
        if (res.status !== expect) failed++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const p = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);
  console.log(`${name.padEnd(40)} ${String(n).padStart(6)} req ${(n / seconds).toFixed(0).padStart(6)} req/s  p50 ${p(0.5).padStart(6)} ms  p99 ${p(0.99).padStart(6)} ms${failed ? `  FAILED ${failed}` : ''}`);
}

try {
  console.log(`chaingate bench: serve on ${dialect}, ${C} requests in flight`);
  const ids: string[] = [];
  const payments: string[] = [];
  await run('POST /api/v1/invoices (signed, idempotent)', N, async (i) => {
    const res = await signed('POST', '/api/v1/invoices', { orderId: `b${i}`, amount: '2500', currency: 'USD' });
    if (res.json?.data?.id) ids.push(res.json.data.id as string);
    return res;
  }, 201);
  await run('GET /api/v1/invoices/{id}', N, (i) => signed('GET', `/api/v1/invoices/${ids[i % ids.length]}`), 200);
  await run('POST /api/v1/invoices/{id}/checkout (lease)', Math.min(N, ids.length), async (i) => {
    const res = await signed('POST', `/api/v1/invoices/${ids[i]}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC' });
    if (res.json?.data?.payment?.id) payments.push(res.json.data.payment.id as string);
    return res;
  }, 201);
  await run('GET /checkout/api/v1/payments/{id}/status', N, async (i) => {
    const res = await fetch(`${serve.url}/checkout/api/v1/payments/${payments[i % payments.length]}/status`);
    await res.arrayBuffer();
    return res;
  }, 200);
  await run('GET /api/v1/payments?take=20', Math.min(N, 1000), () => signed('GET', '/api/v1/payments?take=20'), 200);
} finally {
  await serve.stop();
  await tdb.drop();
  rmSync(dir, { recursive: true, force: true });
}
