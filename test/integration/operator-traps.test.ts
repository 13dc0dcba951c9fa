import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, runCli, type CliResult } from '../helpers/cli.ts';
import { trackChild } from '../helpers/children.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { docFiles } from '../helpers/doc-examples.ts';
import { closedPort, eventually } from '../helpers/webhook-receiver.ts';
import { FAILURE_SEEN_WINDOW_MS, isFailingNow } from '../../src/store/indexer-cursor.ts';
import { loadConfig } from '../../src/config/load-config.ts';
import { resolveChains } from '../../src/families/families.ts';

// Issue 42: what an operator meets on a fresh machine, run as they would run it (the real
// bin/chaingate), with what they see checked: the exit code and the one line on stderr.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function freshDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'cg-ops-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function oneLine(res: CliResult, code: number, pattern: RegExp, what: string): string {
  assert.equal(res.code, code, `${what}: exit code (stderr: ${res.stderr})`);
  const lines = res.stderr.split('\n').filter((l) => l && !l.startsWith('chaingate: compiling'));
  assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${res.stderr}`);
  assert.match(lines[0]!, pattern, what);
  return lines[0]!;
}

/** The first line `bin/chaingate args…` prints on stdout, then SIGTERM; or its exit if it ends first. */
function firstLine(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ line: string | null; code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...cleanEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d));
  return new Promise((resolve) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        child.once('exit', () => resolve({ line: out.slice(0, nl), code: null, stderr: err }));
        child.kill('SIGTERM');
      }
    });
    child.once('exit', (code) => {
      if (!out.includes('\n')) resolve({ line: null, code, stderr: err });
    });
  });
}

function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CHAINGATE_') && k !== 'NODE_ENV') env[k] = v;
  return env;
}

describe('endpoint URLs are checked when the configuration loads (issue 42, item 2)', () => {
  test('config check and index refuse a malformed rpcUrl with exit 2, naming the key and the file', async (t) => {
    const dir = freshDir(t);
    const bad: [string, RegExp][] = [
      ['htp:/bad url', /must not contain spaces/],
      ['htp://node.example.com', /scheme htp is not http or https/],
      ['http:/node.example.com', /needs a host/],
    ];
    for (const [url, problem] of bad) {
      const file = join(dir, 'chaingate.yaml');
      writeFileSync(file, `chains:\n  ethereum:\n    mainnet:\n      rpcUrl: ${JSON.stringify(url)}\n`);
      const env = { CHAINGATE_CONFIG: file, CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'cg.db')}` };
      for (const args of [['config', 'check'], ['index', 'ethereum']]) {
        const line = oneLine(await runCli(args, env, { cwd: dir }), 2, problem, `${args.join(' ')} with rpcUrl ${url}`);
        assert.ok(line.startsWith('chaingate: config error: chains.ethereum.mainnet.rpcUrl: '), line);
        assert.ok(line.endsWith(`— from ${file}`), line);
      }
    }
    // The key behind a provider URL is not echoed when its neighbour is wrong.
    writeFileSync(join(dir, 'chaingate.yaml'), 'chains:\n  ethereum:\n    mainnet:\n      apiUrl: "ftp://node.example.com/v2/SECRETKEY"\n');
    const res = await runCli(['config', 'check'], { CHAINGATE_CONFIG: join(dir, 'chaingate.yaml') }, { cwd: dir });
    oneLine(res, 2, /apiUrl: scheme ftp is not http or https \(got "ftp:\/\/node\.example\.com\/…"\)/, 'apiUrl');
    assert.doesNotMatch(res.stderr, /SECRETKEY/);
  });

  test('a mainnet indexer without its own rpcUrl refuses to start and names the public endpoint', async (t) => {
    const dir = freshDir(t);
    const db = `sqlite:${join(dir, 'cg.db')}`;
    oneLine(
      await runCli(['index', 'ethereum'], { CHAINGATE_DATABASE_URL: db }, { cwd: dir }),
      2,
      /^chaingate: chains\.ethereum\.mainnet\.rpcUrl is not set: .*indexer\.allowPublicEndpoints: true to use the public endpoint https:\/\/ethereum-rpc\.publicnode\.com/,
      'no rpcUrl',
    );
    const allow = join(dir, 'allow.yaml');
    writeFileSync(allow, 'indexer:\n  allowPublicEndpoints: true\n');
    oneLine(
      await runCli(['index', 'ethereum'], { CHAINGATE_DATABASE_URL: db, CHAINGATE_CONFIG: allow, NODE_ENV: 'production' }, { cwd: dir }),
      2,
      /^chaingate: chains\.ethereum\.mainnet\.rpcUrl is not set, and under NODE_ENV=production every indexer needs an endpoint of its own \(without one it would use the public endpoint https:\/\/ethereum-rpc\.publicnode\.com\)$/,
      'production ignores allowPublicEndpoints',
    );
    oneLine(
      await runCli(['index', 'ethereum', '--testnet'], { CHAINGATE_DATABASE_URL: db, NODE_ENV: 'production' }, { cwd: dir }),
      2,
      /chains\.ethereum\.testnet\.rpcUrl is not set, and under NODE_ENV=production/,
      'production: testnets too',
    );
    // Chosen explicitly, it starts and says whose endpoint it uses (before it connects anywhere).
    const started = await firstLine(['index', 'ethereum', '--json'], { CHAINGATE_DATABASE_URL: db, CHAINGATE_CONFIG: allow }, dir);
    assert.deepEqual(JSON.parse(started.line ?? 'null')?.indexing, { chain: 'ethereum', network: 'MAINNET', testnet: false, endpoint: 'https://ethereum-rpc.publicnode.com', publicEndpoint: true }, started.stderr);
    const testnet = await firstLine(['index', 'ethereum', '--testnet'], { CHAINGATE_DATABASE_URL: db }, dir);
    assert.match(testnet.line ?? '', /^indexing ethereum SEPOLIA via https:\/\/ethereum-sepolia-rpc\.publicnode\.com \(the public default endpoint: no rpcUrl is set\) \(pid \d+\)$/, testnet.stderr);
  });
});

