// npm run bench:dashboard: the dashboard's invoice list at a shop's scale, measured, never asserted.
//
// For each database: a fresh database migrated by the store, 20 merchant points, and 1,000,000
// invoices with about 1,200,000 payments (INSERT … SELECT through the store's one write path,
// bench/dashboard-seed.ts), spread over a year: 60 % PAID (with an earlier expired
// attempt, 40 %), 20 % EXPIRED, 8 % OPEN, 7 % CANCELLED, 5 % waiting on a payment; about 1 % of
// completed payments underpaid and 1 % overpaid, some refunded, failed, or with late funds. Then
// the real `chaingate serve` on that database, 8 dashboard users (owners of every point) signed in
// with password and TOTP, and the load generator (bench/load.ts: keep-alive connections) at 8
// concurrent users per scenario: the list's first page, a deep page (a cursor half a year back), a
// search by order id, by deposit address and by transaction hash, the "underpaid" and "late"
// filters, and an invoice's detail. Each prints p50, p95 and p99. Then the CSV export of 100,000
// rows (a date range): its time, and serve's RSS (sampled from /proc every 20 ms) before and at peak.
// Last, the plans of each scenario's statements (EXPLAIN QUERY PLAN; EXPLAIN ANALYZE on PostgreSQL).
//
//   npm run bench:dashboard                                 # both databases, 1,000,000 invoices, 10 s a scenario
//   npm run bench:dashboard -- --db sqlite --invoices 100000 --duration 3
//   npm run bench:dashboard -- --keep                       # keep the databases (prints their URLs)
//
// PostgreSQL comes from CHAINGATE_TEST_DATABASE_URL (default postgres://root@127.0.0.1:5432/postgres);
// it is ANALYZEd after seeding, as autovacuum would have done for a table that grew this much.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { openCommon } from '../src/cli/context.ts';
import type { Common } from '../src/common.ts';
import { encodeCursor, type InvoiceListFilter, type PointScope } from '../src/domain/invoice-list.ts';
import { explainInvoiceList } from '../src/store/invoice-search.ts';
import { invoicePayments, loadInvoice } from '../src/store/invoices.ts';
import { createMerchant } from '../src/store/merchants.ts';
import { migrate } from '../src/store/migrate.ts';
import { createTestDatabase, type DialectName, type TestDatabase } from '../test/helpers/databases.ts';
import { signedInUser, type DashboardClient } from '../test/helpers/dashboard.ts';
import { writeConfigFile } from '../test/helpers/indexer-process.ts';
import { spawnServe } from '../test/helpers/serve-process.ts';
import { seedWorld, targetsOf } from './dashboard-seed.ts';
import { DEPLOYMENT_NODE_FLAGS, deploymentMemoryEnv } from './deployment.ts';
import { drive } from './load.ts';

const { values: flags } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.BENCH_DATABASE ?? 'sqlite,postgresql' },
    invoices: { type: 'string', default: '1000000' },
    points: { type: 'string', default: '20' },
    users: { type: 'string', default: '8' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    export: { type: 'string', default: '100000' },
    keep: { type: 'boolean', default: false },
    only: { type: 'string' },
  },
});
const N = Number(flags.invoices);
const POINTS = Number(flags.points);
const USERS = Number(flags.users);
const DURATION_MS = Number(flags.duration) * 1000;
const WARMUP_MS = Number(flags.warmup) * 1000;
const EXPORT_ROWS = Number(flags.export);
const MASTER_KEY = 'd'.repeat(64);
const YEAR_MS = 365 * 86_400_000;

interface Seeded {
  points: string[];
  /** The instant invoice n was created (n = 0 the oldest). */
  createdAt(n: number): Date;
  /** Invoice ids, order ids, deposit addresses and tx hashes sampled while seeding (search targets). */
  samples: { invoiceIds: string[]; invoiceAt: number[]; orderIds: string[]; addresses: string[]; txHashes: string[] };
}

