import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebhookDelivery } from '../../src/store/entities/webhook-delivery.entity.ts';
import { recordEvent } from '../../src/store/events.ts';
import { openDatabase } from '../../src/store/orm.ts';
import { verifyWebhook } from '../../src/sdk/verify-webhook.ts';
import { loadConfig } from '../../src/config/load-config.ts';
import { checkWebhookUrlAllowed } from '../../src/app/webhook-url-check.ts';
import { UsageError } from '../../src/domain/errors.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { createTestDatabase, skipUnless } from '../helpers/databases.ts';
import { eventually, startWebhookReceiver } from '../helpers/webhook-receiver.ts';

type T = { after(fn: () => Promise<void> | void): void };

/** A temp folder with a SQLite URL and a config file that lets webhooks reach the local receiver. */
function workspace(t: T, webhooks: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'cg-hooks-'));
  mkdirSync(join(dir, 'data'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'dev.yaml');
  const settings = { allowPrivateNetworks: true, retryScheduleSeconds: [0], retryJitter: 0, pollIntervalMs: 50, timeoutMs: 2000, leaseSeconds: 10, ...webhooks };
  writeFileSync(config, `webhooks: ${JSON.stringify(settings)}\n`);
  return { dir, url: `sqlite:${join(dir, 'data', 'chaingate.db')}`, config };
}

/** `chaingate webhooks work` in the background; resolves once it says it is working. */
async function startWorker(t: T, env: Record<string, string>): Promise<ChildProcess & { exited: Promise<number | null> }> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAINGATE_')) base[k] = v;
  const child = spawn(process.execPath, [BIN, 'webhooks', 'work'], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('"working"')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`webhooks work exited with ${code}: ${stderr}`)));
  });
  return Object.assign(child, { exited });
}

async function addEvents(url: string, merchantId: string, n: number): Promise<string[]> {
  const db = await openDatabase(url);
  try {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const e = await db.write((x) => recordEvent(x, { merchantId, type: 'invoice.cancelled', invoiceId: null, data: { n: i } }));
      ids.push(e.id);
    }
    return ids;
  } finally {
    await db.close();
  }
}

