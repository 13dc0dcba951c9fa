import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { newShop, type ShopCreds } from '../helpers/serve-shop.ts';

// SIGTERM under keep-alive load: every request sent on an open connection is answered (the ones in
// flight in full, later ones 503 with Connection: close), and no connection is reset. Once the
// listener is closed a new connection is refused, which is not a reset of a request sent.

const CONNECTIONS = 24;

interface Tally {
  answers: Record<number, number>;
  /** Errors on requests sent over an open connection: resets, hang-ups. Must stay empty. */
  failures: string[];
  refused: number;
  /** Every 503 said Connection: close and carried the envelope. */
  bad503: string[];
}

type Kind = 'write' | 'read' | 'health';

/** One request on the agent's keep-alive connections: a signed creation, a signed list read, or a bare /healthz (cheap, as a balancer's checks are). */
function request(agent: http.Agent, url: URL, creds: ShopCreds, kind: Kind): Promise<{ status: number; connection: string | undefined; body: string } | { error: string; code: string | undefined }> {
  const write = kind === 'write';
  const path = write ? '/api/v1/invoices' : kind === 'read' ? '/api/v1/payments' : '/healthz';
  const body = write ? JSON.stringify({ orderId: `o-${randomUUID()}`, amount: '2500', currency: 'USD' }) : '';
  const method = write ? 'POST' : 'GET';
  const headers = kind === 'health' ? {} : signRequest({ ...creds, method, path, body });
  return new Promise((resolve) => {
    const req = http.request({ host: url.hostname, port: url.port, path: kind === 'read' ? `${path}?take=5` : path, method, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: text }));
      res.on('error', (e: NodeJS.ErrnoException) => resolve({ error: `response: ${e.message}`, code: e.code }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ error: e.message, code: e.code }));
    req.end(body);
  });
}

for (const dialect of DIALECTS) {
  describe(`serve on SIGTERM under keep-alive load, on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test(`${CONNECTIONS} keep-alive clients: every request sent is answered, none is reset`, async (t) => {
      const shop = await newShop(dialect, 'Load Shop');
      t.after(() => shop.drop());
      const serve = await spawnServe(shop.env);
      t.after(() => serve.stop('SIGKILL').then(() => undefined));
      const url = new URL(serve.url);
      const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
      t.after(() => agent.destroy());

      const tally: Tally = { answers: {}, failures: [], refused: 0, bad503: [] };
      let answered = 0;
      let signal!: () => void;
      const loaded = new Promise<void>((r) => (signal = r));
      const worker = async (n: number) => {
        for (let i = 0; ; i++) {
          const kinds: Kind[] = ['write', 'read', 'health', 'health'];
          const r = await request(agent, url, shop.creds, kinds[(n + i) % kinds.length]!);
          if ('error' in r) {
            // The listener is gone: a new connection is refused. That is the end, not a failure.
            if (r.code === 'ECONNREFUSED') tally.refused++;
            else tally.failures.push(`${r.code}: ${r.error}`);
            return;
          }
          tally.answers[r.status] = (tally.answers[r.status] ?? 0) + 1;
          if (++answered === 600) signal();
          if (r.status === 503) {
            if (r.connection !== 'close' || !/"code":"SERVICE_UNAVAILABLE"/.test(r.body)) tally.bad503.push(`${r.connection} ${r.body}`);
            return;
          }
          assert.ok(r.status === 200 || r.status === 201, `${r.status} ${r.body}`);
        }
      };
      const workers = Array.from({ length: CONNECTIONS }, (_, n) => worker(n));
      // SIGTERM once the load runs (600 answers), not after a set time.
      await loaded;
      serve.child.kill('SIGTERM');
      await Promise.all(workers);
      assert.equal(await serve.exited, 0, serve.output().slice(-3000));

      assert.deepEqual(tally.failures, [], `no request sent on an open connection fails (${JSON.stringify(tally)})`);
      assert.deepEqual(tally.bad503, []);
      assert.ok((tally.answers[200] ?? 0) + (tally.answers[201] ?? 0) >= 600, JSON.stringify(tally));
      assert.equal((tally.answers[503] ?? 0) + tally.refused, CONNECTIONS, `each client ends on a 503 or a refused new connection: ${JSON.stringify(tally)}`);
    });
  });
}
