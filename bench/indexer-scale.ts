// npm run bench:indexer: what one EVM indexer costs as open payments grow. For 10, 1,000 and
// 100,000 open payments on a real Hardhat chain, a real `chaingate index ethereum` process behind a
// counting JSON-RPC proxy: RPC calls per block (by method) in steady state, and how long a transfer
// to a random open payment takes to be recorded (median and worst of several), against the poll
// interval. Measured, never asserted.
//   BENCH_OPEN=10,1000,100000 BENCH_BLOCKS=20 npm run bench:indexer
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Wallet, parseUnits, type Contract } from 'ethers';
import type { RequiredEntityData } from '@mikro-orm/core';
import { Invoice } from '../src/store/entities/invoice.entity.ts';
import { IndexerCursor } from '../src/store/entities/indexer-cursor.entity.ts';
import { ObservedTransfer } from '../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../src/store/entities/payment.entity.ts';
import { newId } from '../src/domain/ids.ts';
import { openDatabase } from '../src/store/orm.ts';
import { signRequest } from '../src/sdk/sign-request.ts';
import { runCli } from '../test/helpers/cli.ts';
import { createTestDatabase } from '../test/helpers/databases.ts';
import { deployFixtures } from '../src/devnet/evm-fixtures.ts';
import { startHardhatNode } from '../src/devnet/hardhat-node.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../test/helpers/indexer-process.ts';
import { startRpcProxy } from '../test/helpers/rpc-proxy.ts';
import { spawnServe } from '../test/helpers/serve-process.ts';

const SIZES = (process.env.BENCH_OPEN ?? '10,1000,100000').split(',').map(Number);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 20);
const POLL_MS = 1000;
const BLOCK_MS = 2000;

const node = await startHardhatNode({ chainId: 1 });
const fx = await deployFixtures(node);

