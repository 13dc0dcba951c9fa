import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { parse as parseYaml } from 'yaml';
import { ConfigError, loadConfig } from '../../src/config/load-config.ts';
import { createHttpApp } from '../../src/http/app.ts';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, skipUnless } from '../helpers/databases.ts';
import { trackChild } from '../helpers/children.ts';
import { waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

// `chaingate serve` as a service manager and a load balancer see it: idle keep-alive connections
// outlive a balancer's 60 s, SIGTERM ends everything within server.shutdownGraceMs (a receiver that
// never answers included, its delivery kept), and a start that cannot bind every port exits at once.

interface Creds {
  apiKey: string;
  apiSecret: string;
}

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One raw HTTP/1.1 connection: what was written on it is exactly what the test wrote. */
class RawConnection {
  readonly responses: RawResponse[] = [];
  ended = false;
  error: NodeJS.ErrnoException | null = null;
  private buffer = Buffer.alloc(0);
  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    socket.on('end', () => (this.ended = true));
    socket.on('error', (err) => (this.error = err));
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  write(text: string): void {
    this.socket.write(text);
  }

  /** Resolves with the n-th response (1-based) on this connection. */
  response(n: number): Promise<RawResponse> {
    return waitFor(`response ${n}`, async () => this.responses[n - 1] ?? (this.ended || this.error ? Promise.reject(new Error(`connection closed after ${this.responses.length} responses (${this.error?.code ?? 'end'})`)) : null), 20_000, 20);
  }

  /** Resolves once the server closed the connection: 'end' for a clean close, else the error code. */
  closed(): Promise<string> {
    return waitFor('the connection to close', async () => (this.ended ? 'end' : this.error ? (this.error.code ?? 'error') : null), 20_000, 20);
  }

  private parse(): void {
    for (;;) {
      const head = this.buffer.indexOf('\r\n\r\n');
      if (head < 0) return;
      const [statusLine, ...lines] = this.buffer.subarray(0, head).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      const length = Number(headers['content-length'] ?? 0);
      if (this.buffer.length < head + 4 + length) return;
      this.responses.push({ status: Number(statusLine!.split(' ')[1]), headers, body: this.buffer.subarray(head + 4, head + 4 + length).toString('utf8') });
      this.buffer = this.buffer.subarray(head + 4 + length);
    }
  }
}

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'cg-lifecycle-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A port on 127.0.0.1 that something else holds until the test ends. */
async function takenPort(t: { after(fn: () => Promise<void>): void }): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** Runs `chaingate serve` to its end (it is expected to fail): exit code, output and how long it ran. */
function serveUntilExit(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAINGATE_')) base[k] = v;
  const started = Date.now();
  const child = spawn(process.execPath, [BIN, 'serve'], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  // A serve that half-started never exits: kill it after a minute so the assertion below reports it.
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    }),
  );
}

/** The lines of serve's stderr that are not JSON log lines below warn level. */
function problemLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => {
    if (!line.trim()) return false;
    if (!line.startsWith('{')) return true;
    return (JSON.parse(line) as { level: number }).level >= 50;
  });
}

const millis = (duration: string): number => {
  const m = /^(\d+)s$/.exec(duration);
  assert.ok(m, `a duration in seconds: ${duration}`);
  return Number(m[1]) * 1000;
};

