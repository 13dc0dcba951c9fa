import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits, type Contract } from 'ethers';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { startEvmChain, startEvmWorld, REQUIRED_CONFIRMATIONS, type EvmChain, type EvmWorld } from '../helpers/evm-world.ts';
import { waitFor } from '../helpers/indexer-process.ts';
import { startRpcProxy, type RpcProxy, type RpcProxyOptions } from '../helpers/rpc-proxy.ts';

// Index once, fail loudly: a node that lacks a method, answers in the wrong shape or keeps changing
// under the reader never makes the indexer spin, crash with a TypeError or credit anything wrong.
// One Hardhat chain for the file: each test has its own proxy in front of it, daemon, database and
// indexer (which starts near the head, so the blocks of earlier tests are not read again).

let chain: EvmChain;
before(async () => {
  chain = await startEvmChain();
});
after(() => chain.node.stop());

async function worldBehindProxy(t: Parameters<typeof startEvmWorld>[0], proxyOptions: Omit<RpcProxyOptions, 'target'>): Promise<{ w: EvmWorld; proxy: RpcProxy }> {
  let proxy: RpcProxy | undefined;
  const w = await startEvmWorld(t, {
    dialect: 'sqlite',
    chain,
    blockTimeMs: 200,
    indexer: { minPollMs: 100, rpcTimeoutMs: 1000 },
    rpcUrl: async (target) => {
      proxy = await startRpcProxy({ target, ...proxyOptions });
      t.after(() => proxy!.close());
      return proxy.url;
    },
  });
  return { w, proxy: proxy! };
}

async function pay(w: EvmWorld, address: string, amount: string): Promise<void> {
  await (await (w.fx.usdc.connect(w.fx.payer) as Contract).getFunction('transfer')(address, parseUnits(amount, 6))).wait();
}

