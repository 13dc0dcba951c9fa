import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/store/orm.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { createSecretBox } from '../../src/domain/secret-box.ts';
import { spawn } from 'node:child_process';
import { HDNodeWallet, Mnemonic } from 'ethers';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { trackChild } from '../helpers/children.ts';
import { createTestDatabase, skipUnless } from '../helpers/databases.ts';

function tempSqlite(t: { after(fn: () => void): void }): { url: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cg-cli-'));
  mkdirSync(join(dir, 'data'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return { url: `sqlite:${join(dir, 'data', 'chaingate.db')}`, dir };
}

describe('chaingate CLI on SQLite', () => {
  test('merchant create --json prints id, name, a 64-hex apiKey and the secret once; master key is generated 0600', async (t) => {
    const { url, dir } = tempSqlite(t);
    const res = await runCli(['merchant', 'create', '--name', 'Acme', '--webhook-url', 'https://shop.example/hooks', '--chains', 'ethereum,tron', '--json'], { CHAINGATE_DATABASE_URL: url });
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout) as Record<string, unknown>;
    assert.match(String(out.id), /^[a-z0-9]{20,32}$/);
    assert.equal(out.name, 'Acme');
    assert.match(String(out.apiKey), /^[0-9a-f]{64}$/);
    assert.match(String(out.apiSecret), /^[0-9a-f]{64}$/);
    assert.equal(out.webhookUrl, 'https://shop.example/hooks');
    assert.equal(out.active, true);
    assert.deepEqual(out.acceptedChains, ['ethereum', 'tron']);
    const keyFile = join(dir, 'data', 'master.key');
    assert.equal(statSync(keyFile).mode & 0o777, 0o600);
    assert.match(res.stderr, /generated a new master key/);
    assert.ok(!res.stderr.includes(String(out.apiSecret)), 'the secret is never logged');

    // The database holds ciphertext only, decryptable with the generated key.
    const db = await openDatabase(url);
    t.after(() => db.close());
    const row = await db.em().findOneOrFail(MerchantPoint, { id: String(out.id) });
    assert.ok(!row.apiSecretEnc.includes(String(out.apiSecret)));
    assert.equal(createSecretBox(readFileSync(keyFile, 'utf8').trim()).open(row.apiSecretEnc, row.id), out.apiSecret);

    const list = await runCli(['merchant', 'list', '--json'], { CHAINGATE_DATABASE_URL: url });
    assert.equal(list.code, 0, list.stderr);
    const listed = JSON.parse(list.stdout) as { id: string; apiSecret?: string }[];
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.id, out.id);
    assert.equal(listed[0]!.apiSecret, undefined);
    const human = await runCli(['merchant', 'list'], { CHAINGATE_DATABASE_URL: url });
    assert.match(human.stdout, /Acme/);
  });

  test('show, update, disable, enable and secrets rotate', async (t) => {
    const { url, dir } = tempSqlite(t);
    const env = { CHAINGATE_DATABASE_URL: url };
    const created = JSON.parse((await runCli(['merchant', 'create', '--name', 'Shop', '--json'], env)).stdout) as { id: string; apiSecret: string };

    const shown = await runCli(['merchant', 'show', created.id, '--json'], env);
    assert.equal(JSON.parse(shown.stdout).name, 'Shop');

    const upd = await runCli(['merchant', 'update', created.id, '--name', 'Shop 2', '--webhook-url', 'https://x.example/h', '--json'], env);
    assert.equal(upd.code, 0, upd.stderr);
    assert.equal(JSON.parse(upd.stdout).name, 'Shop 2');
    assert.equal(JSON.parse(upd.stdout).webhookUrl, 'https://x.example/h');
    const noHook = await runCli(['merchant', 'update', created.id, '--no-webhook', '--json'], env);
    assert.equal(JSON.parse(noHook.stdout).webhookUrl, null);

    const off = await runCli(['merchant', 'disable', created.id, '--json'], env);
    assert.equal(JSON.parse(off.stdout).active, false);
    const on = await runCli(['merchant', 'enable', created.id, '--json'], env);
    assert.equal(JSON.parse(on.stdout).active, true);

    const rotated = await runCli(['secrets', 'rotate', created.id, '--json'], env);
    assert.equal(rotated.code, 0, rotated.stderr);
    const fresh = JSON.parse(rotated.stdout) as { apiSecret: string };
    assert.match(fresh.apiSecret, /^[0-9a-f]{64}$/);
    assert.notEqual(fresh.apiSecret, created.apiSecret);
    const db = await openDatabase(url);
    t.after(() => db.close());
    const row = await db.em().findOneOrFail(MerchantPoint, { id: created.id });
    const box = createSecretBox(readFileSync(join(dir, 'data', 'master.key'), 'utf8').trim());
    assert.equal(box.open(row.apiSecretEnc, row.id), fresh.apiSecret);
  });

  test('bad input exits 2 with a clear message', async (t) => {
    const { url } = tempSqlite(t);
    const env = { CHAINGATE_DATABASE_URL: url };
    assert.equal((await runCli(['migrate'], env)).code, 0, 'a database to look in');
    const unknown = await runCli(['merchant', 'show', 'nope'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no merchant point with id "nope"/);
    const badUrl = await runCli(['merchant', 'create', '--name', 'A', '--webhook-url', 'not a url'], env);
    assert.equal(badUrl.code, 2);
    assert.match(badUrl.stderr, /not an absolute URL/);
    const ftp = await runCli(['merchant', 'create', '--name', 'A', '--webhook-url', 'ftp://x.example/'], env);
    assert.equal(ftp.code, 2);
    const noName = await runCli(['merchant', 'create'], env);
    assert.equal(noName.code, 2);
    assert.match(noName.stderr, /required option '--name <name>' not specified/);
    const badChain = await runCli(['merchant', 'create', '--name', 'A', '--chains', 'dogecoin'], env);
    assert.equal(badChain.code, 2);
    assert.match(badChain.stderr, /unknown chain slug\(s\): dogecoin/);
    const rotateUnknown = await runCli(['secrets', 'rotate', 'missing'], env);
    assert.equal(rotateUnknown.code, 2);
    const badConfig = await runCli(['merchant', 'list'], { ...env, CHAINGATE_PORT: 'eighty' });
    assert.equal(badConfig.code, 2);
    assert.match(badConfig.stderr, /config error: server\.port: .*CHAINGATE_PORT/);
    const help = await runCli(['merchant', 'create', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /--webhook-url/);
  });

  test('migrate works on a sqlite: URL', async (t) => {
    const { url } = tempSqlite(t);
    const first = await runCli(['migrate', '--json'], { CHAINGATE_DATABASE_URL: url });
    assert.equal(first.code, 0, first.stderr);
    assert.ok((JSON.parse(first.stdout) as { applied: string[] }).applied.length >= 1);
    const status = await runCli(['migrate', '--status', '--json'], { CHAINGATE_DATABASE_URL: url });
    assert.deepEqual((JSON.parse(status.stdout) as { pending: string[] }).pending, []);
  });

  test('config check prints the effective config with secrets redacted', async () => {
    const res = await runCli(['config', 'check', '--json'], { CHAINGATE_MASTER_KEY: 'z'.repeat(48), CHAINGATE_PORT: '9999' });
    assert.equal(res.code, 0, res.stderr);
    const out = JSON.parse(res.stdout) as { config: { security: { masterKey: string }; server: { port: number } } };
    assert.equal(out.config.security.masterKey, '[redacted]');
    assert.equal(out.config.server.port, 9999);
    assert.ok(!res.stdout.includes('z'.repeat(48)));
  });
});

describe('chaingate CLI on PostgreSQL', { skip: await skipUnless('postgresql') }, () => {
  test('migrate works on a postgres:// URL; other commands refuse an unmigrated database', async (t) => {
    const tdb = await createTestDatabase('postgresql');
    t.after(() => tdb.drop());
    const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'p'.repeat(64) };
    const refused = await runCli(['merchant', 'list'], env);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /is not migrated .*run `chaingate migrate`/);
    const migrated = await runCli(['migrate', '--json'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.ok((JSON.parse(migrated.stdout) as { applied: string[] }).applied.length >= 1);
    const again = await runCli(['migrate', '--json'], env);
    assert.deepEqual((JSON.parse(again.stdout) as { applied: string[] }).applied, []);
    const created = await runCli(['merchant', 'create', '--name', 'PG', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.match(JSON.parse(created.stdout).apiKey, /^[0-9a-f]{64}$/);
  });

  test('wallets seed refreshes the planner statistics of the pool', async (t) => {
    const tdb = await createTestDatabase('postgresql', { migrated: true });
    t.after(() => tdb.drop());
    const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'p'.repeat(64) };
    const db = await openDatabase(tdb.url);
    t.after(() => db.close());
    const tuples = async () => Number((await db.em().execute<{ n: number }[]>(`select reltuples as n from pg_class where relname = 'wallet_address'`))[0]!.n);
    assert.equal(await tuples(), -1, 'never analyzed');
    const xpub = HDNodeWallet.fromMnemonic(Mnemonic.fromPhrase('test test test test test test test test test test test junk'), "m/44'/60'/0'").neuter().extendedKey;
    const seeded = await runCli(['wallets', 'seed', '--chain', 'ethereum', '--xpub', xpub, '--count', '120'], env);
    assert.equal(seeded.code, 0, seeded.stderr);
    assert.equal(await tuples(), 120);
  });

  test('a missing master key on PostgreSQL is a start-up error', async (t) => {
    const tdb = await createTestDatabase('postgresql', { migrated: true });
    t.after(() => tdb.drop());
    const res = await runCli(['merchant', 'list'], { CHAINGATE_DATABASE_URL: tdb.url });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /security\.masterKey: required with PostgreSQL/);
  });

  test('a wrong master key fails loudly', async (t) => {
    const tdb = await createTestDatabase('postgresql', { migrated: true });
    t.after(() => tdb.drop());
    const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'p'.repeat(64) };
    const created = JSON.parse((await runCli(['merchant', 'create', '--name', 'PG', '--json'], env)).stdout) as { id: string };
    const res = await runCli(['merchant', 'show', created.id], { ...env, CHAINGATE_MASTER_KEY: 'q'.repeat(64) });
    assert.equal(res.code, 2, 'a configuration error');
    assert.match(res.stderr, /encrypted under another master key .*the key from environment variable CHAINGATE_MASTER_KEY has id/);
  });
});

/** Every command a user can run: leaves, and groups that have an action of their own (devnet). */
function runnable(cmd: Command, path: string[] = []): { path: string; cmd: Command }[] {
  const out: { path: string; cmd: Command }[] = [];
  for (const sub of cmd.commands) {
    const subPath = [...path, sub.name()];
    const hasAction = (sub as unknown as { _actionHandler: unknown })._actionHandler != null;
    if (sub.commands.length === 0 || hasAction) out.push({ path: subPath.join(' '), cmd: sub });
    out.push(...runnable(sub, subPath));
  }
  return out;
}

describe('every command takes --json', () => {
  test('each command of the program lists --json in its help', async () => {
    const program = await buildProgram(['node', 'chaingate']);
    const commands = runnable(program);
    assert.ok(commands.length >= 20, commands.map((c) => c.path).join(', '));
    for (const name of ['serve', 'index', 'webhooks work', 'devnet', 'devnet pay', 'status', 'config check']) {
      assert.ok(commands.some((c) => c.path === name), `${name} is walked`);
    }
    const missing = commands.filter(({ cmd }) => !cmd.options.some((o) => o.long === '--json') || !cmd.helpInformation().includes('--json'));
    assert.deepEqual(missing.map((c) => c.path), [], 'commands without --json');
  });

  test('serve --json prints a JSON start-up line with its URLs and process id', async (t) => {
    const { url } = tempSqlite(t);
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAINGATE_')) base[k] = v;
    const child = spawn(process.execPath, [BIN, 'serve', '--json'], {
      env: { ...base, CHAINGATE_DATABASE_URL: url, CHAINGATE_PORT: '0', CHAINGATE_METRICS_PORT: '0', CHAINGATE_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    trackChild(child);
    const exited = new Promise((r) => child.once('exit', r));
    t.after(async () => {
      child.kill('SIGTERM');
      await exited;
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no start-up line: ${out}`)), 60_000);
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        if (out.includes('\n')) {
          clearTimeout(timer);
          resolve(out.split('\n')[0]!);
        }
      });
    });
    const startup = JSON.parse(line) as { listening: string; metricsUrl: string; database: string; pid: number };
    assert.match(startup.listening, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(startup.metricsUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(startup.database, url);
    assert.equal(startup.pid, child.pid);
  });
});