describe('the HTTP server behind a load balancer', () => {
  test('createHttpApp() keeps idle connections 65 s and gives headers 66 s and a whole request 70 s by default, or what it is given', async () => {
    const log = pino({ level: 'silent' });
    const byDefault = createHttpApp({ log, bodyLimit: 1024, trustProxy: false });
    assert.deepEqual([byDefault.server.keepAliveTimeout, byDefault.server.headersTimeout, byDefault.server.requestTimeout], [65_000, 66_000, 70_000]);
    await byDefault.close();
    const given = createHttpApp({ log, bodyLimit: 1024, trustProxy: false, keepAliveTimeoutMs: 120_000, headersTimeoutMs: 121_000, requestTimeoutMs: 150_000 });
    assert.deepEqual([given.server.keepAliveTimeout, given.server.headersTimeout, given.server.requestTimeout], [120_000, 121_000, 150_000]);
    await given.close();
  });

  test('the default config has the same timeouts, and a request timeout below the headers timeout is refused in one line', () => {
    const { server } = loadConfig({ env: {} }).config;
    assert.deepEqual([server.keepAliveTimeoutMs, server.headersTimeoutMs, server.requestTimeoutMs], [65_000, 66_000, 70_000]);
    assert.throws(
      () => loadConfig({ env: {}, overrides: { server: { requestTimeoutMs: 30_000 } } }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.match(err.message, /^config error: server\.requestTimeoutMs: must be at least server\.headersTimeoutMs .*\(got 30000\)/);
        assert.equal(err.message.split('\n').length, 1);
        return true;
      },
    );
  });

  test('serve keeps a keep-alive connection open and usable after 8 s idle, and says it keeps it 65 s', async (t) => {
    const dir = tempDir(t);
    const serve = await spawnServe({ CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'chaingate.db')}` });
    t.after(() => serve.stop().then(() => undefined));
    const conn = await RawConnection.open(serve.url);
    t.after(() => void conn.socket.destroy());
    const get = 'GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n';
    conn.write(get);
    const first = await conn.response(1);
    assert.equal(first.status, 200);
    assert.equal(first.headers.connection, 'keep-alive');
    assert.equal(first.headers['keep-alive'], 'timeout=65', "the server's own keepAliveTimeout");
    // Node's default would have closed it after 5 s.
    await new Promise((r) => setTimeout(r, 8000));
    assert.deepEqual([conn.ended, conn.error], [false, null], 'still open after 8 s idle');
    conn.write(get);
    assert.equal((await conn.response(2)).status, 200);
    assert.equal(await serve.stop(), 0, serve.output());
  });
});

for (const dialect of DIALECTS) {
  describe(`serve on SIGTERM, on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('with a webhook receiver that never answers: the request in flight is answered, the process exits within server.shutdownGraceMs, and the delivery stays due', async (t) => {
      const database = await createTestDatabase(dialect, { migrated: true });
      t.after(() => database.drop());
      const graceMs = 3000;
      const receiver = await startWebhookReceiver(t, () => ({ hang: true }));
      // The receiver hangs past the grace (webhooks.timeoutMs is 10 s): only the grace can end the attempt.
      const env = {
        CHAINGATE_DATABASE_URL: database.url,
        CHAINGATE_MASTER_KEY: 'k'.repeat(64),
        CHAINGATE_CONFIG: writeConfigFile({ server: { shutdownGraceMs: graceMs }, webhooks: { allowPrivateNetworks: true } }),
      };
      const created = await runCli(['merchant', 'create', '--name', 'Hooked', '--webhook-url', receiver.url, '--json'], env);
      assert.equal(created.code, 0, created.stderr);
      const creds = JSON.parse(created.stdout) as Creds;
      const serve = await spawnServe({ ...env, CHAINGATE_LOG_LEVEL: 'info' });
      t.after(() => serve.stop('SIGKILL').then(() => undefined));

      const signed = async (method: string, path: string, body?: unknown) => {
        const raw = body === undefined ? '' : JSON.stringify(body);
        const res = await fetch(serve.url + path, { method, headers: signRequest({ ...creds, method, path, body: raw }), body: raw || undefined });
        return { status: res.status, json: (await res.json()) as { data: { id: string } } };
      };
      // A cancelled invoice makes an event, whose delivery serve's sender takes to the hanging receiver.
      const invoice = await signed('POST', '/api/v1/invoices', { orderId: 'o1', amount: '2500', currency: 'USD' });
      assert.equal(invoice.status, 201);
      assert.equal((await signed('DELETE', `/api/v1/invoices/${invoice.json.data.id}`)).status, 200);
      await receiver.waitFor(1);

      // A creation in flight at SIGTERM: headers and half the body sent before, the rest after, with a
      // second request pipelined behind it on the same keep-alive connection.
      const body = JSON.stringify({ orderId: 'o2', amount: '100', currency: 'USD' });
      const headers = Object.entries({ ...signRequest({ ...creds, method: 'POST', path: '/api/v1/invoices', body }), 'Content-Length': String(Buffer.byteLength(body)), Host: 'test' });
      const conn = await RawConnection.open(serve.url);
      t.after(() => void conn.socket.destroy());
      conn.write(`POST /api/v1/invoices HTTP/1.1\r\n${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n${body.slice(0, 10)}`);
      await new Promise((r) => setTimeout(r, 200));
      const signalled = Date.now();
      serve.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      conn.write(`${body.slice(10)}GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n`);

      const answered = await conn.response(1);
      assert.equal(answered.status, 201, answered.body);
      assert.equal(answered.headers.connection, 'close', 'the last answer on this connection says so');
      assert.equal(await conn.closed(), 'end', 'closed cleanly, never reset');
      // The pipelined request is either refused with the envelope or left unanswered on a clean close.
      for (const late of conn.responses.slice(1)) {
        assert.equal(late.status, 503);
        assert.equal((JSON.parse(late.body) as { error: { code: string } }).error.code, 'SERVICE_UNAVAILABLE');
      }

      assert.equal(await serve.exited, 0, serve.output());
      const took = Date.now() - signalled;
      assert.ok(took < graceMs + 2000, `exited ${took} ms after SIGTERM (grace ${graceMs} ms)`);
      assert.match(serve.output(), /webhook attempt cut off by the shutdown; the delivery stays due/);
      assert.equal(receiver.requests.length, 1);

      // Not lost and not counted: the delivery is due, with no attempt recorded against it.
      const listed = await runCli(['webhooks', 'list', '--json'], env);
      const events = JSON.parse(listed.stdout) as { type: string; deliveries: { state: string; attemptCount: number; nextAttemptAt: string; attempts: unknown[] }[] }[];
      const [delivery] = events.find((e) => e.type === 'invoice.cancelled')!.deliveries;
      assert.deepEqual([delivery!.state, delivery!.attemptCount, delivery!.attempts.length], ['PENDING', 0, 0]);
      assert.ok(Date.parse(delivery!.nextAttemptAt) <= Date.now(), 'due now');

      // Its lease was given back: the next serve delivers it at once, not after webhooks.leaseSeconds (60 s).
      receiver.behave(() => ({ status: 200, body: 'ok' }));
      const next = await spawnServe(env);
      t.after(() => next.stop('SIGKILL').then(() => undefined));
      await receiver.waitFor(2, 20_000);
      assert.equal(receiver.requests[1]!.rawBody.toString(), receiver.requests[0]!.rawBody.toString(), 'the same event, byte for byte');
      assert.equal(await next.stop(), 0, next.output());
    });
  });
}

describe('serve never half-starts', () => {
  // The first run may compile dist/; the timings below are of serve alone.
  before(async () => {
    assert.equal((await runCli(['--version'])).code, 0);
  });

  test('with the metrics port taken it exits 2 at once with one line, having never said it serves', async (t) => {
    const dir = tempDir(t);
    const port = await takenPort(t);
    const res = await serveUntilExit({ CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'chaingate.db')}`, CHAINGATE_PORT: '0', CHAINGATE_METRICS_PORT: String(port), CHAINGATE_LOG_LEVEL: 'info' });
    assert.equal(res.code, 2, res.stderr);
    assert.ok(res.ms < 15_000, `exited after ${res.ms} ms`);
    assert.deepEqual(problemLines(res.stderr), [`chaingate: metrics listener 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port} (metrics.port, CHAINGATE_METRICS_PORT; metrics.enabled: false turns it off)`]);
    assert.doesNotMatch(res.stderr, /chaingate is serving/);
    assert.equal(res.stdout, '', 'no "listening" line');
  });

  test('with the public port taken it exits 2 at once with one line, nothing it had opened (the metrics listener first) keeping it alive', async (t) => {
    const dir = tempDir(t);
    const port = await takenPort(t);
    const res = await serveUntilExit({ CHAINGATE_DATABASE_URL: `sqlite:${join(dir, 'chaingate.db')}`, CHAINGATE_PORT: String(port), CHAINGATE_METRICS_PORT: '0', CHAINGATE_LOG_LEVEL: 'info' });
    assert.equal(res.code, 2, res.stderr);
    assert.ok(res.ms < 15_000, `exited after ${res.ms} ms`);
    assert.deepEqual(problemLines(res.stderr), [`chaingate: listener 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port} (server.host, server.port, CHAINGATE_HOST, CHAINGATE_PORT)`]);
    assert.doesNotMatch(res.stderr, /chaingate is serving/);
  });
});

test('the service managers wait a bit longer than the default grace before they kill', () => {
  const graceMs = loadConfig({ env: {} }).config.server.shutdownGraceMs;
  const root = new URL('../../', import.meta.url);
  const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
  const compose = parseYaml(read('deploy/compose.yaml'), { merge: true }) as { services: Record<string, { stop_grace_period?: string }> };
  const unitStop = (file: string) => millis(`${/^TimeoutStopSec=(\d+)$/m.exec(read(`deploy/systemd/${file}`))![1]}s`);
  const stops = {
    'compose serve': millis(compose.services.serve!.stop_grace_period ?? '10s'),
    'compose webhooks': millis(compose.services.webhooks!.stop_grace_period ?? '10s'),
    'chaingate-serve.service': unitStop('chaingate-serve.service'),
    'chaingate-webhooks.service': unitStop('chaingate-webhooks.service'),
  };
  for (const [where, ms] of Object.entries(stops)) assert.ok(ms > graceMs && ms <= graceMs + 10_000, `${where}: ${ms} ms against a grace of ${graceMs} ms`);
});
