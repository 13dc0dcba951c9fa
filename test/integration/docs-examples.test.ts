import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { stripTypeScriptTypes } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HDNodeWallet } from 'ethers';
import { loadConfig } from '../../src/config/load-config.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { openDatabase } from '../../src/store/orm.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { trackChild } from '../helpers/children.ts';
import { docBlocks, RUNNABLE_LANGS, runShell, type DocBlock } from '../helpers/doc-examples.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { closedPort } from '../helpers/webhook-receiver.ts';
import { resolveChains } from '../../src/families/families.ts';

// The docs' examples run as written (README.md and docs/*.md): JSON examples parse, YAML config
// snippets pass `config check`, and the shell and code examples that can run on one machine run
// (on a temporary SQLite database and a free port). The others carry `<!-- not run: why -->`.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const blocks = docBlocks(ROOT);
const where = (b: DocBlock) => `${b.file}:${b.line}`;
const runnable = blocks.filter((b) => RUNNABLE_LANGS.has(b.lang) && b.notRun === null);

/** The shell and code examples this file runs, each by the text that starts it. */
const RUN_HERE: Record<string, (b: DocBlock) => string | null> = {
  'hosted-page demo': (b) => (b.file === 'docs/hosted-page.md' && b.lang === 'sh' ? where(b) : null),
  'xpub derivation': (b) => (b.file === 'docs/wallets.md' && b.body.startsWith('read -rs PHRASE') ? where(b) : null),
  'signing example': (b) => (b.file === 'docs/api.md' && b.lang === 'js' && b.body.includes("from './sdk/sign-request.js'") ? where(b) : null),
};

function find(name: string): DocBlock {
  const hits = runnable.filter((b) => RUN_HERE[name]!(b) !== null);
  assert.equal(hits.length, 1, `exactly one ${name} block (found ${hits.map(where).join(', ') || 'none'})`);
  return hits[0]!;
}


/** A sandbox: a temp dir, a `chaingate` on PATH, a fresh SQLite database, a free port. */
async function sandbox(t: { after(fn: () => void): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'cg-docs-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(join(bin, 'chaingate'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(bin, 'chaingate'), 0o755);
  const port = await closedPort();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAINGATE_') && k !== 'NODE_TEST_CONTEXT') env[k] = v;
  Object.assign(env, {
    PATH: `${bin}:${process.env.PATH}`,
    CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'chaingate.db')}`,
    CHAINGATE_MASTER_KEY: 'd'.repeat(64),
    CHAINGATE_PORT: String(port),
    CHAINGATE_METRICS_PORT: '0',
    CHAINGATE_LOG_LEVEL: 'warn',
  });
  /** The example as written, with /tmp/ and port 8080 moved into the sandbox. */
  const localise = (script: string) => script.replaceAll('/tmp/', `${dir}/`).replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`);
  return { dir, port, env, localise };
}

