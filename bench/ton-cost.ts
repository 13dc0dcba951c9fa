// npm run bench:ton: what the TON reader costs at the default poll, measured against the toncenter
// v3 server of the tests (real TVM behind it). For 10, 1,000 and 10,000 open payments (a deposit
// and its USDT jetton wallet each), polls are replayed the way `chaingate index ton` makes them:
// the head, the tip re-check, the finalized height, and the range of masterchain blocks since the
// last poll (12 blocks: 5 s at 400 ms). Prints calls per poll and per hour, by endpoint, and what
// a new deposit costs once (its jetton wallet, asked of the master; 4 such calls in flight).
//   BENCH_OPEN=10,1000,10000 npm run bench:ton
import { randomBytes } from 'node:crypto';
import { Address } from '@ton/core';
import { createHttpClient } from '../src/families/http-client.ts';
import { createTonSource } from '../src/families/ton/ton-source.ts';
import { createToncenterV3 } from '../src/families/ton/toncenter-v3.ts';
import { createLogger } from '../src/logger.ts';
import { startTonNode } from '../test/helpers/toncenter-node.ts';

const SIZES = (process.env.BENCH_OPEN ?? '10,1000,10000').split(',').map(Number);
const BLOCKS_PER_POLL = 12;
const POLLS = 5;
const POLLS_PER_HOUR = 3600 / 5;

const node = await startTonNode();
const total = () => Object.values(node.calls).reduce((a, b) => a + b, 0);
try {
  console.log(`chaingate TON reader cost: a poll every 5 s reads ${BLOCKS_PER_POLL} masterchain blocks`);
  for (const open of SIZES) {
    const source = createTonSource({
      api: createToncenterV3(createHttpClient({ baseUrl: node.url, timeoutMs: 60_000, log: createLogger('silent') })),
      jettonMasters: [node.usdt.master.toString()],
      testnet: false,
    });
    const watch = { addresses: new Set(Array.from({ length: open }, () => new Address(0, randomBytes(32)).toString({ bounceable: false }))), paymentContract: null };
    let cursor = BigInt(node.seqno());
    const warmStart = total();
    const t0 = Date.now();
    node.mine(BLOCKS_PER_POLL);
    await source.fetchRange(cursor + 1n, BigInt(node.seqno()), watch); // computes each deposit's jetton wallet once
    cursor = BigInt(node.seqno());
    const warm = total() - warmStart;
    const warmSeconds = (Date.now() - t0) / 1000;
    const before = { ...node.calls };
    for (let i = 0; i < POLLS; i++) {
      node.mine(BLOCKS_PER_POLL);
      const head = await source.head();
      await source.blockAt(cursor);
      await source.finalized!();
      await source.fetchRange(cursor + 1n, head, watch);
      cursor = head;
    }
    const per: Record<string, number> = {};
    for (const [path, n] of Object.entries(node.calls)) if (n - (before[path] ?? 0) > 0) per[path.replace('/api/v3/', '')] = (n - (before[path] ?? 0)) / POLLS;
    const perPoll = Object.values(per).reduce((a, b) => a + b, 0);
    console.log(
      `${String(open).padStart(6)} open: ${perPoll.toFixed(1)} calls a poll, ${Math.round(perPoll * POLLS_PER_HOUR)} an hour [${Object.entries(per).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(', ')}]; once per new deposit: ${(warm / open).toFixed(2)} calls (runGetMethod), first poll ${warmSeconds.toFixed(1)} s; jetton wallets kept: ${source.jettonWalletsKept()}`,
    );
  }
} finally {
  await node.close();
}
