import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createChaingateClient } from '../../src/sdk/client.ts';
import { signWebhookPayload, standardWebhookSignature } from '../../src/sdk/verify-webhook.ts';
import { trackChild } from './children.ts';
import { runCli } from './cli.ts';
import { createTestDatabase } from './databases.ts';
import { recordIndexerReport } from './indexer-report.ts';
import { writeConfigFile } from './indexer-process.ts';
import { spawnServe, type ServeProcess } from './serve-process.ts';
import { closedPort } from './webhook-receiver.ts';

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
  /** What the receiver's process wrote to stderr so far (php -S: its access log and error_log). */
  serverOutput(): Promise<string>;
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
    serverOutput: async () => stderr,
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

/**
 * `php -S` serving one script on a free port; the script appends its JSON lines to the file named
 * by CHAINGATE_RECEIVER_LOG.
 */
export async function startPhpServer(t: T, php: string, script: string, env: Record<string, string>): Promise<Receiver> {
  const port = await closedPort();
  const log = join(mkdtempSync(join(tmpdir(), 'cg-php-rx-')), 'receiver.jsonl');
  writeFileSync(log, '');
  const child = spawn(php, ['-S', `127.0.0.1:${port}`, script], { env: { ...plainEnv(), ...env, CHAINGATE_RECEIVER_LOG: log }, stdio: ['ignore', 'ignore', 'pipe'] });
  trackChild(child);
  t.after(() => {
    child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  const url = `http://127.0.0.1:${port}/hooks`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await fetch(url, { method: 'OPTIONS' }).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`php -S did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  writeFileSync(log, ''); // forget the probe
  const lines: ReceiverLine[] = [];
  const read = () => {
    const all = readFileSync(log, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as ReceiverLine);
    lines.splice(0, lines.length, ...all);
    return lines;
  };
  return {
    url,
    lines,
    async serverOutput() {
      await new Promise((r) => setTimeout(r, 100)); // php -S writes its log after answering
      return stderr;
    },
    async waitFor(n, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (read().length < n) {
        if (Date.now() > until) throw new Error(`expected ${n} receiver lines, got ${lines.length}:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return lines;
    },
  };
}

/** A receiver of the client's language for a merchant point's apiSecret. */
export type StartReceiver = (t: T, apiSecret: string) => Promise<Receiver>;

