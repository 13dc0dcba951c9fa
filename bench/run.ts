// npm run bench: chaingate beside the bare limit, measured, never asserted.
//
// For each database, two fresh databases are migrated by `chaingate migrate` and seeded alike (a
// merchant point, a pool of deposit addresses). One is served by the real `chaingate serve`, the
// other by bench/bare-server.ts (Fastify + HMAC + the same SQL by hand, one transaction a write).
// The same load generator (bench/load.ts: keep-alive connections, signed requests, a fresh
// Idempotency-Key per write) drives each route on one server and then the other, in the same run on
// the same machine, and prints req/s, p50, p99 and the ratio chaingate / bare. On PostgreSQL it also
// prints the CPU the database's backends spent per request: on one box they share the cores.
//
//   npm run bench                                        # both databases, 32 connections, 10 s a route
//   npm run bench -- --db sqlite --duration 3 --connections 16
//   npm run bench -- --routes create --profile /tmp/prof # CPU profile of the serve process (--cpu-prof)
//   npm run bench -- --rss 100000 --db sqlite            # RSS of serve after 100,000 signed creations
//   npm run bench -- --rss 100000 --node-options=--max-old-space-size=64   # the same with a heap cap
//   npm run bench -- --rss 100000 --smaps /tmp/serve.smaps   # also /proc/PID/smaps at idle (.idle) and after
//   BENCH_MALLOC=system npm run bench -- --rss 100000      # on glibc's malloc (both servers alike)
//   npm run bench -- --limiter --routes invoice,status     # also chaingate with the spec's rate limits on
//
// --limiter adds a third server, `limited`: chaingate with rate limits on at the spec's defaults
// (shared by every serve process on PostgreSQL, in memory on SQLite). Every buyer read then carries
// one of CLIENTS addresses in X-Forwarded-For, in turn, so that no client comes near a limit (at
// 60,000 reads/s each sends 55 a minute), and both chaingate servers believe it (server.trustProxy):
// the limiter's cost with nothing refused, as many buyers make it, is the ratio `limited` / `chaingate`.
// PostgreSQL comes from CHAINGATE_TEST_DATABASE_URL (default postgres://root@127.0.0.1:5432/postgres).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { HDNodeWallet, Mnemonic } from 'ethers';
import { parseArgs } from 'node:util';
import { DEPLOYMENT_NODE_FLAGS, deploymentMemoryEnv } from './deployment.ts';
import { signRequest } from '../src/sdk/sign-request.ts';
import { runCli } from '../test/helpers/cli.ts';
import { createTestDatabase, type DialectName, type TestDatabase } from '../test/helpers/databases.ts';
import { writeConfigFile } from '../test/helpers/indexer-process.ts';
import { spawnServe } from '../test/helpers/serve-process.ts';
import { drive, summarize, type LoadRequest, type LoadResult } from './load.ts';

const { values: flags } = parseArgs({
  options: {
    db: { type: 'string', default: process.env.BENCH_DATABASE ?? 'sqlite,postgresql' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    routes: { type: 'string', default: 'create,checkout,invoice,status' },
    pool: { type: 'string', default: '40000' },
    only: { type: 'string' },
    profile: { type: 'string' },
    rss: { type: 'string' },
    smaps: { type: 'string' },
    'node-options': { type: 'string' },
    limiter: { type: 'boolean', default: false },
  },
});
const DIALECT_LIST = flags.db.split(',') as DialectName[];
const DURATION_MS = Number(flags.duration) * 1000;
const WARMUP_MS = Number(flags.warmup) * 1000;
const C = Number(flags.connections);
const ROUNDS = Math.max(1, Number(flags.rounds));
const ROUTES = new Set(flags.routes.split(','));
/** The routes the chosen ones need: the reads read what creation and checkout made. */
const NEEDED = new Set(ROUTES);
if (NEEDED.has('status')) NEEDED.add('checkout');
if (NEEDED.has('checkout') || NEEDED.has('invoice')) NEEDED.add('create');
const PREPARE_MS = 3000;
const MASTER_KEY = 'b'.repeat(64);
const BENCH_XPUB = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase('test test test test test test test test test test test junk'), "m/44'/60'/0'").neuter().extendedKey;

interface Creds {
  apiKey: string;
  apiSecret: string;
}

/** Distinct buyer addresses the reads come from (X-Forwarded-For): 10.0.0.0 to 10.0.255.255. */
const CLIENTS = 65_536;
const clientAddress = (i: number) => `10.0.${(i >> 8) & 255}.${i & 255}`;

