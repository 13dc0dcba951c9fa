// npm run bench:latency: how long the buyer and the merchant wait, end to end. A Hardhat chain, the
// real `chaingate serve` (API and webhook sender), the real `chaingate index ethereum` and a webhook
// receiver, all on this machine; payments opened one after another through the signed API, each
// paid in USDC at a random moment against the indexer's poll. Per payment:
//   (a) transfer mined          -> PROCESSING or CONFIRMING visible on GET /payments/:id/status
//   (b) deciding block mined    -> COMPLETED visible there
//   (c) COMPLETED visible       -> `payment.completed` received by the merchant's webhook URL
// with where the time went (from the rows' own timestamps). Measured, never asserted.
//   npm run bench:latency                               # 50 payments, SQLite, 1 s indexer poll
//   npm run bench:latency -- --payments 10 --db postgresql --poll-ms 2000
//   npm run bench:latency -- --webhook-poll-ms 250       # the sender's poll, against its default
// PostgreSQL comes from CHAINGATE_TEST_DATABASE_URL (default postgres://root@127.0.0.1:5432/postgres).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Wallet, parseUnits, type Contract } from 'ethers';
import { IndexerCursor } from '../src/store/entities/indexer-cursor.entity.ts';
import { ObservedTransfer } from '../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../src/store/entities/payment.entity.ts';
import { WebhookAttempt } from '../src/store/entities/webhook-attempt.entity.ts';
import { WebhookDelivery } from '../src/store/entities/webhook-delivery.entity.ts';
import { openDatabase } from '../src/store/orm.ts';
import { deployFixtures } from '../src/devnet/evm-fixtures.ts';
import { startHardhatNode } from '../src/devnet/hardhat-node.ts';
import { signRequest } from '../src/sdk/sign-request.ts';
import { runCli } from '../test/helpers/cli.ts';
import { createTestDatabase, type DialectName } from '../test/helpers/databases.ts';
import { spawnIndexer, waitFor, writeConfigFile } from '../test/helpers/indexer-process.ts';
import { spawnServe } from '../test/helpers/serve-process.ts';
import { startWebhookReceiver, type ReceivedRequest } from '../test/helpers/webhook-receiver.ts';

const { values: flags } = parseArgs({
  options: {
    payments: { type: 'string', default: '50' },
    db: { type: 'string', default: 'sqlite' },
    'poll-ms': { type: 'string', default: '1000' },
    /** webhooks.pollIntervalMs; unset: the default. */
    'webhook-poll-ms': { type: 'string' },
  },
});
const PAYMENTS = Number(flags.payments);
const POLL_MS = Number(flags['poll-ms']);
const DIALECT = flags.db as DialectName;
const WEBHOOK_POLL_MS = flags['webhook-poll-ms'] === undefined ? undefined : Number(flags['webhook-poll-ms']);
/** How often the bench asks the API for the payment's status: the resolution of (a) and (b). */
const API_POLL_MS = 20;
/** Blocks a payment needs (the transfer's own is the first): the deciding block is the third. */
const CONFIRMATIONS = 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cleanups: (() => Promise<unknown> | unknown)[] = [];

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
}

function line(name: string, values: number[]): string {
  const s = [...values].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  const ms = (v: number) => `${Math.round(v)}`.padStart(6);
  return `${name.padEnd(58)} p50 ${ms(percentile(s, 0.5))}  p99 ${ms(percentile(s, 0.99))}  mean ${ms(mean)}  min ${ms(s[0]!)}  max ${ms(s[s.length - 1]!)} ms`;
}

