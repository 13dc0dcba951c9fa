import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ecc from '@bitcoinerlab/secp256k1';
import { BIP32Factory } from 'bip32';
import * as bitcoin from 'bitcoinjs-lib';
import { Mnemonic } from 'ethers';
import { getNetwork } from '../../src/chains/registry.ts';
import { loadConfig } from '../../src/config/load-config.ts';
import { deriveAddresses } from '../../src/families/derive.ts';
import { keyFingerprint } from '../../src/families/key-material.ts';
import { resolveChains } from '../../src/families/families.ts';
import { bitcoinSweepPlanner } from '../../src/families/bitcoin/sweep-plan.ts';
import type { SweepPlan } from '../../src/families/sweep.ts';
import { createLogger } from '../../src/logger.ts';
import { planId, writePlanFile } from '../../src/sweep/plan-file.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { startEsploraSim } from '../helpers/esplora-sim.ts';

// `chaingate sweep sign` runs on a machine with no network and no database (docs/sweeps.md#the-offline-machine).
// Proved on the real binary: under strace, the process (and any child) opens no socket other than
// AF_UNIX and connects nowhere, never opens the configuration file or the database it names (which
// is never created); and a module-load hook lists what it loaded: no store, daemon, indexer or
// chain client, and of the bitcoin family only its address rules, sweep-sign and sweep-verify.

bitcoin.initEccLib(ecc);
/** The repository's compiled code, as the module hook sees it. */
const DIST = new URL('../../dist/', import.meta.url).href;
const PHRASE = 'abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about';
const TPUB = BIP32Factory(ecc)
  .fromSeed(Buffer.from(Mnemonic.fromPhrase(PHRASE).computeSeed().slice(2), 'hex'), bitcoin.networks.testnet)
  .derivePath("m/84'/1'/0'")
  .neutered()
  .toBase58();
const COLD = bitcoin.payments.p2wpkh({ hash: Buffer.alloc(20, 0x42), network: bitcoin.networks.regtest }).address!;

/** A real plan, made in this process against the regtest simulator (the server's half). */
async function makePlan(dir: string): Promise<string> {
  const sim = await startEsploraSim();
  try {
    const pool = deriveAddresses({ family: 'bitcoin', testnet: true, network: 'REGTEST', xpub: TPUB, start: 0, count: 2 });
    sim.mine([[{ address: pool[0]!.address, sats: 50_000n }, { address: pool[1]!.address, sats: 30_000n }]]);
    const config = loadConfig({ env: {}, overrides: { chains: { bitcoin: { testnet: { rpcUrl: sim.url, network: 'REGTEST' } } } } }).config;
    const network = getNetwork(resolveChains(config.chains), 'bitcoin', true);
    const candidates = pool.map((a) => ({ address: a.address, derivationIndex: a.index, source: keyFingerprint(TPUB) }));
    const body = await bitcoinSweepPlanner.plan({ network, config, log: createLogger('silent'), candidates, to: COLD, feePayer: null, min: {} });
    const plan = { format: 'chaingate-sweep-plan/1', kind: 'sweep', chain: 'bitcoin', family: 'bitcoin', network: 'REGTEST', testnet: true, to: COLD, feePayer: null, createdAt: new Date().toISOString(), ...body } as Omit<SweepPlan, 'id'>;
    const path = join(dir, 'plan.json');
    writePlanFile(path, { ...plan, id: planId(plan) } as SweepPlan);
    return path;
  } finally {
    await sim.close();
  }
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, timeout: 120_000 }, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

