import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { zeroPadValue } from 'ethers';
import { pino } from 'pino';
import { createEvmSource } from './evm-source.ts';
import { TRANSFER_TOPIC } from '../jsonrpc/schemas.ts';
import { createRpc, RangeTooLargeError, type Rpc } from '../jsonrpc/rpc.ts';

// A JSON-RPC stand-in that counts calls: the cost bound and range splitting are properties of how
// the source talks to any node, so they are checked call by call here (the real node is exercised
// end to end in test/integration/evm-indexer.test.ts).
function countingRpc(options: { maxLogRange?: number } = {}) {
  const calls: { method: string; params: unknown[] }[] = [];
  const block = (n: bigint) => ({
    number: `0x${n.toString(16)}`,
    hash: `0x${n.toString(16).padStart(64, '0')}`,
    parentHash: `0x${(n - 1n).toString(16).padStart(64, '0')}`,
    timestamp: '0x1',
    transactions: [],
  });
  const rpc: Rpc = {
    provider: undefined as never,
    close() {},
    async call<T>(method: string, params: unknown[]): Promise<T> {
      calls.push({ method, params });
      if (method === 'eth_getBlockByNumber') return block(BigInt(params[0] as string)) as T;
      if (method === 'eth_getLogs') {
        const f = params[0] as { fromBlock: string; toBlock: string };
        const span = BigInt(f.toBlock) - BigInt(f.fromBlock) + 1n;
        if (options.maxLogRange && span > BigInt(options.maxLogRange)) throw new RangeTooLargeError('block range is too large');
        return [
          {
            address: '0x00000000000000000000000000000000000000aa',
            topics: [TRANSFER_TOPIC, zeroPadValue('0x01', 32), zeroPadValue('0x0000000000000000000000000000000000000b0b', 32)],
            data: zeroPadValue('0x05', 32),
            blockNumber: f.fromBlock,
            blockHash: block(BigInt(f.fromBlock)).hash,
            transactionHash: `0x${BigInt(f.fromBlock).toString(16).padStart(64, 'a')}`,
            logIndex: '0x0',
          },
        ] as T;
      }
      throw new Error(`unexpected ${method}`);
    },
  };
  return { rpc, calls, count: (m: string) => calls.filter((c) => c.method === m).length };
}