async function scenario(open: number): Promise<string> {
  const tdb = await createTestDatabase('sqlite');
  const proxy = await startRpcProxy({ target: node.url });
  const chains = {
    ethereum: {
      mainnet: {
        rpcUrl: proxy.url,
        confirmations: 3,
        blockTimeMs: POLL_MS,
        tokens: { USDC: { address: fx.addresses.usdc, decimals: 6 }, USDT: { address: fx.addresses.usdt, decimals: 6 } },
      },
    },
  };
  const env = {
    CHAINGATE_DATABASE_URL: tdb.url,
    CHAINGATE_MASTER_KEY: 'b'.repeat(64),
    CHAINGATE_LOG_LEVEL: 'error',
    CHAINGATE_CONFIG: writeConfigFile({ chains, indexer: { minPollMs: POLL_MS, maxBlocksPerRange: 50 }, rateLimit: { enabled: false }, checkout: { indexerStaleAfterSeconds: null } }),
  };
  // One payment opened through the real API is the template of the others (same invoice, fresh ids and addresses).
  const creds = JSON.parse((await runCli(['merchant', 'create', '--name', 'Bench', '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
  const file = join(mkdtempSync(join(tmpdir(), 'cg-bench-')), 'pool.txt');
  writeFileSync(file, Wallet.createRandom().address);
  await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', file], env);
  const serve = await spawnServe(env);
  const signed = async (method: string, path: string, body: unknown) => {
    const raw = JSON.stringify(body);
    const res = await fetch(serve.url + path, { method, headers: signRequest({ ...creds, method, path, body: raw }), body: raw });
    return (await res.json()) as { data: { id: string; payment?: { id: string } } };
  };
  const invoice = await signed('POST', '/api/v1/invoices', { orderId: 'bench', amount: '2500', currency: 'USD' });
  await signed('POST', `/api/v1/invoices/${invoice.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC' });
  await serve.stop();

  const db = await openDatabase(tdb.url);
  const [template] = await db.em().find(Payment, {}, { limit: 1 });
  if (!template) throw new Error('the checkout did not open a payment');
  const addresses: string[] = [template.address];
  const rows: RequiredEntityData<Payment>[] = [];
  for (let i = 1; i < open; i++) {
    const address = Wallet.createRandom().address;
    addresses.push(address);
    const t = template;
    const stamped = new Date(Date.now() - 60_000 - Math.floor(Math.random() * 86_400_000));
    rows.push({
      id: newId(),
      referenceId: `B${randomBytes(12).toString('hex')}`,
      invoice: t.invoice.id,
      merchant: t.merchant.id,
      status: 'PENDING',
      paymentType: t.paymentType,
      method: t.method,
      blockchain: t.blockchain,
      network: t.network,
      isTestnet: t.isTestnet,
      cryptoCurrency: t.cryptoCurrency,
      decimals: t.decimals,
      tokenAddress: t.tokenAddress,
      amount: t.amount,
      expectedAmount: t.expectedAmount,
      receivedAmount: '0',
      address,
      confirmations: 0,
      requiredConfirmations: t.requiredConfirmations,
      metadata: {},
      expiresAt: new Date(Date.now() + 86_400_000),
      // Opened over the past day, as open payments are (a burst of changes just now would be read
      // again by every poll for the watch set's overlap, a minute: docs/performance.md).
      createdAt: stamped,
      updatedAt: stamped,
    });
  }
  for (let i = 0; i < rows.length; i += 2000) await db.em().insertMany(Payment, rows.slice(i, i + 2000));
  await db.em().nativeUpdate(Payment, { id: template.id }, { expiresAt: new Date(Date.now() + 86_400_000) });
  await db.em().nativeUpdate(Invoice, { id: template.invoice.id }, { expiresAt: new Date(Date.now() + 86_400_000) });

  const head = BigInt(await node.send<string>('eth_blockNumber', []));
  const indexer = spawnIndexer(['ethereum', '--from-block', (head + 1n).toString()], env);
  const cursor = async () => BigInt((await db.em().findOne(IndexerCursor, { chain: 'ethereum' }, { refresh: true }))?.blockNumber ?? '-1');
  await node.mine(1);
  await waitFor('indexer caught up', async () => (await cursor()) >= head + 1n, 120_000, 100);

  // Steady state: a block every 2 s; every fourth carries a transfer to a random open payment.
  const before = { ...proxy.stats.methods };
  const from = await cursor();
  const sent: { to: string; minedAt: number }[] = [];
  for (let b = 0; b < BLOCKS; b++) {
    if (b % 4 === 2) {
      const to = addresses[Math.floor(Math.random() * addresses.length)]!;
      // Automine: the block is mined when the node answers the send.
      const tx = await (fx.usdc.connect(fx.payer) as Contract).getFunction('transfer')(to, parseUnits('25', 6));
      sent.push({ to, minedAt: Date.now() });
      await tx.wait();
    } else {
      await node.mine(1);
    }
    await new Promise((r) => setTimeout(r, BLOCK_MS));
  }
  const last = BigInt(await node.send<string>('eth_blockNumber', []));
  await waitFor('indexer at the last block', async () => (await cursor()) >= last, 120_000, 100);
  const detected: number[] = [];
  for (const s of sent) {
    const seen = await db.em().findOne(ObservedTransfer, { toAddress: s.to }, { refresh: true });
    detected.push(seen ? seen.createdAt.getTime() - s.minedAt : NaN);
  }
  detected.sort((a, b) => a - b);
  const blocks = Number(last - from);
  const calls: Record<string, number> = {};
  for (const [m, n] of Object.entries(proxy.stats.methods)) if (n - (before[m] ?? 0) > 0) calls[m] = n - (before[m] ?? 0);
  const total = Object.values(calls).reduce((a, b) => a + b, 0);
  await indexer.stop();
  await db.close();
  await proxy.close();
  await tdb.drop();
  const perMethod = Object.entries(calls).map(([m, n]) => `${m} ${(n / blocks).toFixed(2)}`).join(', ');
  return `${String(open).padStart(7)} open  ${(total / blocks).toFixed(2).padStart(6)} calls/block  recorded ${detected.some((ms) => !Number.isFinite(ms)) ? 'NOT ALL SEEN' : `median ${Math.round(detected[detected.length >> 1]!)} ms, worst ${Math.round(detected[detected.length - 1]!)} ms`} after mining (${detected.length} transfers, poll ${POLL_MS} ms)  [${perMethod}]`;
}

try {
  console.log(`chaingate indexer bench: Hardhat, a block every ${BLOCK_MS / 1000} s, ${BLOCKS} blocks per size`);
  for (const size of SIZES) console.log(await scenario(size));
} finally {
  await node.stop();
}