describe('chaingate webhooks CLI on SQLite', () => {
  test('merchant create/update refuse private and loopback webhook URLs with exit code 2 and a clear message', async (t) => {
    const { url } = workspace(t);
    const env = { CHAINGATE_DATABASE_URL: url };
    const cases: [string, RegExp][] = [
      ['http://127.0.0.1:9/h', /127\.0\.0\.1 is a loopback address/],
      ['http://10.0.0.1/h', /10\.0\.0\.1 is a private address/],
      ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is a link-local address/],
      ['http://[::1]/h', /::1 is a loopback address/],
      ['http://[::ffff:10.0.0.1]/h', /::ffff:a00:1 is an IPv4-mapped private address/],
      ['https://localhost/h', /localhost resolves to 127\.0\.0\.1, a loopback address/],
    ];
    // The check merchant create and update run, in-process for every case (it needs no database)…
    const { config } = loadConfig({ env: {} });
    for (const [hook, message] of cases) {
      await assert.rejects(checkWebhookUrlAllowed(config, hook), (err: unknown) => {
        assert.ok(err instanceof UsageError, `${hook}: ${String(err)}`);
        assert.match(err.message, /^webhook URL .* is refused: /);
        assert.match(err.message, message);
        assert.match(err.message, /webhooks\.allowPrivateNetworks/);
        return true;
      });
    }
    // …and through the real binary for one: exit code 2 and that message on stderr.
    const res = await runCli(['merchant', 'create', '--name', 'A', '--webhook-url', cases[0]![0]], env);
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /^chaingate: webhook URL .* is refused: /m);
    assert.match(res.stderr, cases[0]![1]);
    assert.match(res.stderr, /webhooks\.allowPrivateNetworks/);
    const created = await runCli(['merchant', 'create', '--name', 'B', '--json'], env);
    const id = JSON.parse(created.stdout).id as string;
    const upd = await runCli(['merchant', 'update', id, '--webhook-url', 'http://192.168.1.20/h'], env);
    assert.equal(upd.code, 2);
    assert.match(upd.stderr, /192\.168\.1\.20 is a private address/);
  });

  test('--events chooses the event types; webhooks test sends a signed ping and reports the answer', async (t) => {
    const { url, config } = workspace(t);
    const env = { CHAINGATE_DATABASE_URL: url, CHAINGATE_CONFIG: config };
    const rx = await startWebhookReceiver(t, (req) => ({ status: req.path === '/broken' ? 500 : 200, body: 'pong' }));
    const created = await runCli(['merchant', 'create', '--name', 'Shop', '--webhook-url', rx.url, '--events', 'payment.completed,invoice.paid', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const m = JSON.parse(created.stdout) as { id: string; apiSecret: string; webhookEvents: string[] };
    assert.deepEqual(m.webhookEvents, ['payment.completed', 'invoice.paid']);
    const bad = await runCli(['merchant', 'update', m.id, '--events', 'payment.completed,payment.teleported'], env);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown event type\(s\): payment\.teleported/);
    const all = await runCli(['merchant', 'update', m.id, '--all-events', '--json'], env);
    assert.equal(JSON.parse(all.stdout).webhookEvents, null);

    const ping = await runCli(['webhooks', 'test', m.id, '--json'], env);
    assert.equal(ping.code, 0, ping.stderr);
    const out = JSON.parse(ping.stdout);
    assert.equal(out.delivered, true);
    assert.equal(out.statusCode, 200);
    assert.equal(out.responseBody, 'pong');
    assert.equal(rx.requests.length, 1);
    const req = rx.requests[0]!;
    assert.equal(JSON.parse(req.rawBody.toString()).type, 'ping');
    assert.equal(req.headers['x-webhook-id'], out.eventId);
    assert.equal(verifyWebhook({ apiSecret: m.apiSecret, rawBody: req.rawBody, signature: req.headers['x-webhook-signature'] }).ok, true);

    await runCli(['merchant', 'update', m.id, '--webhook-url', rx.url.replace('/hooks', '/broken')], env);
    const failing = await runCli(['webhooks', 'test', m.id, '--json'], env);
    assert.equal(failing.code, 1);
    assert.equal(JSON.parse(failing.stdout).delivered, false);
    assert.match(failing.stderr, /the ping was not delivered: HTTP 500 is not a 2xx answer/);
    const noHook = await runCli(['merchant', 'create', '--name', 'Silent', '--json'], env);
    const none = await runCli(['webhooks', 'test', JSON.parse(noHook.stdout).id], env);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /has no webhook URL/);
  });

  test('webhooks work delivers; list shows states and attempts; replay and replay --failed make new deliveries', async (t) => {
    const { url, config } = workspace(t, { maxAttempts: 2 });
    const env = { CHAINGATE_DATABASE_URL: url, CHAINGATE_CONFIG: config };
    let status = 500;
    const rx = await startWebhookReceiver(t, () => ({ status }));
    const created = await runCli(['merchant', 'create', '--name', 'Shop', '--webhook-url', rx.url, '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const merchantId = JSON.parse(created.stdout).id as string;
    const [first, second] = await addEvents(url, merchantId, 2);

    const pending = JSON.parse((await runCli(['webhooks', 'list', '--json'], env)).stdout) as { id: string; state: string }[];
    assert.deepEqual(pending.map((e) => e.state), ['PENDING', 'PENDING']);

    const worker = await startWorker(t, env);
    await rx.waitFor(4, 20_000);
    const db = await openDatabase(url);
    t.after(() => db.close());
    await eventually(async () => ((await db.em().count(WebhookDelivery, { state: 'FAILED' })) === 2 ? true : undefined));

    const failed = await runCli(['webhooks', 'list', '--failed', '--merchant', merchantId, '--json'], env);
    const listed = JSON.parse(failed.stdout) as { id: string; type: string; state: string; deliveries: { attempts: { statusCode: number; error: string }[] }[] }[];
    assert.deepEqual(listed.map((e) => e.id).sort(), [first, second].sort());
    assert.deepEqual(listed[0]!.deliveries[0]!.attempts.map((a) => a.statusCode), [500, 500]);
    const human = await runCli(['webhooks', 'list'], env);
    assert.match(human.stdout, /^event\s+type\s+merchant\s+createdAt\s+state\s+attempts/);
    assert.match(human.stdout, /FAILED\s+2\s+-\s+HTTP 500 is not a 2xx answer/);

    status = 200;
    const one = await runCli(['webhooks', 'replay', first!, '--json'], env);
    assert.equal(one.code, 0, one.stderr);
    assert.equal(JSON.parse(one.stdout).eventId, first);
    await rx.waitFor(5, 10_000);
    assert.equal(rx.requests[4]!.headers['x-webhook-id'], first);
    await eventually(async () => ((await db.em().count(WebhookDelivery, { state: 'DELIVERED' })) === 1 ? true : undefined));

    const rest = await runCli(['webhooks', 'replay', '--failed', '--since', '2000-01-01T00:00:00Z', '--json'], env);
    assert.equal(rest.code, 0, rest.stderr);
    assert.deepEqual((JSON.parse(rest.stdout).replayed as { eventId: string }[]).map((r) => r.eventId), [second]);
    await rx.waitFor(6, 10_000);
    assert.equal(rx.requests[5]!.headers['x-webhook-id'], second);

    worker.kill('SIGTERM');
    assert.equal(await worker.exited, 0);

    const usage = await runCli(['webhooks', 'replay'], env);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /give an EVENT_ID, or --failed/);
    const badSince = await runCli(['webhooks', 'replay', '--failed', '--since', 'yesterday'], env);
    assert.equal(badSince.code, 2);
    const unknown = await runCli(['webhooks', 'replay', 'nope'], env);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no webhook event with id "nope"/);
  });
});