describe('an unreachable PostgreSQL is exit 2 with its URL and a hint (issue 42, item 3)', () => {
  test('serve, index, migrate, webhooks work and the CLI commands say where and what to check', async (t) => {
    const dir = freshDir(t);
    const port = await closedPort();
    const url = `postgres://chaingate:s3cret-pw@127.0.0.1:${port}/chaingate`;
    const env = { CHAINGATE_DATABASE_URL: url, CHAINGATE_MASTER_KEY: randomBytes(32).toString('hex') };
    const commands = [['serve'], ['index', 'ethereum', '--testnet'], ['migrate'], ['migrate', '--create'], ['webhooks', 'work'], ['status'], ['merchant', 'list']];
    const results = await Promise.all(commands.map((args) => runCli(args, env, { cwd: dir })));
    results.forEach((res, i) => {
      const line = oneLine(res, 2, /^chaingate: cannot connect to PostgreSQL at /, commands[i]!.join(' '));
      assert.ok(line.includes(`postgres://chaingate:***@127.0.0.1:${port}/chaingate (from CHAINGATE_DATABASE_URL)`), line);
      assert.match(line, /ECONNREFUSED.*is PostgreSQL running\? \(pg_ctlcluster .* start/, line);
      assert.doesNotMatch(res.stderr, /s3cret-pw/);
    });
  });
});

describe('a stopped indexer is STOPPED, not FAILING forever (issue 42, item 6)', () => {
  test('failing while it retries; SIGTERM: status says STOPPED with its last error, and pools use the network names', async (t) => {
    const dir = freshDir(t);
    const port = await closedPort();
    const config = join(dir, 'chaingate.yaml');
    writeFileSync(config, `chains:\n  ethereum:\n    testnet:\n      rpcUrl: http://127.0.0.1:${port}\n`);
    const env = { CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'cg.db')}`, CHAINGATE_CONFIG: config, CHAINGATE_LOG_LEVEL: 'warn' };
    const addresses = join(dir, 'pool.txt');
    writeFileSync(addresses, '0x3000000000000000000000000000000000000001\n');
    assert.equal((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--testnet', '--file', addresses], env, { cwd: dir })).code, 0);

    const child = spawn(process.execPath, [BIN, 'index', 'ethereum', '--testnet'], { cwd: dir, env: { ...cleanEnv(), ...env }, stdio: 'ignore' });
    trackChild(child);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    type Report = { indexers: { chain: string; network: string; failing: boolean; running: boolean; lastError: string | null }[]; pools: { chain: string; network: string }[] };
    const report = async () => JSON.parse((await runCli(['status', '--json'], env, { cwd: dir })).stdout) as Report;
    const failing = await eventually(async () => {
      const r = await report();
      return r.indexers.find((i) => i.chain === 'ethereum' && i.failing) ? r : undefined;
    }, 30_000, 200);
    assert.deepEqual(failing.pools.map((p) => [p.chain, p.network]), [['ethereum', 'SEPOLIA']], 'a pool is named like its indexer');

    child.kill('SIGTERM');
    assert.equal(await exited, 0, 'a SIGTERM while connecting is a clean stop');
    const after = (await report()).indexers.find((i) => i.chain === 'ethereum')!;
    assert.deepEqual([after.network, after.failing, after.running], ['SEPOLIA', false, false]);
    assert.match(after.lastError ?? '', /ECONNREFUSED/, 'its last error is kept');
    const human = (await runCli(['status'], env, { cwd: dir })).stdout;
    assert.match(human, /ethereum\s+SEPOLIA\s+STOPPED/);
    assert.match(human, /stopped; its last error \(\d+ s ago\): .*ECONNREFUSED/);
    assert.doesNotMatch(human, /FAILING|failing since/);
    assert.match(human, /wallet pools\n.*\nethereum\s+SEPOLIA\s+1/);
  });

  test('isFailingNow(): a lease, or a failure recorded within two minutes; a killed process ages out', () => {
    const now = new Date('2026-01-01T00:10:00Z');
    const base = { lastError: 'x', leaseOwner: null, leaseUntil: null, lastErrorSeenAt: null };
    assert.equal(isFailingNow({ ...base, lastErrorSeenAt: new Date(now.getTime() - 30_000) }, now), true, 'connecting, retrying');
    assert.equal(isFailingNow({ ...base, lastErrorSeenAt: new Date(now.getTime() - FAILURE_SEEN_WINDOW_MS - 1) }, now), false, 'killed: nothing recorded since');
    assert.equal(isFailingNow({ ...base, leaseOwner: 'p', leaseUntil: new Date(now.getTime() + 1000) }, now), true, 'holds the lease');
    assert.equal(isFailingNow({ ...base, leaseOwner: 'p', leaseUntil: new Date(now.getTime() - 1000) }, now), false, 'its lease lapsed');
    assert.equal(isFailingNow({ ...base, lastError: null, leaseOwner: 'p', leaseUntil: new Date(now.getTime() + 1000) }, now), false);
  });
});

test('eip7702 can be turned off per EVM network, a DEVNET included; other families refuse the key (issue 42, item 4)', () => {
  const resolve = (chains: Record<string, unknown>) => resolveChains(loadConfig({ env: {}, overrides: { chains } }).config.chains);
  const devnet = { network: 'DEVNET', rpcUrl: 'http://127.0.0.1:8545' };
  assert.equal(resolve({ ethereum: { testnet: devnet } }).chains.ethereum.testnet.eip7702, true, "a DEVNET inherits Sepolia's");
  assert.equal(resolve({ ethereum: { testnet: { ...devnet, eip7702: false } } }).chains.ethereum.testnet.eip7702, false);
  assert.equal(resolve({ avalanche: { mainnet: { eip7702: true } } }).chains.avalanche.mainnet.eip7702, true);
  assert.throws(() => resolve({ tron: { mainnet: { eip7702: false } } }), /chains\.tron\.mainnet\.eip7702: EIP-7702 is an EVM feature/);
});

test('npm run demo twice: one demo merchant, two invoices, and a different account on every EVM chain (issue 42, item 6)', async (t) => {
  const dir = freshDir(t);
  const env = { ...cleanEnv(), CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'demo.db')}` };
  const demo = () =>
    new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--import', 'tsx', 'scripts/demo.ts'], { cwd: ROOT, env, timeout: 120_000 }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout))),
    );
  const first = await demo();
  const second = await demo();
  const invoiceOf = (printed: string) => /open http:\/\/\S+\/i\/(\w+)/.exec(printed)?.[1];
  assert.ok(invoiceOf(first) && invoiceOf(second) && invoiceOf(first) !== invoiceOf(second), 'each run prints a fresh invoice');
  const cliEnv = { CHAINGATE_DATABASE_URL: env.CHAINGATE_DATABASE_URL };
  const merchants = JSON.parse((await runCli(['merchant', 'list', '--json'], cliEnv, { cwd: dir })).stdout) as { name: string }[];
  assert.deepEqual(merchants.map((m) => m.name), ['Demo Coffee Roasters']);
  const firstAddress = async (chain: string) => {
    const res = await runCli(['wallets', 'list', '--addresses', '--chain', chain, '--limit', '1', '--json'], cliEnv, { cwd: dir });
    const rows = JSON.parse(res.stdout) as { addresses?: { address: string }[] } | { address: string }[];
    const list = Array.isArray(rows) ? rows : (rows.addresses ?? []);
    return list[0]?.address;
  };
  const evm = ['ethereum', 'polygon', 'bsc', 'arbitrum', 'optimism', 'base', 'avalanche'];
  const shown = await Promise.all(evm.map(firstAddress));
  assert.ok(shown.every(Boolean), JSON.stringify(shown));
  assert.equal(new Set(shown).size, evm.length, `one account per EVM chain: ${shown.join(', ')}`);
});

