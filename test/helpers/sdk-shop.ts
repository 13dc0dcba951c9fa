import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signWebhookPayload, standardWebhookSignature } from '../../src/sdk/verify-webhook.ts';
import { trackChild } from './children.ts';
import { runCli } from './cli.ts';
import { createTestDatabase } from './databases.ts';
import { recordIndexerReport } from './indexer-report.ts';
import { writeConfigFile } from './indexer-process.ts';
import { spawnServe, type ServeProcess } from './serve-process.ts';

// A shop for the Python and PHP client tests: a real `chaingate serve` on SQLite with one merchant
// point, an ethereum pool (as if an indexer reported), and a webhook receiver written in the
// client's language, started as a child process, that serve delivers to.

type T = { after(fn: () => Promise<void> | void): void };

/** One line a language's webhook receiver prints per request it answered. */
export interface ReceiverLine {
  verdict: 'ok' | 'duplicate' | 'refused';
  reason?: string;
  eventId?: string;
  type?: string;
  decision?: { settlement: string; difference: string } | null;
  headers: Record<string, string>;
  /** base64 of the raw body received */
  body: string;
}

export interface Receiver {
  url: string;
  lines: ReceiverLine[];
  waitFor(n: number, timeoutMs?: number): Promise<ReceiverLine[]>;
}

export interface SdkShop {
  serve: ServeProcess;
  creds: { id: string; apiKey: string; apiSecret: string };
  receiver: Receiver;
  /** The environment a language script runs with: CHAINGATE_URL, _API_KEY, _API_SECRET. */
  scriptEnv: Record<string, string>;
}

/** A child process that prints JSON lines, the first of which is {"listening": url}. */
export async function startLineServer(t: T, command: string, args: string[], env: Record<string, string>): Promise<Receiver> {
  const child: ChildProcess = spawn(command, args, { env: { ...plainEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  t.after(() => {
    child.kill('SIGKILL');
  });
  const lines: ReceiverLine[] = [];
  const waiters: (() => void)[] = [];
  let stderr = '';
  let buffered = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} did not start:\n${stderr}`)), 15_000);
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code}:\n${stderr}`)));
    child.stdout!.on('data', (b: Buffer) => {
      buffered += b.toString();
      let nl = buffered.indexOf('\n');
      while (nl >= 0) {
        const line = JSON.parse(buffered.slice(0, nl)) as ReceiverLine & { listening?: string };
        buffered = buffered.slice(nl + 1);
        if (line.listening) {
          clearTimeout(timer);
          resolve(line.listening);
        } else {
          lines.push(line);
          for (const w of waiters.splice(0)) w();
        }
        nl = buffered.indexOf('\n');
      }
    });
  });
  return {
    url,
    lines,
    async waitFor(n, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (lines.length < n) {
        if (Date.now() > deadline) throw new Error(`expected ${n} receiver lines, got ${lines.length}:\n${stderr}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return lines;
    },
  };
}

export async function startSdkShop(t: T, receiverCommand: string, receiverArgs: string[]): Promise<SdkShop> {
  const tdb = await createTestDatabase('sqlite');
  t.after(() => tdb.drop());
  const config = writeConfigFile({ rateLimit: { enabled: false }, webhooks: { allowPrivateNetworks: true, pollIntervalMs: 50, retryScheduleSeconds: [1], retryJitter: 0, timeoutMs: 3000, leaseSeconds: 10 } });
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 's'.repeat(64), CHAINGATE_CONFIG: config };
  const made = await runCli(['merchant', 'create', '--name', 'SDK Shop', '--json'], env);
  assert.equal(made.code, 0, made.stderr);
  const creds = JSON.parse(made.stdout) as SdkShop['creds'];
  const pool = join(mkdtempSync(join(tmpdir(), 'cg-sdk-pool-')), 'pool.txt');
  writeFileSync(pool, ['0x3000000000000000000000000000000000000001', '0x3000000000000000000000000000000000000002'].join('\n'));
  assert.equal((await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', pool], env)).code, 0);
  await recordIndexerReport(tdb.url, 'ethereum'); // the gateway leases only on a chain an indexer reports for
  const receiver = await startLineServer(t, receiverCommand, receiverArgs, { CHAINGATE_API_SECRET: creds.apiSecret });
  const hooked = await runCli(['merchant', 'update', creds.id, '--webhook-url', receiver.url], env);
  assert.equal(hooked.code, 0, hooked.stderr);
  const serve = await spawnServe(env);
  t.after(() => serve.stop());
  return { serve, creds, receiver, scriptEnv: { CHAINGATE_URL: serve.url, CHAINGATE_API_KEY: creds.apiKey, CHAINGATE_API_SECRET: creds.apiSecret } };
}

/** The test process's environment without the test runner's and chaingate's variables. */
export function plainEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAINGATE_') && k !== 'NODE_TEST_CONTEXT' && k !== 'NODE_OPTIONS') env[k] = v;
  return env;
}

export interface ScriptRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end (at most timeoutMs) without blocking the event loop (serve's children keep running). */
export function runProgram(command: string, args: string[], env: Record<string, string> = {}, options: { cwd?: string; timeoutMs?: number } = {}): Promise<ScriptRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: { ...plainEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    trackChild(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The JSON lines of a walkthrough, by step name. */
export function stepsOf(run: ScriptRun): Record<string, Record<string, unknown>> {
  assert.equal(run.code, 0, run.stderr);
  return Object.fromEntries(
    run.stdout
      .trim()
      .split('\n')
      .map((l) => {
        const o = JSON.parse(l) as { step: string };
        return [o.step, o];
      }),
  ) as Record<string, Record<string, unknown>>;
}

/**
 * Re-sends a delivery the receiver got, as an attacker or a retry would: `body` as given, headers
 * re-made for `scheme` at time `t`, signed with `secret`.
 */
export async function postDelivery(url: string, body: Buffer, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const res = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body });
  return { status: res.status, text: await res.text() };
}

/** The chaingate scheme's headers for a body sent at t. */
export function chaingateHeaders(secret: string, eventId: string, t: number, body: Buffer): Record<string, string> {
  return { 'X-Webhook-Id': eventId, 'X-Webhook-Timestamp': String(t), 'X-Webhook-Signature': signWebhookPayload(secret, t, body) };
}

/** The Standard Webhooks headers for a body sent at t. */
export function standardHeaders(secret: string, eventId: string, t: number, body: Buffer): Record<string, string> {
  return { 'webhook-id': eventId, 'webhook-timestamp': String(t), 'webhook-signature': standardWebhookSignature(secret, eventId, t, body) };
}