interface Target {
  name: 'bare' | 'chaingate' | 'limited';
  url: string;
  creds: Creds;
  pid: number;
  stop(): Promise<unknown>;
  tdb: TestDatabase;
  invoices: string[];
  payments: string[];
  /** Invoices already sent to checkout (warm-up included). */
  checkedOut: number;
  /** One expected answer's body per route, to compare the two servers' answers. */
  answers: Map<string, string>;
  /** The header names of one answer per read route (reads only: a write would change the data). */
  headers: Map<string, string[]>;
}

async function prepare(dialect: DialectName, poolSize: number, limits = false): Promise<{ tdb: TestDatabase; env: Record<string, string>; creds: Creds }> {
  const tdb = await createTestDatabase(dialect);
  const env = {
    CHAINGATE_DATABASE_URL: tdb.url,
    CHAINGATE_MASTER_KEY: MASTER_KEY,
    CHAINGATE_LOG_LEVEL: 'error',
    // Without the buyer-facing rate limits, which would otherwise be the bottleneck by design
    // (`limited` has them, with its reads spread over CLIENTS addresses); no indexer runs here, so
    // the offer does not wait for one (ethereum is offered, as the bare server does).
    CHAINGATE_CONFIG: writeConfigFile({
      rateLimit: { enabled: limits },
      server: { trustProxy: flags.limiter },
      checkout: { indexerStaleAfterSeconds: null },
    }),
  };
  const must = async (args: string[]) => {
    const r = await runCli(args, env);
    if (r.code !== 0) throw new Error(`chaingate ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  await must(['migrate']);
  const creds = JSON.parse(await must(['merchant', 'create', '--name', 'Bench', '--json'])) as Creds;
  // Derived from an account xpub, as an EVM pool is in production (the lease walks derivation_index).
  for (let seeded = 0; seeded < poolSize; seeded += 10_000) {
    await must(['wallets', 'seed', '--chain', 'ethereum', '--xpub', BENCH_XPUB, '--count', String(Math.min(10_000, poolSize - seeded))]);
  }
  return { tdb, env, creds };
}

function spawnBare(url: string): Promise<{ child: ChildProcess; url: string }> {
  const profile = flags.profile ? ['--cpu-prof', `--cpu-prof-dir=${flags.profile}/bare`] : [];
  const child = spawn(process.execPath, [...DEPLOYMENT_NODE_FLAGS, ...profile, '--import', 'tsx', new URL('./bare-server.ts', import.meta.url).pathname, url, MASTER_KEY], { env: { ...process.env, ...deploymentMemoryEnv() }, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /\{"listening":"([^"]+)"\}/.exec(out);
      if (m) resolve({ child, url: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}: ${out}`)));
  });
}

async function startTarget(name: Target['name'], dialect: DialectName, poolSize: number): Promise<Target> {
  const { tdb, env, creds } = await prepare(dialect, poolSize, name === 'limited');
  if (name === 'bare') {
    const bare = await spawnBare(tdb.url);
    const exited = new Promise((r) => bare.child.once('exit', r));
    return { name, url: bare.url, creds, pid: bare.child.pid!, tdb, invoices: [], payments: [], checkedOut: 0, answers: new Map(), headers: new Map(), stop: () => {
      bare.child.kill('SIGTERM');
      return exited;
    } };
  }
  const nodeOptions = [flags.profile ? `--cpu-prof --cpu-prof-dir=${flags.profile}/chaingate` : '', flags['node-options'] ?? ''].join(' ').trim();
  const profileEnv: Record<string, string> = nodeOptions ? { NODE_OPTIONS: nodeOptions } : {};
  const serve = await spawnServe({ ...env, ...profileEnv, ...deploymentMemoryEnv() }, { nodeArgs: DEPLOYMENT_NODE_FLAGS });
  return { name, url: serve.url, creds, pid: serve.child.pid!, tdb, invoices: [], payments: [], checkedOut: 0, answers: new Map(), headers: new Map(), stop: () => serve.stop() };
}

function signed(t: Target, method: string, path: string, body?: unknown): LoadRequest {
  const raw = body === undefined ? undefined : JSON.stringify(body);
  const headers = signRequest({ ...t.creds, method, path, body: raw ?? '', idempotencyKey: randomUUID() });
  return raw === undefined ? { method, path, headers } : { method, path, headers, body: raw };
}