test('sweep sign opens no network socket, reads no configuration or database, loads no store or chain client', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-offline-'));
  const planPath = await makePlan(dir);
  const seedFile = join(dir, 'seed.txt');
  writeFileSync(seedFile, PHRASE, { mode: 0o600 });
  chmodSync(seedFile, 0o600);
  // A configuration a server would have: the database it names must never be touched.
  mkdirSync(join(dir, 'db'));
  const dbFromEnv = join(dir, 'db', 'env.db');
  const dbFromFile = join(dir, 'db', 'file.db');
  const configFile = join(dir, 'chaingate.json');
  writeFileSync(configFile, JSON.stringify({ database: { url: `sqlite:${dbFromFile}` } }));
  const moduleLog = join(dir, 'modules.txt');
  const hook = join(dir, 'hook.mjs');
  writeFileSync(
    hook,
    `import { registerHooks } from 'node:module';\nimport { appendFileSync } from 'node:fs';\nregisterHooks({ load(url, context, next) { appendFileSync(${JSON.stringify(moduleLog)}, url + '\\n'); return next(url, context); } });\n`,
  );
  // dist/ is rebuilt first if stale, outside the traced run.
  assert.equal((await runCli(['--version'])).code, 0);

  const trace = join(dir, 'strace.txt');
  const signed = join(dir, 'signed.json');
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('CHAINGATE_') && k !== 'NODE_OPTIONS') base[k] = v;
  const env = { ...base, CHAINGATE_DATABASE_URL: `sqlite:${dbFromEnv}`, CHAINGATE_CONFIG: configFile, NODE_OPTIONS: `--import ${hook}` };
  const r = await run('strace', ['-f', '-qq', '-e', 'trace=socket,connect,openat', '-o', trace, process.execPath, BIN, 'sweep', 'sign', '--plan', planPath, '--out', signed, '--seed-file', seedFile, '--expect-to', (JSON.parse(readFileSync(planPath, 'utf8')) as { to: string }).to, '--yes', '--json'], env);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).transactions.length, 1);
  assert.ok(existsSync(signed));

  const calls = readFileSync(trace, 'utf8').split('\n');
  const sockets = calls.filter((l) => /\bsocket\(/.test(l));
  const connects = calls.filter((l) => /\bconnect\(/.test(l));
  assert.deepEqual(sockets.filter((l) => !/socket\(AF_UNIX\b/.test(l)), [], 'only AF_UNIX sockets, if any');
  assert.deepEqual(connects.filter((l) => !/\{sa_family=AF_UNIX\b/.test(l)), [], 'no connection but to a local socket, if any');
  const opened = calls.filter((l) => /\bopenat\(/.test(l));
  assert.ok(opened.some((l) => l.includes(planPath)), 'the trace sees file opens (the plan was read)');
  assert.deepEqual(opened.filter((l) => l.includes(configFile) || l.includes(join(dir, 'db'))), [], 'neither the configuration nor the database was opened');
  assert.equal(existsSync(dbFromEnv) || existsSync(dbFromFile), false, 'no database was created');

  const loaded = readFileSync(moduleLog, 'utf8')
    .split('\n')
    .filter((u) => u !== '');
  assert.ok(loaded.includes(`${DIST}families/bitcoin/sweep-sign.js`), 'the hook sees the modules (the signer was loaded)');
  assert.ok(loaded.includes(`${DIST}families/bitcoin/sweep-verify.js`), 'the signer reads the transactions with the offline verifier');
  const ours = (u: string) => (u.startsWith(DIST) ? u.slice(DIST.length) : null);
  const forbidden = loaded.filter((u) => {
    const path = ours(u);
    if (path !== null) {
      return (
        /^(db|daemon|indexer|store|app|webhooks|http)\//.test(path) ||
        /^config\/(master-key|database-url)\.js$/.test(path) ||
        /^families\/[a-z]+\/(connect|sweep-plan|sweep-send|sweep-api|bitcoin-source|esplora-fetcher|core-fetcher)\.js$/.test(path) ||
        /^families\/(http-client\.js|jsonrpc\/)/.test(path)
      );
    }
    return /\/node_modules\/(pg|pg-[a-z]+|better-sqlite3|@mikro-orm\/[a-z]+|kysely|fastify|undici)\//.test(u);
  });
  assert.deepEqual(forbidden, []);
});