test('RPC calls per range grow with blocks and address chunks, never one per address', async () => {
  const { rpc, count } = countingRpc();
  const source = createEvmSource({ rpc, traces: false, addressChunk: 50 });
  const addresses = new Set(Array.from({ length: 120 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`));
  await source.fetchRange(10n, 19n, { addresses, paymentContract: '0x00000000000000000000000000000000000000cc' });
  assert.equal(count('eth_getBlockByNumber'), 10, 'one per block');
  assert.equal(count('eth_getLogs'), Math.ceil(120 / 50) + 1, 'one per chunk of 50 addresses, plus the payment contract');
  const bigger = countingRpc();
  const many = new Set(Array.from({ length: 1200 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`));
  await createEvmSource({ rpc: bigger.rpc, traces: false, addressChunk: 500 }).fetchRange(10n, 19n, { addresses: many, paymentContract: null });
  assert.equal(bigger.count('eth_getLogs'), 3, '1200 addresses cost 3 log queries');
});

test('a range the provider calls too large is split in halves and nothing is lost', async () => {
  const { rpc, calls } = countingRpc({ maxLogRange: 2 });
  const source = createEvmSource({ rpc, traces: false });
  const result = await source.fetchRange(1n, 8n, { addresses: new Set(['0x0000000000000000000000000000000000000b0b']), paymentContract: null });
  const served = calls.filter((c) => c.method === 'eth_getLogs').map((c) => {
    const f = c.params[0] as { fromBlock: string; toBlock: string };
    return [Number(BigInt(f.fromBlock)), Number(BigInt(f.toBlock))];
  });
  assert.deepEqual(served, [[1, 8], [1, 4], [1, 2], [3, 4], [5, 8], [5, 6], [7, 8]]);
  assert.deepEqual(result.transfers.map((t) => Number(t.blockNumber)), [1, 3, 5, 7], 'every accepted sub-range delivered its logs');
});

// A JSON-RPC node on 127.0.0.1 behind the real client (rpc.ts): the trace answers are checked with
// zod, so a wrong shape is a logged, retried fault naming the method, and the retry reads it right.
async function traceNode(options: { blockTracing: boolean; bad: unknown }) {
  const watched = '0x0000000000000000000000000000000000000b0b';
  const txHash = `0x${'ab'.repeat(32)}`;
  const frame = { type: 'CALL', from: '0x00000000000000000000000000000000000000aa', to: '0x00000000000000000000000000000000000000cc', value: '0x0', calls: [{ type: 'CALL', from: '0x00000000000000000000000000000000000000cc', to: watched, value: '0x2a' }] };
  const answered: Record<string, number> = {};
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      answered[call.method] = (answered[call.method] ?? 0) + 1;
      const first = answered[call.method] === 1;
      const reply = (payload: Record<string, unknown>) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...payload }));
      const n = call.method === 'eth_getBlockByNumber' ? BigInt(call.params[0] as string) : 0n;
      if (call.method === 'eth_getBlockByNumber') {
        return reply({ result: { number: `0x${n.toString(16)}`, hash: `0x${n.toString(16).padStart(64, '0')}`, parentHash: `0x${(n - 1n).toString(16).padStart(64, '0')}`, timestamp: '0x1', transactions: [{ hash: txHash, from: frame.from, to: frame.to, value: '0x0' }] } });
      }
      if (call.method === 'eth_getLogs') return reply({ result: [] });
      if (call.method === 'debug_traceBlockByNumber') {
        if (!options.blockTracing) return reply({ error: { code: -32601, message: 'the method debug_traceBlockByNumber does not exist/is not available' } });
        return reply({ result: first ? options.bad : [{ txHash, result: frame }] });
      }
      if (call.method === 'debug_traceTransaction') return reply({ result: first ? options.bad : frame });
      return reply({ error: { code: -32601, message: 'Method not found' } });
    });
  });
  const url = await new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
  const lines: string[] = [];
  const log = pino({ level: 'warn' }, new Writable({ write: (chunk: Buffer, _enc, done) => {
    lines.push(chunk.toString());
    done();
  } }));
  const rpc = createRpc({ url, chainId: 1, log, maxBackoffMs: 20 });
  return { rpc, lines, watched, answered, close: () => {
    rpc.close();
    server.close();
  } };
}

test('a malformed debug_traceBlockByNumber answer is a logged, retried fault naming the method; the retry credits the traced transfer', async () => {
  const node = await traceNode({ blockTracing: true, bad: [{ txHash: `0x${'ab'.repeat(32)}`, result: { type: 'CALL', calls: [{ type: 'CALL', to: '0x0000000000000000000000000000000000000b0b', value: 42 }] } }] });
  try {
    const result = await createEvmSource({ rpc: node.rpc, traces: true }).fetchRange(5n, 5n, { addresses: new Set([node.watched]), paymentContract: null });
    assert.deepEqual(result.transfers.map((t) => [t.kind, t.amount]), [['trace', 42n]]);
    assert.match(node.lines.join(''), /malformed answer to debug_traceBlockByNumber: 0\.result\.calls\.0\.value/);
  } finally {
    node.close();
  }
});

test('a malformed debug_traceTransaction answer (nodes without block tracing) is a logged, retried fault naming the method', async () => {
  const node = await traceNode({ blockTracing: false, bad: { type: 'CALL', calls: 'none' } });
  try {
    const result = await createEvmSource({ rpc: node.rpc, traces: true }).fetchRange(5n, 5n, { addresses: new Set([node.watched]), paymentContract: null });
    assert.deepEqual(result.transfers.map((t) => [t.kind, t.amount]), [['trace', 42n]]);
    assert.match(node.lines.join(''), /malformed answer to debug_traceTransaction: calls/);
    assert.equal(node.answered.debug_traceBlockByNumber, 1, 'block tracing refused once, then per-transaction tracing');
  } finally {
    node.close();
  }
});