function dataId(body: string, pick: (d: any) => unknown): string | null {
  try {
    const v = pick(JSON.parse(body).data);
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

/** Keeps this many of the newest invoices unchecked for the public invoice read. */
const READ_RESERVE = 1000;

function route(name: string, t: Target): { title: string; expect: number; next(i: number): LoadRequest | null; onAnswer?(i: number, status: number, body: string): void } {
  switch (name) {
    case 'create':
      return {
        title: 'POST /api/v1/invoices (signed, idempotent)',
        expect: 201,
        next: (i) => signed(t, 'POST', '/api/v1/invoices', { orderId: `b${i}`, amount: '2500', currency: 'USD' }),
        onAnswer: (_i, status, body) => {
          const id = status === 201 ? dataId(body, (d) => d.id) : null;
          if (id) t.invoices.push(id);
        },
      };
    case 'checkout': {
      const last = t.invoices.length - Math.min(READ_RESERVE, Math.floor(t.invoices.length / 4));
      return {
        title: 'POST /api/v1/invoices/{id}/checkout (claim, lease, price)',
        expect: 201,
        next: () => {
          if (t.checkedOut >= last) return null;
          const id = t.invoices[t.checkedOut++]!;
          return signed(t, 'POST', `/api/v1/invoices/${id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC' });
        },
        onAnswer: (_i, status, body) => {
          const id = status === 201 ? dataId(body, (d) => d.payment.id) : null;
          if (id) t.payments.push(id);
        },
      };
    }
    case 'invoice': {
      const ids = t.invoices.slice(Math.max(t.checkedOut, t.invoices.length - READ_RESERVE));
      return { title: 'GET /checkout/api/v1/invoices/{id} (public read)', expect: 200, next: (i) => (ids.length ? buyerRead(`/checkout/api/v1/invoices/${ids[i % ids.length]}`, i) : null) };
    }
    case 'status': {
      const ids = t.payments;
      return { title: 'GET /checkout/api/v1/payments/{id}/status (poll)', expect: 200, next: (i) => (ids.length ? buyerRead(`/checkout/api/v1/payments/${ids[i % ids.length]}/status`, i) : null) };
    }
  }
  throw new Error(`unknown route ${name} (create, checkout, invoice, status)`);
}

/** A buyer's GET; with --limiter from the i-th client address (the bare server does not read it). */
function buyerRead(path: string, i: number): LoadRequest {
  return flags.limiter ? { method: 'GET', path, headers: { 'x-forwarded-for': clientAddress(i % CLIENTS) } } : { method: 'GET', path };
}

const fmt = (r: LoadResult) => `${r.rps.toFixed(0).padStart(6)} req/s  p50 ${r.p50.toFixed(1).padStart(6)}  p99 ${r.p99.toFixed(1).padStart(6)} ms${Object.keys(r.failed).length ? `  FAILED ${JSON.stringify(r.failed)}` : ''}`;

/** CPU time (user + system) the process has used, in ms, from /proc (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time (ms) of each PostgreSQL backend serving the database of `url` (its process title names the
 * database), by pid; empty for SQLite. What a server costs the database: on one box they share the cores.
 */
function databaseCpuMs(url: string): Map<number, number> {
  const byPid = new Map<number, number>();
  if (!url.startsWith('postgres')) return byPid;
  const name = ` ${new URL(url).pathname.slice(1)} `;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const title = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (title.startsWith('postgres: ') && title.includes(name)) byPid.set(Number(entry), cpuMs(Number(entry)));
    } catch {
      // The process ended meanwhile.
    }
  }
  return byPid;
}

/** The database CPU (ms) used between two databaseCpuMs readings (backends that started meanwhile from zero). */
function databaseCpuSince(before: Map<number, number>, url: string): number {
  let ms = 0;
  for (const [pid, now] of databaseCpuMs(url)) ms += now - (before.get(pid) ?? 0);
  return ms;
}

/** A route's load, with the server process's CPU time per answered request (µs): load on the box does not move it. */
async function measure(t: Target, name: string, durationMs: number): Promise<LoadResult & { cpuUs: number; dbUs: number }> {
  const r = route(name, t);
  const cpu = cpuMs(t.pid);
  const db = databaseCpuMs(t.tdb.url);
  const onAnswer = (i: number, status: number, body: string) => {
    if (status === r.expect && !t.answers.has(name)) t.answers.set(name, body);
    r.onAnswer?.(i, status, body);
  };
  const res = await drive({ baseUrl: t.url, connections: C, durationMs, next: r.next, expect: r.expect, onAnswer });
  if (!res.requests) throw new Error(`${t.name}: ${r.title} sent nothing (no invoices or payments to use)`);
  const read = r.next(0);
  if (read?.method === 'GET' && !t.headers.has(name)) {
    const answer = await fetch(`${t.url}${read.path}`);
    await answer.arrayBuffer();
    t.headers.set(name, [...answer.headers.keys()].filter((h) => !['date', 'connection', 'keep-alive', 'content-length'].includes(h)));
  }
  const dbMs = databaseCpuSince(db, t.tdb.url);
  return { ...res, cpuUs: res.requests ? ((cpuMs(t.pid) - cpu) * 1000) / res.requests : NaN, dbUs: res.requests ? (dbMs * 1000) / res.requests : NaN };
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** The RSS split: anonymous memory (V8's heap and malloc's; glibc's main-thread `[heap]` apart), mapped files, and the allocator. */
function memoryParts(pid: number): string {
  const kb = (re: RegExp, text: string): number => Number(re.exec(text)?.[1] ?? NaN) / 1024;
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const smaps = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  const anonymous = kb(/Anonymous:\s+(\d+) kB/, rollup);
  const files = kb(/Rss:\s+(\d+) kB/, rollup) - anonymous;
  const brk = kb(/\[heap\]\n(?:.*\n)*?Rss:\s+(\d+) kB/, smaps);
  const allocator = smaps.includes('libjemalloc') ? 'jemalloc' : 'glibc malloc';
  return `anonymous ${anonymous.toFixed(0)} MB${Number.isNaN(brk) ? '' : ` of which malloc's main heap ${brk.toFixed(0)} MB`}, files ${files.toFixed(0)} MB, ${allocator}`;
}

async function rssRun(dialect: DialectName, n: number): Promise<void> {
  const t = await startTarget((flags.only as Target['name'] | undefined) ?? 'chaingate', dialect, 10);
  try {
    const before = rssMb(t.pid);
    if (typeof flags.smaps === 'string') writeFileSync(`${flags.smaps}.idle`, readFileSync(`/proc/${t.pid}/smaps`));
    let done = 0;
    const started = Date.now();
    const r = await drive({
      baseUrl: t.url, connections: C, durationMs: Number.POSITIVE_INFINITY, expect: 201,
      next: (i) => (i < n ? signed(t, 'POST', '/api/v1/invoices', { orderId: `r${i}`, amount: '2500', currency: 'USD', metadata: { cart: `c${i}` } }) : null),
      onAnswer: () => {
        if (++done % 20_000 === 0) console.log(`  ${done} invoices, serve RSS ${rssMb(t.pid).toFixed(0)} MB (${((Date.now() - started) / 1000).toFixed(0)} s)`);
      },
    });
    const after = rssMb(t.pid);
    await new Promise((res) => setTimeout(res, 10_000));
    console.log(`${dialect}: ${r.requests} signed creations (${fmt(r)}); serve RSS ${before.toFixed(0)} MB before, ${after.toFixed(0)} MB after, ${rssMb(t.pid).toFixed(0)} MB 10 s later (${memoryParts(t.pid)})`);
    if (typeof flags.smaps === 'string') writeFileSync(flags.smaps, readFileSync(`/proc/${t.pid}/smaps`));
  } finally {
    await t.stop();
    await t.tdb.drop();
  }
}

type Measured = LoadResult & { cpuUs: number; dbUs: number };

function merged(parts: Measured[]): Measured {
  const failed: Record<number, number> = {};
  for (const p of parts) for (const [status, n] of Object.entries(p.failed)) failed[Number(status)] = (failed[Number(status)] ?? 0) + n;
  const all = summarize(parts.flatMap((p) => p.latencies), parts.reduce((a, p) => a + p.seconds, 0), failed);
  const cpuUs = parts.reduce((a, p) => a + p.cpuUs * p.requests, 0) / Math.max(1, all.requests);
  const dbUs = parts.reduce((a, p) => a + p.dbUs * p.requests, 0) / Math.max(1, all.requests);
  return { ...all, cpuUs, dbUs };
}

/** Every field path of a JSON answer (`data.payment.id`), arrays by their first element. */
function fieldPaths(v: unknown, at = ''): string[] {
  if (Array.isArray(v)) return v.length ? fieldPaths(v[0], `${at}[]`) : [at];
  if (v === null || typeof v !== 'object') return [at];
  return Object.entries(v).flatMap(([k, x]) => [`${at}${at ? '.' : ''}${k}`, ...fieldPaths(x, `${at}${at ? '.' : ''}${k}`)]);
}

/** Whether the two servers answered a route with the same body fields (and, for reads, headers): the bare limit is meant to do the same work. */
function answerDifference(targets: Target[], name: string): string {
  const [bare, chaingate] = (['bare', 'chaingate'] as const).map((n) => {
    const t = targets.find((x) => x.name === n)!;
    const body = t.answers.get(name);
    return new Set([...(body === undefined ? [] : fieldPaths(JSON.parse(body)).filter(Boolean)), ...(t.headers.get(name) ?? []).map((h) => `header ${h}`)]);
  }) as [Set<string>, Set<string>];
  const onlyChaingate = [...chaingate].filter((f) => !bare.has(f));
  const onlyBare = [...bare].filter((f) => !chaingate.has(f));
  if (!onlyChaingate.length && !onlyBare.length) {
    const headers = [...bare].filter((f) => f.startsWith('header ')).length;
    // Same fields may still differ in size (a longer list of offered coins): the bytes each server wrote.
    const bytes = (['bare', 'chaingate'] as const).map((n) => Buffer.byteLength(targets.find((x) => x.name === n)!.answers.get(name) ?? '')).join(' / ');
    return `the same ${bare.size - headers} fields${headers ? ` and ${headers} headers` : ''}, bodies of ${bytes} bytes`;
  }
  return [onlyChaingate.length ? `only chaingate's: ${onlyChaingate.join(', ')}` : '', onlyBare.length ? `only the bare server's: ${onlyBare.join(', ')}` : ''].filter(Boolean).join('; ');
}

async function sideBySide(dialect: DialectName): Promise<void> {
  const names: Target['name'][] = flags.only ? [flags.only as Target['name']] : ['bare', 'chaingate'];
  if (flags.limiter && !names.includes('limited')) names.push('limited');
  const targets: Target[] = [];
  for (const name of names) targets.push(await startTarget(name, dialect, Number(flags.pool)));
  try {
    console.log(`\n${dialect}: ${C} connections, ${DURATION_MS / 1000} s a route in ${ROUNDS} alternating slices after ${WARMUP_MS / 1000} s of warm-up`);
    for (const name of ['create', 'checkout', 'invoice', 'status']) {
      if (!ROUTES.has(name)) {
        // A route that a chosen one reads from (its invoices or payments) runs unmeasured first.
        if (NEEDED.has(name)) for (const t of targets) await measure(t, name, PREPARE_MS);
        continue;
      }
      // The servers take turns in ROUNDS slices (the order alternating), so a change in the box's
      // load during the run weighs on both alike.
      for (const t of targets) if (WARMUP_MS > 0) await measure(t, name, WARMUP_MS);
      const slices = new Map<Target['name'], Measured[]>();
      for (let round = 0; round < ROUNDS; round++) {
        for (const t of round % 2 ? [...targets].reverse() : targets) {
          slices.set(t.name, [...(slices.get(t.name) ?? []), await measure(t, name, DURATION_MS / ROUNDS)]);
        }
      }
      const results: Partial<Record<Target['name'], Measured>> = {};
      for (const [target, parts] of slices) results[target] = merged(parts);
      console.log(route(name, targets[0]!).title);
      // On PostgreSQL also the CPU its backends spent for the server's requests (same cores).
      const db = (m: Measured) => (dialect === 'postgresql' ? `  db ${m.dbUs.toFixed(0).padStart(4)} µs/req` : '');
      for (const t of targets) console.log(`  ${t.name.padEnd(10)} ${fmt(results[t.name]!)}  cpu ${results[t.name]!.cpuUs.toFixed(0).padStart(4)} µs/req${db(results[t.name]!)}`);
      if (results.bare && results.chaingate) {
        console.log(`  ratio      ${(results.chaingate.rps / results.bare.rps).toFixed(2)}x   cpu per request ${(results.bare.cpuUs / results.chaingate.cpuUs).toFixed(2)}x`);
        console.log(`  answers    ${answerDifference(targets, name)}`);
      }
      if (results.limited && results.chaingate) {
        const { chaingate, limited } = results;
        const withDb = dialect === 'postgresql' ? `   serve + db cpu ${((chaingate.cpuUs + chaingate.dbUs) / (limited.cpuUs + limited.dbUs)).toFixed(2)}x` : '';
        console.log(`  limiter    ${(limited.rps / chaingate.rps).toFixed(2)}x of chaingate without limits   cpu per request ${(chaingate.cpuUs / limited.cpuUs).toFixed(2)}x${withDb}`);
      }
    }
  } finally {
    for (const t of targets) {
      await t.stop();
      await t.tdb.drop();
    }
  }
}

for (const dialect of DIALECT_LIST) {
  if (flags.rss) await rssRun(dialect, Number(flags.rss));
  else await sideBySide(dialect);
}