test('the docs never say a bare `npx tsc`: in a folder without TypeScript it runs the unrelated "tsc" package (issue 42, item 6)', () => {
  const bare = docFiles(ROOT).filter((file) => /npx tsc\b/.test(readFileSync(join(ROOT, file), 'utf8')));
  assert.deepEqual(bare, [], 'use `npx -p typescript tsc …`');
  assert.match(readFileSync(join(ROOT, 'docs/api.md'), 'utf8'), /npx -p typescript tsc --module es2022 --target es2022 --noCheck sign-request\.ts/);
});

test('chaingate invoice create: a signed test invoice from the command line, its page served (issue 42, item 6)', async (t) => {
  const dir = freshDir(t);
  const env = { CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'cg.db')}`, CHAINGATE_MASTER_KEY: 'c'.repeat(64) };
  const shop = JSON.parse((await runCli(['merchant', 'create', '--name', 'CLI Shop', '--json'], env, { cwd: dir })).stdout) as { id: string };
  // No serve yet: one line saying so.
  const down = `http://127.0.0.1:${await closedPort()}`;
  oneLine(await runCli(['invoice', 'create', '--amount', '2500', '--url', down], env, { cwd: dir }), 2, new RegExp(`^chaingate: cannot reach serve at ${down} .*is \`chaingate serve\` running`), 'serve down');
  oneLine(await runCli(['invoice', 'create', '--amount', '25.00'], env, { cwd: dir }), 2, /--amount must be a whole number of minor units/, 'a decimal amount');

  const serve = await spawnServe(env);
  t.after(() => serve.stop());
  const res = await runCli(['invoice', 'create', '--amount', '2500', '--currency', 'usd', '--order-id', 'order-42', '--json', '--url', serve.url], env, { cwd: dir });
  assert.equal(res.code, 0, res.stderr);
  const inv = JSON.parse(res.stdout) as { id: string; status: string; amount: string; currency: string; orderId: string; merchant: string; checkoutUrl: string };
  assert.deepEqual([inv.status, inv.amount, inv.currency, inv.orderId, inv.merchant], ['OPEN', '2500', 'USD', 'order-42', shop.id]);
  assert.equal(inv.checkoutUrl, `${serve.url}/i/${inv.id}`);
  assert.equal((await fetch(inv.checkoutUrl)).status, 200, 'the page it prints is served');
  // The API refuses what the specification refuses, and the command says it in one line.
  oneLine(await runCli(['invoice', 'create', '--amount', '2500', '--currency', 'XYZ', '--url', serve.url], env, { cwd: dir }), 2, /^chaingate: VALIDATION_ERROR: .*--currency: XYZ is not a supported ISO 4217 currency/, 'unknown currency');
  // Two points: which one is the operator's choice.
  await runCli(['merchant', 'create', '--name', 'Second Shop'], env, { cwd: dir });
  oneLine(await runCli(['invoice', 'create', '--amount', '100', '--url', serve.url], env, { cwd: dir }), 2, /2 active merchant points: choose one with --merchant ID/, 'two merchants');
});

