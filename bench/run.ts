// npm run bench: throughput of the signed gateway on this machine, measured, never asserted.
// An in-process daemon on a fresh database (SQLite by default; BENCH_DATABASE=postgresql for the
// local PostgreSQL); N signed requests with C in flight, for invoice creation, reads and checkouts.
import { performance } from 'node:perf_hooks';
import { startTestDaemon, evmAddresses } from '../test/helpers/daemon.ts';
import type { DialectName } from '../test/helpers/databases.ts';

const dialect = (process.env.BENCH_DATABASE ?? 'sqlite') as DialectName;
const N = Number(process.env.BENCH_REQUESTS ?? 2000);
const C = Number(process.env.BENCH_CONCURRENCY ?? 16);
const cleanups: (() => Promise<void> | void)[] = [];
const d = await startTestDaemon({ after: (fn) => cleanups.push(fn) }, dialect);

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
  console.log(`${name.padEnd(28)} ${String(n).padStart(6)} req  ${(n / seconds).toFixed(0).padStart(6)} req/s  p50 ${p(0.5)} ms  p99 ${p(0.99)} ms${failed ? `  FAILED ${failed}` : ''}`);
}

console.log(`chaingate bench on ${dialect}, ${C} in flight`);
const ids: string[] = [];
await run('POST /api/v1/invoices', N, async (i) => {
  const res = await d.signed('POST', '/api/v1/invoices', { orderId: `b${i}`, amount: '2500', currency: 'USD' });
  if (res.json?.data?.id) ids.push(res.json.data.id);
  return res;
}, 201);
await run('GET /api/v1/invoices/{id}', N, (i) => d.signed('GET', `/api/v1/invoices/${ids[i % ids.length]}`), 200);
const checkouts = Math.min(N, ids.length, 1000);
await d.seedPool('ethereum', evmAddresses(checkouts, 9));
await run('POST …/checkout (lease)', checkouts, (i) => d.signed('POST', `/api/v1/invoices/${ids[i]}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC' }), 201);
await run('GET /api/v1/payments', Math.min(N, 500), () => d.signed('GET', '/api/v1/payments?take=20'), 200);
for (const fn of cleanups.reverse()) await fn();