const node = await startHardhatNode({ chainId: 1 });
cleanups.push(() => node.stop());
try {
  const fx = await deployFixtures(node);
  const tdb = await createTestDatabase(DIALECT);
  cleanups.push(() => tdb.drop());
  const rx = await startWebhookReceiver({ after: (fn) => cleanups.push(fn) });
  const chains = {
    ethereum: {
      mainnet: {
        rpcUrl: node.url,
        confirmations: CONFIRMATIONS,
        blockTimeMs: POLL_MS,
        tokens: { USDC: { address: fx.addresses.usdc, decimals: 6 }, USDT: { address: fx.addresses.usdt, decimals: 6 } },
      },
    },
  };
  // Everything else at its default: the webhook sender's poll (webhooks.pollIntervalMs) above all.
  const webhooks = { allowPrivateNetworks: true, ...(WEBHOOK_POLL_MS === undefined ? {} : { pollIntervalMs: WEBHOOK_POLL_MS }) };
  const env = {
    CHAINGATE_DATABASE_URL: tdb.url,
    CHAINGATE_MASTER_KEY: 'b'.repeat(64),
    CHAINGATE_LOG_LEVEL: 'error',
    CHAINGATE_CONFIG: writeConfigFile({ chains, indexer: { minPollMs: POLL_MS }, rateLimit: { enabled: false }, webhooks }),
  };
  const migrated = await runCli(['migrate'], env);
  if (migrated.code !== 0) throw new Error(`migrate failed: ${migrated.stderr}`);
  const created = await runCli(['merchant', 'create', '--name', 'Latency', '--webhook-url', rx.url, '--json'], env);
  if (created.code !== 0) throw new Error(`merchant create failed: ${created.stderr}`);
  const creds = JSON.parse(created.stdout) as { apiKey: string; apiSecret: string };
  const pool = join(mkdtempSync(join(tmpdir(), 'cg-latency-')), 'pool.txt');
  writeFileSync(pool, Array.from({ length: PAYMENTS }, () => Wallet.createRandom().address).join('\n'));
  await runCli(['wallets', 'seed', '--chain', 'ethereum', '--file', pool], env);

  const db = await openDatabase(tdb.url);
  cleanups.push(() => db.close());
  const head = BigInt(await node.send<string>('eth_blockNumber', []));
  const indexer = spawnIndexer(['ethereum', '--from-block', (head + 1n).toString()], env);
  cleanups.push(() => indexer.stop());
  await waitFor('the indexer reports', async () => (await db.em().findOne(IndexerCursor, { chain: 'ethereum' }, { refresh: true }))?.headSeenAt, 60_000, 100);
  const serve = await spawnServe(env);
  cleanups.push(() => serve.stop());

  const api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const raw = body === undefined ? '' : JSON.stringify(body);
    const headers = signRequest({ ...creds, method, path, body: raw });
    if (body === undefined) delete headers['Content-Type'];
    const res = await fetch(serve.url + path, { method, headers, body: body === undefined ? undefined : raw });
    const json = (await res.json()) as { data: T };
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json.data;
  };
  /** When the API first shows one of `statuses` (polled every API_POLL_MS). */
  const seen = async (id: string, statuses: string[]): Promise<number> => {
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(API_POLL_MS)) {
      const { status } = await api<{ status: string }>('GET', `/api/v1/payments/${id}/status`);
      if (statuses.includes(status)) return Date.now();
    }
    throw new Error(`payment ${id} never reached ${statuses.join('/')}`);
  };
  const completedHook = (id: string) =>
    waitFor(`payment.completed for ${id}`, async () => rx.requests.find((r: ReceivedRequest) => {
      const event = JSON.parse(r.rawBody.toString('utf8')) as { type: string; data: { payment?: { id: string } } };
      return event.type === 'payment.completed' && event.data.payment?.id === id;
    }), 60_000, 5);

  const usdc = fx.usdc.connect(fx.payer) as Contract;
  const r = { detected: [] as number[], completed: [] as number[], delivered: [] as number[], transferRecorded: [] as number[], completedRecorded: [] as number[], senderPickup: [] as number[], post: [] as number[] };
  console.log(`chaingate latency bench: ${PAYMENTS} payments, ${DIALECT}, indexer poll ${POLL_MS} ms, ${CONFIRMATIONS} confirmations, webhook sender poll ${WEBHOOK_POLL_MS === undefined ? 'at its default' : `${WEBHOOK_POLL_MS} ms`}, API polled every ${API_POLL_MS} ms`);
  for (let i = 0; i < PAYMENTS; i++) {
    const invoice = await api<{ id: string }>('POST', '/api/v1/invoices', { orderId: `latency-${i}`, amount: '25', currency: 'USD' });
    const { payment } = await api<{ payment: { id: string; paymentAddress: string; amount: string } }>('POST', `/api/v1/invoices/${invoice.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC' });

    // A random phase against the indexer's poll, as a buyer's transfer has.
    await sleep(Math.random() * POLL_MS);
    const tx = await usdc.getFunction('transfer')(payment.paymentAddress, parseUnits(payment.amount, 6));
    const minedAt = Date.now(); // automine: mined by the time the node answers
    const detectedAt = await seen(payment.id, ['PROCESSING', 'CONFIRMING', 'COMPLETED']);
    await tx.wait();

    for (let b = 2; b < CONFIRMATIONS; b++) await node.mine(1);
    await sleep(Math.random() * POLL_MS);
    await node.mine(1);
    const decidedAt = Date.now();
    const completedAt = await seen(payment.id, ['COMPLETED']);
    const hook = await completedHook(payment.id);

    // Where the time went, from the rows' own stamps (every process runs on this machine's clock).
    const em = db.em();
    const transfer = await em.findOneOrFail(ObservedTransfer, { paymentId: payment.id });
    const row = await em.findOneOrFail(Payment, { id: payment.id });
    const event = JSON.parse(hook.rawBody.toString('utf8')) as { id: string };
    const delivery = await em.findOneOrFail(WebhookDelivery, { event: event.id });
    // Recorded once the receiver has answered.
    const attempt = await waitFor('the attempt row', async () => (await db.em().find(WebhookAttempt, { delivery: delivery.id }, { orderBy: { attemptedAt: 'asc' }, limit: 1 }))[0], 10_000, 20);

    r.detected.push(detectedAt - minedAt);
    r.completed.push(completedAt - decidedAt);
    r.delivered.push(hook.receivedAt - completedAt);
    r.transferRecorded.push(transfer.createdAt.getTime() - minedAt);
    r.completedRecorded.push(row.updatedAt.getTime() - decidedAt);
    r.senderPickup.push(attempt.attemptedAt.getTime() - delivery.createdAt.getTime());
    r.post.push(hook.receivedAt - attempt.attemptedAt.getTime());
    if ((i + 1) % 10 === 0) console.log(`  ${i + 1} payments`);
  }

  console.log(line('(a) transfer mined -> PROCESSING/CONFIRMING on the API', r.detected));
  console.log(line('      of which: mined -> transfer recorded by the indexer', r.transferRecorded));
  console.log(line(`(b) deciding block mined -> COMPLETED on the API`, r.completed));
  console.log(line('      of which: mined -> COMPLETED written by the indexer', r.completedRecorded));
  console.log(line('(c) COMPLETED on the API -> payment.completed received', r.delivered));
  console.log(line('      event recorded -> the sender starts its attempt', r.senderPickup));
  console.log(line('      attempt started -> received', r.post));
  const b99 = percentile([...r.completed].sort((x, y) => x - y), 0.99);
  const c99 = percentile([...r.delivered].sort((x, y) => x - y), 0.99);
  console.log(`targets: (b) p99 <= poll + 250 ms = ${POLL_MS + 250} ms: ${b99 <= POLL_MS + 250 ? 'met' : 'missed'} (${Math.round(b99)} ms); (c) p99 <= 500 ms: ${c99 <= 500 ? 'met' : 'missed'} (${Math.round(c99)} ms)`);
} finally {
  for (const fn of cleanups.reverse()) await Promise.resolve(fn()).catch(() => undefined);
}
