import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, runCli } from '../helpers/cli.ts';
import { createTestDatabase } from '../helpers/databases.ts';
import { spawnServe } from '../helpers/serve-process.ts';

// A newcomer's first minutes: mistakes answered with one clear line before anything half-starts.

const OLD_NODE = '/usr/bin/node';

test('on a Node older than 22.17 every command stops at once with one line saying what is needed', { skip: !existsSync(OLD_NODE) && `${OLD_NODE} is not installed` }, () => {
  const version = spawnSync(OLD_NODE, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const [major, minor] = version.slice(1).split('.').map(Number) as [number, number];
  if (major > 22 || (major === 22 && minor >= 17)) return; // the machine's node is new enough: nothing to check
  const dir = mkdtempSync(join(tmpdir(), 'cg-old-'));
  const res = spawnSync(OLD_NODE, [BIN, 'serve'], { encoding: 'utf8', cwd: dir, env: { PATH: process.env.PATH } });
  assert.equal(res.status, 2, "the configuration exit code, which systemd does not restart (issue 42)");
  assert.equal(res.stderr.trim().split('\n').length, 1, res.stderr);
  assert.match(res.stderr, /needs Node\.js 22\.17 or later .* this is v\d+.*nvm install 24/);
  assert.equal(existsSync(join(dir, 'data')), false, 'nothing was written');
});

test('settings are checked before anything starts: a bad cron, a sqlite path in a missing directory, unknown coins', async (t) => {
  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const config = join(mkdtempSync(join(tmpdir(), 'cg-cfg-')), 'bad.json');
  writeFileSync(config, JSON.stringify({ webhooks: { retentionCron: '61 * * * *' } }));
  for (const args of [['config', 'check'], ['serve']]) {
    const res = await runCli(args, { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'a'.repeat(64), CHAINGATE_CONFIG: config });
    assert.equal(res.code, 2);
    assert.match(res.stderr, /webhooks\.retentionCron: must be a cron expression .* \(got "61 \* \* \* \*"\)/);
  }

  // Chains are resolved as serve resolves them: an address placeholder left in is named.
  writeFileSync(config, JSON.stringify({ chains: { ethereum: { mainnet: { paymentContract: '0x…' } } } }));
  const chain = await runCli(['config', 'check'], { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_CONFIG: config });
  assert.equal(chain.code, 2);
  assert.match(chain.stderr, /chains\.ethereum\.mainnet\.paymentContract: not an EVM address/);

  const missing = await runCli(['merchant', 'list'], { CHAINGATE_DATABASE_URL: 'sqlite:/nonexistent-dir-for-chaingate/x.db', CHAINGATE_MASTER_KEY: 'a'.repeat(64) });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /the directory \/nonexistent-dir-for-chaingate does not exist; create it first/);

  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'a'.repeat(64) };
  const coins = await runCli(['merchant', 'create', '--name', 'Shop', '--currencies', 'ethereum:USDT+DOGE'], env);
  assert.equal(coins.code, 2);
  assert.match(coins.stderr, /--currencies ethereum: unknown coin\(s\) DOGE \(ethereum carries ETH, USDT, USDC\)/);
  assert.equal((await runCli(['merchant', 'create', '--name', 'Shop', '--currencies', 'ethereum:usdt+ETH', '--json'], env)).code, 0);
});

test('serve warns at start-up that the static price table is not a market price', async (t) => {
  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const serve = await spawnServe({ CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'a'.repeat(64) });
  t.after(() => serve.stop());
  await new Promise((r) => setTimeout(r, 300));
  assert.match(serve.output(), /static rate table .* not market prices/);
});

test('serve logs one start-up summary of what buyers are offered and, grouped by reason, what not', async (t) => {
  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const config = join(mkdtempSync(join(tmpdir(), 'cg-cfg-')), 'two-chains.json');
  const off = ['polygon', 'bsc', 'arbitrum', 'optimism', 'base', 'avalanche', 'tron', 'solana', 'ton'];
  writeFileSync(config, JSON.stringify({ chains: Object.fromEntries(off.map((c) => [c, { enabled: false }])) }));
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'a'.repeat(64), CHAINGATE_CONFIG: config };
  const tooEager = join(mkdtempSync(join(tmpdir(), 'cg-cfg-')), 'stale.json');
  writeFileSync(tooEager, JSON.stringify({ checkout: { indexerStaleAfterSeconds: 2 } }));
  const refused = await runCli(['config', 'check'], { ...env, CHAINGATE_CONFIG: tooEager });
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /checkout\.indexerStaleAfterSeconds: .*10.* \(got 2\)/);
  const pool = join(mkdtempSync(join(tmpdir(), 'cg-pool-')), 'pool.txt');
  writeFileSync(pool, '0x1000000000000000000000000000000000000001\n');
  assert.equal((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', pool], env)).code, 0);
  const serve = await spawnServe(env);
  t.after(() => serve.stop());
  await new Promise((r) => setTimeout(r, 300));
  const lines = serve.output().split('\n').filter((l) => l.includes('offered'));
  assert.equal(lines.length, 1, serve.output());
  const summary = JSON.parse(lines[0]!) as { level: number; offered: string[]; notOffered: string[]; msg: string };
  assert.equal(summary.level, 40, 'a warning: something enabled is not offered');
  assert.deepEqual([summary.offered, summary.notOffered], [[], ['ethereum:MAINNET', 'bitcoin:MAINNET']]);
  assert.equal(summary.msg, 'offered to buyers: nothing; not offered: ethereum (no indexer); bitcoin (no free address, no indexer) — `chaingate status` says how to fix each');
});