export async function startSdkShop(t: T, startReceiver: StartReceiver): Promise<SdkShop> {
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
  const receiver = await startReceiver(t, creds.apiSecret);
  const hooked = await runCli(['merchant', 'update', creds.id, '--webhook-url', receiver.url], env);
  assert.equal(hooked.code, 0, hooked.stderr);
  const serve = await spawnServe(env);
  t.after(async () => {
    await serve.stop();
  });
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

/**
 * What a language's walkthrough (sdk/<lang>/examples) printed, held to what the server holds (read
 * with the TypeScript client).
 */
export async function checkWalkthrough(shop: SdkShop, steps: Record<string, Record<string, unknown>>): Promise<void> {
  const ts = createChaingateClient({ baseUrl: shop.serve.url, apiKey: shop.creds.apiKey, apiSecret: shop.creds.apiSecret });

  // Writes and reads, checked against what the server holds (read with the TypeScript client).
  const created = steps.created!;
  assert.deepEqual([created.status, created.amount, created.description, created.metadata], ['OPEN', '2500', 'Zwei Becher ☕', { cart: 'c-77' }]);
  assert.equal(steps.retried!.id, created.id, 'the same Idempotency-Key gives back the first invoice');
  const replayed = steps.replayed!;
  assert.deepEqual([replayed.sameBytes, replayed.firstReplayed, replayed.secondReplayed, replayed.status], [true, false, true, 201], 'a replay is the stored answer, byte for byte');
  assert.deepEqual([steps.invoiceStatus!.status, steps.invoiceStatus!.paymentId], ['OPEN', null]);
  const checkout = steps.checkout!;
  assert.match(String(checkout.address), /^0x3000/);
  assert.equal(checkout.invoiceStatus, 'PAYMENT_PENDING');
  assert.deepEqual([steps.invoice!.status, steps.invoice!.payments], ['PAYMENT_PENDING', 1]);
  assert.deepEqual([steps.listed!.total, steps.listed!.ids], [1, [checkout.paymentId]]);
  const payment = await ts.getPayment(String(checkout.paymentId));
  assert.deepEqual([steps.payment!.status, steps.payment!.amount, steps.payment!.receivedAmount], [payment.status, payment.amount, payment.receivedAmount]);
  assert.deepEqual([steps.payment!.settlement, steps.payment!.difference], ['underpaid', `-${payment.amount}`], 'nothing received yet: underpaid by the whole amount');
  assert.deepEqual([steps.paymentStatus!.id, steps.paymentStatus!.status, steps.paymentStatus!.requiredConfirmations], [payment.id, 'PENDING', payment.requiredConfirmations]);
  // The single read is a list item (no refunds field); refunds are their own route.
  const listItem = (await ts.listPayments()).items.find((p) => p.id === payment.id)!;
  assert.deepEqual([steps.refunds!.keys, steps.refunds!.refunds], [Object.keys(listItem).sort(), 0]);
  assert.equal(steps.cancelled!.status, 'CANCELLED');
  assert.equal((await ts.getInvoice(String(replayed.id))).status, 'CANCELLED');
  assert.equal((await ts.listPayments()).pagination.total, 1, 'no retry made a second payment');

  // Errors: one exception with the gateway's code, the HTTP status and the request id.
  for (const [name, status, code] of [['wrongSecret', 401, 'SIGNATURE_INVALID'], ['notFound', 404, 'INVOICE_NOT_FOUND'], ['keyReused', 409, 'IDEMPOTENCY_KEY_CONFLICT'], ['cancelAgain', 400, 'INVOICE_CANNOT_BE_CANCELLED']] as const) {
    const s = steps[name];
    assert.ok(s, `step ${name} raised`);
    assert.deepEqual([s.status, s.code], [status, code], name);
    assert.match(String(s.requestId), /^req_[0-9a-f]{24}$/, `${name}: the request id`);
  }

}

/**
 * The cancel's invoice.cancelled, delivered by serve to the language's receiver and verified there;
 * then the same body sent again as a duplicate, tampered, stale, in the Standard Webhooks headers
 * alone, under a wrong secret and unsigned.
 */
export async function checkDeliveries(shop: SdkShop, cancelledInvoiceId: string): Promise<void> {
  const [delivered] = await shop.receiver.waitFor(1);
  assert.deepEqual([delivered!.verdict, delivered!.type], ['ok', 'invoice.cancelled'], JSON.stringify(delivered));
  const body = Buffer.from(delivered!.body, 'base64');
  assert.equal(JSON.parse(body.toString()).data.invoice.id, cancelledInvoiceId);
  const eventId = delivered!.eventId!;
  const now = Math.floor(Date.now() / 1000);
  const secret = shop.creds.apiSecret;
  const send = (b: Buffer, h: Record<string, string>) => postDelivery(shop.receiver.url, b, h);

  // The same delivery again (a duplicate): verified, and recognised by its event id.
  assert.deepEqual(await send(body, { ...chaingateHeaders(secret, eventId, now, body), ...standardHeaders(secret, eventId, now, body) }), { status: 200, text: 'duplicate' });
  // A tampered body under the real signature.
  const tampered = Buffer.from(body.toString().replace('"CANCELLED"', '"PAID"'));
  assert.notDeepEqual(tampered, body);
  const sentSignature = Object.entries(delivered!.headers).find(([k]) => k.toLowerCase() === 'x-webhook-signature')?.[1];
  assert.match(String(sentSignature), /^t=\d+,v1=[0-9a-f]{64}$/);
  assert.deepEqual(await send(tampered, { 'X-Webhook-Signature': sentSignature! }), { status: 400, text: 'mismatch' });
  // A captured delivery an hour old, correctly signed for that time, in either scheme.
  assert.deepEqual(await send(body, chaingateHeaders(secret, eventId, now - 3600, body)), { status: 400, text: 'expired' });
  assert.deepEqual(await send(body, standardHeaders(secret, eventId, now - 3600, body)), { status: 400, text: 'expired' });
  // Standard Webhooks alone, fresh: accepted (the duplicate again).
  assert.deepEqual(await send(body, standardHeaders(secret, eventId, now, body)), { status: 200, text: 'duplicate' });
  // A wrong secret and no signature at all.
  assert.deepEqual(await send(body, { 'X-Webhook-Signature': signWebhookPayload(`${secret}x`, now, body) }), { status: 400, text: 'mismatch' });
  assert.deepEqual(await send(body, {}), { status: 400, text: 'missing' });
  const verdicts = (await shop.receiver.waitFor(8)).map((l) => l.verdict);
  assert.deepEqual(verdicts, ['ok', 'duplicate', 'refused', 'refused', 'refused', 'duplicate', 'refused', 'refused']);
}
