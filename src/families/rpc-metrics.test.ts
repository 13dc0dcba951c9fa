import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import { createCoreFetcher } from './bitcoin/core-fetcher.ts';
import { createRpc } from './jsonrpc/rpc.ts';
import { createHttpClient } from './http-client.ts';
import { RpcAborted } from './retry.ts';
import { endpointOrigin, onRpcFault, type RpcFault } from './rpc-metrics.ts';

test('endpointOrigin shows scheme, host and port only: never a key in the path, the query or the user info', () => {
  assert.equal(endpointOrigin('https://mainnet.infura.io/v3/0123456789abcdef'), 'https://mainnet.infura.io');
  assert.equal(endpointOrigin('https://user:secret@node.example:8545/key/abc?api-key=xyz'), 'https://node.example:8545');
  assert.equal(endpointOrigin('http://127.0.0.1:8545'), 'http://127.0.0.1:8545');
  assert.equal(endpointOrigin('not a url'), '(not a URL)');
});

/** A node that answers each path its own way: /503, /429, /hang (never), /rpc-error (a JSON-RPC error object). */
async function misbehavingNode(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith('/503')) res.writeHead(503).end('busy');
    else if (req.url?.startsWith('/429')) res.writeHead(429).end('slow down');
    else if (req.url?.startsWith('/rpc-error')) res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}');
    // /hang: no answer
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A logger that keeps its lines, and stops the client (abort) after the first retry it logs. */
function recorder() {
  const logs: Record<string, unknown>[] = [];
  const controller = new AbortController();
  const log = pino(
    { level: 'warn' },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        logs.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        if (logs.length >= 3) controller.abort();
        done();
      },
    }),
  );
  return { logs, log, signal: controller.signal };
}

test('every retried call names the endpoint, the method and the cause (HTTP status, timeout, the node error), and after three reports the fault', async (t) => {
  const base = await misbehavingNode(t);
  const faults: RpcFault[] = [];
  t.after(onRpcFault((f) => faults.push(f)));
  const cases = [
    { path: '/503', cause: 'HTTP 503 Service Unavailable' },
    { path: '/429', cause: 'HTTP 429 Too Many Requests' },
    { path: '/hang', cause: 'timeout after 300 ms' },
  ];
  for (const c of cases) {
    // The key sits in the path, as Infura's does: it must not reach a log line.
    for (const client of ['json-rpc (ethers)', 'chain API (fetch)'] as const) {
      const r = recorder();
      const url = `${base}${c.path}/secretkey0123456789`;
      // Only the hanging node is meant to time out: the others answer at once, even on a busy machine.
      const timeoutMs = c.path === '/hang' ? 300 : 10_000;
      faults.length = 0;
      if (client === 'json-rpc (ethers)') {
        const rpc = createRpc({ url, chainId: 1, log: r.log, timeoutMs, maxBackoffMs: 5, signal: r.signal });
        await assert.rejects(rpc.call('eth_blockNumber', []), RpcAborted);
        rpc.close();
      } else {
        const http = createHttpClient({ baseUrl: url, timeoutMs, log: r.log, maxBackoffMs: 5, signal: r.signal });
        await assert.rejects(http.text('/api/v3/masterchainInfo?x=1'), RpcAborted);
      }
      const method = client === 'json-rpc (ethers)' ? 'eth_blockNumber' : '/api/v3/masterchainInfo';
      assert.equal(r.logs.length, 3, `${client} ${c.path}`);
      for (const line of r.logs) {
        assert.deepEqual([line.endpoint, line.method, line.error], [base, method, c.cause], `${client} ${c.path}: ${JSON.stringify(line)}`);
        assert.doesNotMatch(JSON.stringify(line), /secretkey/);
      }
      assert.deepEqual(faults, [{ endpoint: base, method, cause: c.cause, attempts: 3 }], `${client} ${c.path}: reported once it failed three times`);
    }
  }

  // A JSON-RPC error object is the node's own answer: its code and message are the cause.
  const r = recorder();
  const rpc = createRpc({ url: `${base}/rpc-error`, chainId: 1, log: r.log, timeoutMs: 10_000, maxBackoffMs: 5, signal: r.signal });
  await assert.rejects(rpc.call('eth_getBlockByNumber', ['0x1', false]), RpcAborted);
  rpc.close();
  assert.deepEqual([r.logs[0]?.endpoint, r.logs[0]?.method, r.logs[0]?.error], [base, 'eth_getBlockByNumber', 'JSON-RPC error -32000: header not found']);

  // A bounded call's caller decides what its failure means: it gives up naming all three, and reports no fault.
  faults.length = 0;
  const bounded = createRpc({ url: `${base}/503`, chainId: 1, log: recorder().log, timeoutMs: 10_000, maxBackoffMs: 5 });
  await assert.rejects(bounded.call('eth_getBlockByNumber', ['finalized', false], { maxAttempts: 3 }), {
    name: 'RpcGaveUpError',
    message: `eth_getBlockByNumber at ${base}: HTTP 503 Service Unavailable`,
  });
  bounded.close();
  assert.deepEqual(faults, []);
});

test("Bitcoin Core's JSON-RPC names the endpoint (never its credentials), the method and the cause, and reports the fault", async (t) => {
  const base = await misbehavingNode(t);
  const faults: RpcFault[] = [];
  t.after(onRpcFault((f) => faults.push(f)));
  for (const c of [
    { path: '/503', cause: 'HTTP 503' },
    { path: '/hang', cause: 'timeout after 300 ms' },
  ]) {
    const r = recorder();
    faults.length = 0;
    const url = new URL(`${base}${c.path}`);
    url.username = 'rpcuser';
    url.password = 'secretpassword';
    const core = createCoreFetcher({ url: url.toString(), timeoutMs: c.path === '/hang' ? 300 : 10_000, log: r.log, maxBackoffMs: 5, signal: r.signal });
    await assert.rejects(core.tipHeight(), RpcAborted);
    assert.equal(r.logs.length, 3, c.path);
    for (const line of r.logs) {
      assert.deepEqual([line.endpoint, line.method, line.error], [base, 'getblockcount', c.cause], `${c.path}: ${JSON.stringify(line)}`);
      assert.doesNotMatch(JSON.stringify(line), /secretpassword|rpcuser/);
    }
    assert.deepEqual(faults, [{ endpoint: base, method: 'getblockcount', cause: c.cause, attempts: 3 }], c.path);
  }
});
