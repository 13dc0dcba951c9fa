import { test } from 'node:test';
import assert from 'node:assert/strict';
import { zeroPadValue } from 'ethers';
import { createEvmSource, TRANSFER_TOPIC } from './evm-source.ts';
import { RangeTooLargeError, type Rpc } from './rpc.ts';

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
