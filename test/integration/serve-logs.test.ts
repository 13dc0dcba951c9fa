import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, runCli } from '../helpers/cli.ts';
import { trackChild } from '../helpers/children.ts';
import { spawnServe } from '../helpers/serve-process.ts';

// Logs for people: `npm start` on a terminal prints readable lines and one summary of what buyers
// are offered (not a warning per chain); piped or redirected it prints JSON lines, as log
// collectors and the other tests expect; log.format (CHAINGATE_LOG_FORMAT) forces either.

const ANSI = /\u001b\[[0-9;]*m/g;
const PRETTY = /^\d\d:\d\d:\d\d (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/;
/** bin/chaingate's own line when it rebuilds dist/ from a newer src/ (a checkout being edited), not a log line. */
const REBUILD = /^chaingate: compiling /;

function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAINGATE_') && k !== 'NODE_TEST_CONTEXT' && k !== 'NO_COLOR') env[k] = v;
  return { ...env, CHAINGATE_PORT: '0', CHAINGATE_METRICS_PORT: '0', ...extra };
}

/** `chaingate serve` in a pseudo-terminal (util-linux `script`), in `cwd`, until it is serving; then Ctrl-C. */
async function serveOnTerminal(t: { after(fn: () => Promise<void> | void): void }, cwd: string, env: Record<string, string>): Promise<string> {
  const child = spawn('script', ['-qfec', `"${process.execPath}" "${BIN}" serve`, '/dev/null'], { cwd, env: cleanEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
  trackChild(child);
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const deadline = Date.now() + 60_000;
  while (!/is listening on http/.test(out)) {
    assert.ok(Date.now() < deadline && child.exitCode === null, `serve did not start on the terminal:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // Ctrl-C, typed into the terminal as a person would.
  child.stdin.write('\u0003');
  await exited;
  return out;
}

test('npm start on a terminal, first run: readable lines, one summary of what is offered and why not, no JSON', async (t) => {
  // A fresh folder, no configuration: the default ./data/chaingate.db and a generated master key.
  const cwd = mkdtempSync(join(tmpdir(), 'cg-logs-'));
  t.after(() => rmSync(cwd, { recursive: true, force: true }));
  const out = await serveOnTerminal(t, cwd, {});
  assert.match(out, /\u001b\[33mWARN /, 'levels in colour on a terminal');
  // The terminal echoes the Ctrl-C as ^C.
  const lines = out.replace(ANSI, '').split(/\r?\n/).map((l) => l.replace(/\r/g, '').replace(/^\^C/, '')).filter((l) => l.trim() !== '' && !REBUILD.test(l));
  for (const line of lines) assert.ok(PRETTY.test(line) || /^chaingate is listening on http:\/\/127\.0\.0\.1:\d+ \(Ctrl-C stops it\)$/.test(line), `not a readable line: ${line}\n${out}`);
  assert.ok(!lines.some((l) => l.startsWith('{')), 'no JSON on a terminal');
  const summary = lines.filter((l) => l.includes('offered'));
  assert.deepEqual(summary.map((l) => l.slice(9)), [
    'WARN  offered to buyers: nothing; not offered: ethereum, polygon, bsc, arbitrum, optimism, base, avalanche, bitcoin, tron, solana, ton (no free address, no indexer) — `chaingate status` says how to fix each',
  ]);
  assert.ok(lines.some((l) => /INFO {2}chaingate is serving url=http:\/\/127\.0\.0\.1:\d+ /.test(l)), out);
  assert.ok(lines.some((l) => /INFO {2}shutting down gracefully signal=SIGINT$/.test(l)), out);
  assert.ok(lines.length <= 12, `a short start-up (${lines.length} lines):\n${lines.join('\n')}`);
});

test('piped, serve logs JSON lines; log.format (CHAINGATE_LOG_FORMAT) forces readable lines or JSON', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cg-logs-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const env = { CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'x.db')}`, CHAINGATE_MASTER_KEY: 'a'.repeat(64), CHAINGATE_LOG_LEVEL: 'info' };

  const piped = await spawnServe(env);
  await piped.stop();
  const json = piped.output().split('\n').filter((l) => l.trim() !== '' && !REBUILD.test(l));
  for (const line of json) assert.doesNotThrow(() => JSON.parse(line), line);
  assert.ok(json.some((l) => (JSON.parse(l) as { msg?: string }).msg === 'chaingate is serving'));

  const pretty = await spawnServe({ ...env, CHAINGATE_LOG_FORMAT: 'pretty' });
  await pretty.stop();
  const lines = pretty.output().split('\n').filter((l) => l.trim() !== '' && !l.startsWith('{"listening"') && !REBUILD.test(l));
  for (const line of lines) assert.match(line, PRETTY);
  assert.doesNotMatch(pretty.output(), ANSI, 'no colour codes into a pipe');

  const terminalJson = await serveOnTerminal(t, dir, { ...env, CHAINGATE_LOG_FORMAT: 'json' });
  assert.match(terminalJson, /^\{"level":30,"time":\d+,"pid":\d+,"process":"serve"/m, 'JSON on a terminal when asked');

  const bad = await runCli(['config', 'check'], { ...env, CHAINGATE_LOG_FORMAT: 'xml' });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /log\.format: .*"auto".*"json".*"pretty".*CHAINGATE_LOG_FORMAT/);
});