async function seed(common: Common, now: number): Promise<Seeded> {
  const points: string[] = [];
  for (let i = 0; i < POINTS; i++) points.push((await createMerchant(common.db, common.box, { name: `Shop ${i + 1}` })).merchant.id);
  const stepMs = Math.floor(YEAR_MS / N);
  const startMs = now - stepMs * N;
  const t0 = performance.now();
  await seedWorld(common, { invoices: N, points, startMs, stepMs }, (done) => process.stdout.write(`\r  seeded ${done.toLocaleString('en')} invoices (${((performance.now() - t0) / 1000).toFixed(0)} s)`));
  const count = async (table: string) => Number(((await common.db.orm.em.getConnection().execute(`select count(*) as n from ${table}`)) as { n: number | string }[])[0]!.n);
  console.log(`\r  seeded ${(await count('invoice')).toLocaleString('en')} invoices, ${(await count('payment')).toLocaleString('en')} payments, ${await count('observed_transfer')} late transfers, ${await count('refund')} refunds over ${POINTS} points in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  // Every 997th invoice is a search target (spread over the whole year).
  const samples: Seeded['samples'] = { invoiceIds: [], invoiceAt: [], orderIds: [], addresses: [], txHashes: [] };
  for (let n = 0; n < N; n += 997) {
    const t = targetsOf(n);
    samples.invoiceIds.push(t.invoiceId);
    samples.invoiceAt.push(n);
    samples.orderIds.push(t.orderId);
    if (t.address) samples.addresses.push(t.address);
    if (t.txHash) samples.txHashes.push(t.txHash);
  }
  return { points, createdAt: (n) => new Date(startMs + n * stepMs), samples };
}

function rssKiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

const pick = <T>(list: T[], i: number): T => list[(i * 7919) % list.length]!;
const fmt = (ms: number) => ms.toFixed(1).padStart(7);

async function run(dialect: DialectName): Promise<void> {
  console.log(`\n=== ${dialect}: ${N.toLocaleString('en')} invoices, ${POINTS} points, ${USERS} users ===`);
  const tdb: TestDatabase = await createTestDatabase(dialect);
  const url = tdb.url;
  const env = { CHAINGATE_DATABASE_URL: url, CHAINGATE_MASTER_KEY: MASTER_KEY, CHAINGATE_LOG_LEVEL: 'silent' };
  const common = await openCommon({ env: { ...env, CHAINGATE_PORT: '0', CHAINGATE_METRICS_PORT: '0' }, skipMigrationCheck: true });
  const now = Date.now();
  try {
    await migrate(common.db);
    const seeded = await seed(common, now);
    if (dialect === 'postgresql') {
      const t = performance.now();
      await common.db.orm.em.getConnection().execute('analyze');
      console.log(`  analyze: ${((performance.now() - t) / 1000).toFixed(1)} s`);
    }
    // The limits a deployment puts on sign-in and reads are off: this measures the list, not the limiter.
    const serve = await spawnServe({ ...env, CHAINGATE_LOG_LEVEL: 'warn', CHAINGATE_CONFIG: writeConfigFile({ rateLimit: { enabled: false } }), ...deploymentMemoryEnv() }, { nodeArgs: DEPLOYMENT_NODE_FLAGS });
    try {
      const users: DashboardClient[] = [];
      for (let i = 0; i < USERS; i++) users.push((await signedInUser(common, serve.url, { email: `owner${i}@shop.example`, role: 'owner' })).client);
      const cookie = (i: number) => users[i % users.length]!.cookieHeader();
      const deepAt = (i: number) => {
        const n = Math.floor(N / 2) + ((i * 104_729) % Math.floor(N / 4));
        return encodeCursor({ createdAt: seeded.createdAt(n), id: 'zzzzzzzzzzzzzzzzzzzzzzzz' });
      };
      const s = seeded.samples;
      const scenarios: { name: string; path: (i: number) => string }[] = [
        { name: 'first page', path: () => '/dashboard/invoices' },
        { name: 'deep page (~500,000 rows in)', path: (i) => `/dashboard/invoices?after=${deepAt(i)}` },
        { name: 'search: orderId', path: (i) => `/dashboard/invoices?q=${pick(s.orderIds, i)}` },
        { name: 'search: deposit address', path: (i) => `/dashboard/invoices?q=${pick(s.addresses, i)}` },
        { name: 'search: tx hash', path: (i) => `/dashboard/invoices?q=${pick(s.txHashes, i)}` },
        { name: 'unusual: underpaid', path: () => '/dashboard/invoices?unusual=underpaid' },
        { name: 'unusual: late', path: () => '/dashboard/invoices?unusual=late' },
        { name: 'unusual: underpaid, deep', path: (i) => `/dashboard/invoices?unusual=underpaid&after=${deepAt(i)}` },
        { name: 'status PAID + chain tron, deep', path: (i) => `/dashboard/invoices?status=PAID&chain=tron&after=${deepAt(i)}` },
        { name: 'one point, first page', path: () => `/dashboard/invoices?point=${seeded.points[3]}` },
      ];
      const only = flags.only ? new RegExp(flags.only) : null;
      console.log(`\n  ${'scenario'.padEnd(34)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(7)} ${'p95 ms'.padStart(7)} ${'p99 ms'.padStart(7)}  failed`);
      for (const sc of scenarios) {
        if (only && !only.test(sc.name)) continue;
        const next = (i: number) => ({ method: 'GET', path: sc.path(i), headers: { Host: new URL(serve.url).host, Cookie: cookie(i), Accept: 'text/html' } });
        await drive({ baseUrl: serve.url, connections: USERS, durationMs: WARMUP_MS, next, expect: 200 });
        const r = await drive({ baseUrl: serve.url, connections: USERS, durationMs: DURATION_MS, next, expect: 200 });
        const p95 = r.latencies[Math.min(r.latencies.length - 1, Math.floor(0.95 * r.latencies.length))]!;
        console.log(`  ${sc.name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} ${fmt(r.p50)} ${fmt(p95)} ${fmt(r.p99)}  ${JSON.stringify(r.failed)}`);
      }

      // The invoice's detail: GET /dashboard/invoices/<id> when serve has it, else the store's read
      // of one invoice with its payments, in this process, at the same concurrency.
      const probe = await users[0]!.get(`/dashboard/invoices/${s.invoiceIds[0]}`);
      if (probe.status === 200) {
        const next = (i: number) => ({ method: 'GET', path: `/dashboard/invoices/${pick(s.invoiceIds, i)}`, headers: { Host: new URL(serve.url).host, Cookie: cookie(i), Accept: 'text/html' } });
        const r = await drive({ baseUrl: serve.url, connections: USERS, durationMs: DURATION_MS, next, expect: 200 });
        const p95 = r.latencies[Math.floor(0.95 * r.latencies.length)]!;
        console.log(`  ${'invoice detail (page)'.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} ${fmt(r.p50)} ${fmt(p95)} ${fmt(r.p99)}  ${JSON.stringify(r.failed)}`);
      } else {
        const latencies: number[] = [];
        const end = performance.now() + DURATION_MS;
        let i = 0;
        await Promise.all(
          Array.from({ length: USERS }, async () => {
            while (performance.now() < end) {
              const id = pick(s.invoiceIds, i++);
              const t = performance.now();
              await loadInvoice(common.db, id, null);
              await invoicePayments(common.db, id);
              latencies.push(performance.now() - t);
            }
          }),
        );
        latencies.sort((a, b) => a - b);
        const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]!;
        console.log(`  ${'invoice + payments (store read)'.padEnd(34)} ${(latencies.length / (DURATION_MS / 1000)).toFixed(0).padStart(7)} ${fmt(q(0.5))} ${fmt(q(0.95))} ${fmt(q(0.99))}  (no detail page on serve yet: ${probe.status})`);
      }

      // The CSV export: a date range of EXPORT_ROWS invoices, read to the end; serve's RSS sampled.
      const fromN = Math.floor(N / 3);
      const from = seeded.createdAt(fromN).toISOString();
      const to = seeded.createdAt(Math.min(N - 1, fromN + EXPORT_ROWS)).toISOString();
      const pid = serve.child.pid!;
      const before = rssKiB(pid);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(pid))), 20);
      const t = performance.now();
      const res = await fetch(`${serve.url}/dashboard/api/invoices.csv?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`, { headers: { Cookie: cookie(0) } });
      let bytes = 0;
      let lines = 0;
      const reader = res.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.length;
        for (const b of value) if (b === 10) lines++;
      }
      const seconds = (performance.now() - t) / 1000;
      clearInterval(sampler);
      peak = Math.max(peak, rssKiB(pid));
      console.log(`\n  CSV export: HTTP ${res.status}, ${(lines - 1).toLocaleString('en')} rows, ${(bytes / 1e6).toFixed(1)} MB in ${seconds.toFixed(2)} s; serve RSS ${(before / 1024).toFixed(0)} MB before, ${(peak / 1024).toFixed(0)} MB at peak (+${((peak - before) / 1024).toFixed(1)} MB)`);

      // The plans.
      const all: PointScope = { all: true, except: [] };
      const filter = (f: Partial<InvoiceListFilter>): InvoiceListFilter => ({ q: null, point: null, status: [], chain: null, coin: null, from: null, to: null, unusual: null, ...f });
      const page = { sort: 'desc' as const, after: null, before: null, limit: 50 };
      const deep = { ...page, after: { createdAt: seeded.createdAt(Math.floor(N / 2)), id: 'zzzzzzzzzzzzzzzzzzzzzzzz' } };
      const plans: [string, PointScope, InvoiceListFilter, typeof page | typeof deep][] = [
        ['first page', all, filter({}), page],
        ['deep page', all, filter({}), deep],
        ['search: orderId', all, filter({ q: s.orderIds[1]! }), page],
        ['search: deposit address', all, filter({ q: s.addresses[1]! }), page],
        ['search: tx hash', all, filter({ q: s.txHashes[1]! }), page],
        ['unusual: underpaid', all, filter({ unusual: 'underpaid' }), page],
        ['unusual: late', all, filter({ unusual: 'late' }), page],
        ['status PAID + chain tron, deep', all, filter({ status: ['PAID'], chain: 'tron' }), deep],
        ['one point, first page', { all: false, ids: [seeded.points[3]!] }, filter({}), page],
      ];
      console.log('\n  Plans:');
      for (const [name, scope, f, pg] of plans) {
        console.log(`\n  -- ${name}`);
        for (const p of await explainInvoiceList(common.db, scope, f, pg)) console.log(`  ${p.replace(/\n/g, '\n  ')}`);
      }
    } finally {
      await serve.stop();
    }
  } finally {
    await common.db.close();
    if (!flags.keep) await tdb.drop();
    else console.log(`  kept: ${url}`);
  }
}

for (const dialect of flags.db.split(',') as DialectName[]) await run(dialect);