describe('the docs examples run as written', () => {
  test('every runnable block is run here or says why not', () => {
    const claimed = new Set(Object.keys(RUN_HERE).map((name) => where(find(name))));
    const unhandled = runnable.filter((b) => (b.lang === 'sh' || b.lang === 'bash' || b.lang === 'js' || b.lang === 'ts') && !claimed.has(where(b)));
    assert.deepEqual(unhandled.map(where), [], 'shell and code blocks that are neither run by this test nor marked <!-- not run: why -->');
    for (const b of blocks.filter((x) => x.notRun !== null)) assert.ok(b.notRun!.length >= 8, `${where(b)}: say why it is not run`);
  });

  test('JSON examples parse', () => {
    const json = runnable.filter((b) => b.lang === 'json');
    assert.ok(json.length >= 20);
    for (const b of json) assert.doesNotThrow(() => JSON.parse(b.body), where(b));
  });

  test('YAML config snippets pass config check', () => {
    const yaml = runnable.filter((b) => b.lang === 'yaml');
    assert.ok(yaml.length >= 4);
    const dir = mkdtempSync(join(tmpdir(), 'cg-docs-yaml-'));
    try {
      for (const b of yaml) {
        const file = join(dir, `${b.file.replace(/\W/g, '_')}_${b.line}.yaml`);
        writeFileSync(file, b.body);
        assert.doesNotThrow(() => resolveChains(loadConfig({ env: { CHAINGATE_CONFIG: file } }).config.chains), where(b));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('docs/hosted-page.md: the demo invoice, from merchant create to an open page offering ethereum', async (t) => {
    const block = find('hosted-page demo');
    const box = await sandbox(t);
    const run = await runShell(box.localise(block.body), { cwd: ROOT, env: box.env });
    assert.equal(run.code, 0, `${where(block)}\n${run.stdout}\n${run.stderr}`);
    const url = new RegExp(`open (http://127\\.0\\.0\\.1:${box.port}/i/(\\w+))`).exec(run.stdout);
    assert.ok(url, run.stdout);
    // The page it printed: served again here (the example's serve ended with it), ethereum offered.
    const serve = await spawnServe({ ...box.env, CHAINGATE_CONFIG: join(box.dir, 'demo.yaml') });
    t.after(() => serve.stop());
    const read = (await (await fetch(`${serve.url}/checkout/api/v1/invoices/${url[2]}`)).json()) as { data: { availableBlockchains: string[] } };
    assert.deepEqual(read.data.availableBlockchains, ['ethereum']);
    assert.equal((await fetch(`${serve.url}/i/${url[2]}`)).status, 200);
  });

  test('docs/wallets.md: the xpub derivation prints both account keys', async (t) => {
    const block = find('xpub derivation');
    const box = await sandbox(t);
    const phrase = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
    const run = await runShell(block.body, { cwd: ROOT, env: box.env, stdin: `${phrase}\n` });
    assert.equal(run.code, 0, `${where(block)}\n${run.stderr}`);
    const lines = run.stdout.trim().split('\n');
    assert.equal(lines.length, 2, run.stdout);
    assert.match(lines[0]!, /^m\/44'\/60'\/0' xpub[1-9A-HJ-NP-Za-km-z]{100,}$/);
    assert.match(lines[1]!, /^m\/44'\/195'\/0' xpub/);
    // The first ethereum address of that key is the one the page says it is.
    const first = HDNodeWallet.fromExtendedKey(lines[0]!.split(' ')[1]!).deriveChild(0).deriveChild(0).address;
    assert.equal(first, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    assert.ok(readFileSync(join(ROOT, 'docs/wallets.md'), 'utf8').includes(first));
  });

  test('docs/api.md: the signing example against a real serve, refusing an under-paid payment', async (t) => {
    const block = find('signing example');
    const box = await sandbox(t);
    // As the page says: sign-request.ts saved as sdk/sign-request.js with the types removed, in an ESM project.
    const project = join(box.dir, 'merchant');
    mkdirSync(join(project, 'sdk'), { recursive: true });
    writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(project, 'sdk', 'sign-request.js'), stripTypeScriptTypes(readFileSync(join(ROOT, 'src/sdk/sign-request.ts'), 'utf8')));
    writeFileSync(join(project, 'sdk', 'settlement.js'), stripTypeScriptTypes(readFileSync(join(ROOT, 'src/sdk/settlement.ts'), 'utf8')));
    writeFileSync(join(project, 'example.js'), block.body);

    const env = { ...box.env, CHAINGATE_CONFIG: writeConfigFile({ checkout: { indexerStaleAfterSeconds: null } }) };
    const creds = JSON.parse((await runCli(['merchant', 'create', '--name', 'Docs Shop', '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
    const poolFile = join(box.dir, 'pool.txt');
    writeFileSync(poolFile, '0x3000000000000000000000000000000000000001\n');
    assert.equal((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', poolFile], env)).code, 0);
    const serve = await spawnServe(env);
    t.after(() => serve.stop());

    const child = spawn(process.execPath, ['example.js'], { cwd: project, env: { ...env, CHAINGATE_URL: serve.url, CHAINGATE_API_KEY: creds.apiKey, CHAINGATE_API_SECRET: creds.apiSecret }, stdio: ['ignore', 'pipe', 'pipe'] });
    trackChild(child);
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    t.after(() => void child.kill());

    // Once it has a payment, settle it as the indexer would, 24.5 of the 25 USDT asked: its next
    // poll sees COMPLETED (confirmations decide that, spec rule 10) and the example refuses to fulfil.
    const deadline = Date.now() + 30_000;
    while (!/send \S+ USDT to 0x3000/.test(out)) {
      assert.ok(Date.now() < deadline, out);
      await new Promise((r) => setTimeout(r, 200));
    }
    const db = await openDatabase(box.env.CHAINGATE_DATABASE_URL!);
    try {
      const now = new Date();
      await db.em().nativeUpdate(Payment, {}, { status: 'COMPLETED', confirmations: 12, receivedAmount: '24.5', completedAt: now });
      await db.em().nativeUpdate(Invoice, {}, { status: 'PAID', paidAt: now });
    } finally {
      await db.close();
    }
    assert.equal(await exited, 0, out);
    assert.match(out, /^invoice \w+ INV-\d{6}-\d{3}[A-Z] OPEN\n/);
    assert.match(out, /COMPLETED 12\/12\nshort by 0\.5 USDT \(24\.5 of 25\): hold order-1042 and contact the buyer\n$/);
    assert.doesNotMatch(out, /fulfil order-1042/);
  });
});