describe('chaingate webhooks CLI on PostgreSQL', { skip: await skipUnless('postgresql') }, () => {
  test('two `chaingate webhooks work` processes on one PostgreSQL deliver each attempt once', async (t) => {
    const tdb = await createTestDatabase('postgresql', { migrated: true });
    t.after(() => tdb.drop());
    const { config } = workspace(t, { retryScheduleSeconds: [0.05], concurrency: 3, pollIntervalMs: 20 });
    const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'w'.repeat(64), CHAINGATE_CONFIG: config };
    const perEvent = new Map<string, string[]>();
    const rx = await startWebhookReceiver(t, (req) => {
      const id = String(req.headers['x-webhook-id']);
      perEvent.set(id, [...(perEvent.get(id) ?? []), String(req.headers['x-webhook-attempt'])]);
      return { status: perEvent.get(id)!.length === 1 ? 503 : 200, delayMs: 10 };
    });
    const created = await runCli(['merchant', 'create', '--name', 'Busy', '--webhook-url', rx.url, '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const ids = await addEvents(tdb.url, JSON.parse(created.stdout).id, 24);
    const workers = await Promise.all([startWorker(t, env), startWorker(t, env)]);
    await rx.waitFor(48, 30_000);
    await new Promise((r) => setTimeout(r, 300));
    for (const w of workers) w.kill('SIGTERM');
    assert.deepEqual(await Promise.all(workers.map((w) => w.exited)), [0, 0]);
    assert.equal(rx.requests.length, 48, 'no attempt was made twice');
    for (const id of ids) assert.deepEqual(perEvent.get(id), ['1', '2'], id);
    const listed = JSON.parse((await runCli(['webhooks', 'list', '--limit', '100', '--json'], env)).stdout) as { state: string }[];
    assert.equal(listed.length, 24);
    assert.ok(listed.every((e) => e.state === 'DELIVERED'));
  });
});