describe('EVM indexer: a node that cannot serve it stops it with one clear line', () => {
  test('eth_getLogs disabled at start-up: exit 2 naming the endpoint and the method', async (t) => {
    const { w } = await worldBehindProxy(t, { refuseMethods: ['eth_getLogs'] });
    const p = w.startIndexer();
    assert.equal(await p.exited, 2);
    const lines = p.output().trim().split('\n').filter((l) => l.startsWith('chaingate:'));
    assert.equal(lines.length, 1, p.output());
    assert.match(lines[0]!, /127\.0\.0\.1:\d+ does not serve eth_getLogs, which the ethereum indexer needs: point chains\.ethereum\.mainnet\.rpcUrl/);
  });

  test('a node serving another chain id: exit 2 with one line naming the endpoint and both ids', async (t) => {
    let wrongChain = false;
    const { w } = await worldBehindProxy(t, { rewrite: (method) => (wrongChain && method === 'eth_chainId' ? '0x89' : undefined) });
    wrongChain = true;
    const p = w.startIndexer();
    assert.equal(await p.exited, 2);
    const lines = p.output().trim().split('\n').filter((l) => l.startsWith('chaingate:'));
    assert.equal(lines.length, 1, p.output());
    assert.match(lines[0]!, /127\.0\.0\.1:\d+ serves chain id 137, but ethereum MAINNET is 1: check chains\.ethereum\.mainnet\.rpcUrl/);
  });

  test('a method disabled while running stops the indexer instead of retrying forever', async (t) => {
    const { w, proxy } = await worldBehindProxy(t, {});
    const p = w.startIndexer();
    await waitFor('indexer start', async () => p.output().includes('indexer started'), 20_000);
    proxy.setRefused(['eth_getLogs']);
    const payment = await w.openPayment('USDC');
    await pay(w, payment.address, '25');
    assert.equal(await p.exited, 1);
    assert.match(p.output(), /the node refuses a method the indexer needs \(eth_getLogs: /);
    assert.ok((proxy.stats.methods.eth_getLogs ?? 0) <= 3, `asked ${proxy.stats.methods.eth_getLogs} times, not in a loop`);
  });
});

describe('EVM indexer: wrong-shaped answers and a chain that keeps changing', () => {
  test('malformed eth_getLogs answers are retried faults naming the method; the transfer is credited once, correctly', async (t) => {
    let mangled = 0;
    const { w } = await worldBehindProxy(t, {
      rewrite(method, _params, result) {
        if (method !== 'eth_getLogs' || !Array.isArray(result) || result.length === 0 || mangled >= 3) return undefined;
        mangled++;
        // Each variant a real node bug could produce: a field missing, a number for a hex string, an object for an array.
        const variants = [
          result.map((l: Record<string, unknown>) => ({ ...l, blockHash: undefined })),
          result.map((l: Record<string, unknown>) => ({ ...l, data: 25_000_000 })),
          { logs: result },
        ];
        return variants[mangled - 1];
      },
    });
    const p = w.startIndexer();
    const payment = await w.openPayment('USDC');
    await pay(w, payment.address, '25');
    await w.node.mine(REQUIRED_CONFIRMATIONS);
    const done = await w.waitStatus(payment.id, ['COMPLETED'], 60_000);
    assert.equal(done.receivedAmount, '25');
    assert.equal(await w.d.common.db.em().count(ObservedTransfer, { paymentId: payment.id }), 1);
    assert.equal(mangled, 3);
    assert.match(p.output(), /malformed answer to eth_getLogs: 0\.blockHash/);
    assert.match(p.output(), /malformed answer to eth_getLogs: 0\.data/);
    assert.doesNotMatch(p.output(), /TypeError/);
    await p.stop();
  });

  test('a block that never extends the stored tip backs off (no hot loop) and is recorded as the last error', async (t) => {
    let forkAt: bigint | null = null;
    const { w } = await worldBehindProxy(t, {
      rewrite(method, params, result) {
        if (forkAt === null || method !== 'eth_getBlockByNumber' || typeof params[0] !== 'string' || !params[0].startsWith('0x')) return undefined;
        if (BigInt(params[0]) !== forkAt || !result || typeof result !== 'object') return undefined;
        return { ...(result as object), parentHash: `0x${'ab'.repeat(32)}` };
      },
    });
    const p = w.startIndexer();
    await waitFor('indexer start', async () => p.output().includes('indexer started'), 20_000);
    const head = BigInt(await w.node.send<string>('eth_blockNumber', []));
    await waitFor('caught up', async () => {
      const c = await w.d.common.db.em().findOne(IndexerCursor, { chain: 'ethereum' });
      return c && BigInt(c.blockNumber) >= head;
    });
    forkAt = head + 1n;
    await w.node.mine(1);
    await new Promise((r) => setTimeout(r, 6000));
    const retries = p.output().split('\n').filter((l) => l.includes('chain changed while reading a range')).length;
    // A poll of 200 ms would retry about 30 times in 6 s; backing off it is a handful.
    assert.ok(retries >= 2 && retries <= 8, `${retries} retries in 6 s`);
    const cursor = await w.d.common.db.em().findOneOrFail(IndexerCursor, { chain: 'ethereum' }, { refresh: true });
    assert.match(cursor.lastError ?? '', /ReorgDuringFetch/);
    assert.equal(BigInt(cursor.blockNumber), head, 'nothing past the stored tip was written');
    forkAt = null;
    await waitFor('moves on once the chain is consistent', async () => {
      const c = await w.d.common.db.em().findOne(IndexerCursor, { chain: 'ethereum' }, { refresh: true });
      return c && BigInt(c.blockNumber) > head && c.lastError === null;
    }, 30_000);
    await p.stop();
  });

  test("start-up answers in the wrong shape are retried faults naming the method; geth's \"finalized block not found\" falls back to the count, logged once", async (t) => {
    const mangled: Record<string, number> = {};
    let finalizedAsked = 0;
    const { w } = await worldBehindProxy(t, {
      rewrite(method) {
        // A number where a hex quantity belongs, once each: a proxy or node bug, never cast.
        if ((method === 'eth_chainId' || method === 'eth_blockNumber') && !mangled[method]) {
          mangled[method] = 1;
          return method === 'eth_chainId' ? 1 : 12;
        }
        return undefined;
      },
      errorFor(method, params) {
        if (method !== 'eth_getBlockByNumber' || params[0] !== 'finalized') return undefined;
        finalizedAsked++;
        return { code: -32000, message: 'finalized block not found' }; // geth before the beacon client reports finality
      },
    });
    const p = w.startIndexer();
    await waitFor('indexer start', async () => p.output().includes('indexer started'), 20_000);
    assert.match(p.output(), /malformed answer to eth_chainId: \(root\)/);
    assert.match(p.output(), /malformed answer to eth_blockNumber: \(root\)/);
    assert.equal(p.output().split('\n').filter((l) => l.includes('does not serve the finalized block tag')).length, 1, 'logged once');
    assert.ok(finalizedAsked >= 1 && finalizedAsked <= 4, `the probe is bounded: asked ${finalizedAsked} times`);
    const payment = await w.openPayment('USDC');
    await pay(w, payment.address, '25');
    await w.node.mine(REQUIRED_CONFIRMATIONS);
    assert.equal((await w.waitStatus(payment.id, ['COMPLETED'], 30_000)).receivedAmount, '25', 'completed on the count alone');
    assert.ok(finalizedAsked <= 4, 'never asked again after the start-up probe');
    await p.stop();
  });
});

describe('EVM indexer: completion waits for the finalized tag', () => {
  test('a finalized tag lagging behind the count holds the payment in CONFIRMING; a tick whose finalized read fails keeps the last height and does not stall', async (t) => {
    let pinned: bigint | null = null;
    let failing = false;
    const { w, proxy } = await worldBehindProxy(t, {
      rewrite(method, params, result) {
        if (pinned === null || method !== 'eth_getBlockByNumber' || params[0] !== 'finalized' || !result || typeof result !== 'object') return undefined;
        return { ...(result as object), number: `0x${pinned.toString(16)}` };
      },
      errorFor: (method, params) => (failing && method === 'eth_getBlockByNumber' && params[0] === 'finalized' ? { code: -32000, message: 'finalized block not found' } : undefined),
    });
    const p = w.startIndexer();
    await waitFor('indexer start', async () => p.output().includes('indexer started'), 20_000);
    assert.doesNotMatch(p.output(), /does not serve the finalized block tag/, 'Hardhat serves the tag');
    // Finality stops where the chain is now: the payment's block will be past it.
    pinned = BigInt(await w.node.send<string>('eth_blockNumber', []));
    const payment = await w.openPayment('USDC');
    await pay(w, payment.address, '25');
    await w.node.mine(REQUIRED_CONFIRMATIONS + 2);
    await waitFor('confirmations counted', async () => (await w.payment(payment.id)).confirmations >= REQUIRED_CONFIRMATIONS);
    await new Promise((r) => setTimeout(r, 1500));
    const waiting = await w.payment(payment.id);
    assert.equal(waiting.status, 'CONFIRMING', 'the count is reached, the block is not finalized');

    // The node stops answering the tag: ticks go on (blocks are indexed), the last finalized height is kept.
    failing = true;
    const cursorAt = async () => BigInt((await w.d.common.db.em().findOneOrFail(IndexerCursor, { chain: 'ethereum' }, { refresh: true })).blockNumber);
    const before = await cursorAt();
    await w.node.mine(2);
    await waitFor('ticks go on while the tag fails', async () => (await cursorAt()) >= before + 2n, 20_000);
    await waitFor('the failing read was logged', async () => p.output().includes('could not read the finalized block; keeping the last known one'), 20_000);
    assert.equal((await w.payment(payment.id)).status, 'CONFIRMING', 'a failed read is not a reason to complete on the count');

    failing = false;
    pinned = null;
    await w.node.mine(1);
    assert.equal((await w.waitStatus(payment.id, ['COMPLETED'], 30_000)).receivedAmount, '25');
    assert.ok((proxy.stats.methods.eth_getBlockByNumber ?? 0) > 0);
    await p.stop();
  });
});