test('config check names each enabled mainnet without an endpoint of its own, and what its indexer would do', async (t) => {
  const dir = freshDir(t);
  const file = join(dir, 'chaingate.yaml');
  writeFileSync(file, 'chains:\n  ethereum:\n    mainnet:\n      rpcUrl: https://eth.example.com/v2/KEY\n  polygon: { enabled: false }\nindexer:\n  allowPublicEndpoints: true\n');
  const res = await runCli(['config', 'check', '--json'], { CHAINGATE_CONFIG: file }, { cwd: dir });
  assert.equal(res.code, 0, res.stderr);
  const { publicEndpoints } = JSON.parse(res.stdout) as { publicEndpoints: { setting: string; publicEndpoint: string; index: string }[] };
  const settings = publicEndpoints.map((p) => p.setting);
  assert.ok(!settings.includes('chains.ethereum.mainnet.rpcUrl') && !settings.includes('chains.polygon.mainnet.rpcUrl'), settings.join(', '));
  assert.deepEqual(publicEndpoints.find((p) => p.setting === 'chains.bsc.mainnet.rpcUrl'), { setting: 'chains.bsc.mainnet.rpcUrl', publicEndpoint: 'https://bsc-rpc.publicnode.com', index: 'uses the public endpoint' });
  const text = await runCli(['config', 'check'], { CHAINGATE_CONFIG: file, NODE_ENV: 'production' }, { cwd: dir });
  assert.match(text.stdout, /^# chains\.bsc\.mainnet\.rpcUrl is not set: `index` refuses to start \(https:\/\/bsc-rpc\.publicnode\.com\)$/m);
});
