import assert from 'node:assert/strict';
import { openCommon } from '../../src/cli/context.ts';
import type { Common } from '../../src/common.ts';
import { applyRange, rollbackTo, type ChainKey } from '../../src/indexer/ledger.ts';
import type { BlockRef, SeenTransfer } from '../../src/families/source.ts';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { WalletAddress } from '../../src/store/entities/wallet-address.entity.ts';
import { createMerchant } from '../../src/store/merchants.ts';
import { migrate } from '../../src/store/migrate.ts';
import { inTransaction } from '../../src/store/transaction.ts';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { createTestDatabase, type DialectName } from './databases.ts';
import { evmAddresses, TEST_MASTER_KEY } from './daemon.ts';
import { writeConfigFile } from './indexer-process.ts';
import { spawnServe } from './serve-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

// A shop with money in every state the dashboard's overview and invoice detail must show, served by
// a real `chaingate serve` process: invoices and checkouts through its HTTP API, the chain's facts
// through the ledger (the indexer's own write path) on the same database, as an indexer process
// would write them. Ethereum USDT (6 decimals, priced 1:1 against USD), 2 confirmations.

export const USDT = '0xdAC17F958D2ee523a2206206994597C13D831ec7';
const KEY: ChainKey = { chain: 'ethereum', network: 'MAINNET', isTestnet: false };
const OWNER = 'test-indexer';

export interface MoneyShop {
  url: string;
  common: Common;
  /** Point A takes webhooks at a receiver answering 200; point B at one answering 500. */
  pointA: { id: string; apiKey: string; apiSecret: string };
  pointB: { id: string; apiKey: string; apiSecret: string };
  ok: WebhookReceiver;
  failing: WebhookReceiver;
  /** Invoice and payment ids by case. */
  cases: Record<'under' | 'over' | 'late' | 'reorg' | 'stuck' | 'paidB', { invoiceId: string; paymentId: string }>;
  /** An invoice left OPEN (no checkout), with the order id, customer name and metadata given to startMoneyShop. */
  openInvoiceId: string;
  txHashes: Record<'under' | 'over' | 'late' | 'lateExtra' | 'reorg' | 'stuck' | 'paidB', string>;
}

const hash = (n: number, fork = 0) => `0x${fork.toString(16).padStart(2, '0')}${n.toString(16).padStart(62, '0')}`;
const tx = (n: number) => `0x${'ab'}${n.toString(16).padStart(62, '0')}`;

/** Resolves once `check` returns a value other than undefined (polls every 50 ms, up to 20 s). */
export async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startMoneyShop(t: { after(fn: () => Promise<void> | void): void }, dialect: DialectName, extra: { metadata?: Record<string, unknown>; customerName?: string; orderId?: string } = {}): Promise<MoneyShop> {
  const config = {
    rateLimit: { enabled: false },
    webhooks: { allowPrivateNetworks: true },
    checkout: { indexerStaleAfterSeconds: null, availabilityCacheMs: 0 },
    chains: { ethereum: { mainnet: { confirmations: 2 } } },
  };
  const tdb = await createTestDatabase(dialect, { migrated: dialect === 'postgresql' });
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: TEST_MASTER_KEY, CHAINGATE_CONFIG: writeConfigFile(config) };
  const common = await openCommon({ env: { ...env, CHAINGATE_LOG_LEVEL: 'silent' }, overrides: config, skipMigrationCheck: true });
  await migrate(common.db);
  t.after(async () => {
    await common.db.close();
    await tdb.drop();
  });
  const ok = await startWebhookReceiver(t);
  const failing = await startWebhookReceiver(t, () => ({ status: 500, body: 'down for maintenance' }));
  const mk = async (name: string, webhookUrl: string) => {
    const { merchant, apiSecret } = await createMerchant(common.db, common.box, { name, webhookUrl, acceptedChains: null });
    return { id: merchant.id, apiKey: merchant.apiKey, apiSecret };
  };
  const pointA = await mk('Corner Shop', ok.url);
  const pointB = await mk('Back Room', failing.url);
  const addresses = evmAddresses(10, 7);
  await inTransaction(common.db, async (em) => {
    for (const [i, address] of addresses.entries()) em.create(WalletAddress, { chain: 'ethereum', isTestnet: false, address, source: 'test', derivationIndex: i, paymentId: null, leasedAt: null });
  });

  const serve = await spawnServe(env);
  t.after(() => serve.stop().then(() => undefined));
  const url = serve.url;

  const invoice = async (point: typeof pointA, orderId: string, fields: { metadata?: Record<string, unknown>; customerName?: string } = {}) => {
    const body = JSON.stringify({ orderId, amount: '2500', currency: 'USD', customerName: fields.customerName ?? 'Ada Buyer', customerEmail: 'ada@buyer.example', metadata: fields.metadata ?? { cart: 'c-1' } });
    const res = await fetch(`${url}/api/v1/invoices`, { method: 'POST', headers: signRequest({ ...point, method: 'POST', path: '/api/v1/invoices', body, idempotencyKey: orderId }), body });
    assert.equal(res.status, 201, await res.clone().text());
    return ((await res.json()) as { data: { id: string } }).data.id;
  };
  const checkout = async (invoiceId: string) => {
    const res = await fetch(`${url}/checkout/api/v1/invoices/${invoiceId}/checkout`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: JSON.stringify({ blockchain: 'ethereum', cryptoCurrency: 'USDT', method: 'direct' }) });
    assert.equal(res.status, 201, await res.clone().text());
    const payment = ((await res.json()) as { data: { payment: { id: string; paymentAddress: string; amount: string } } }).data.payment;
    assert.equal(payment.amount, '25', 'USD 25.00 is 25 USDT at the peg');
    return payment;
  };

  const made: Record<string, { invoiceId: string; paymentId: string; address: string }> = {};
  for (const [name, point] of [['under', pointA], ['over', pointA], ['late', pointA], ['reorg', pointA], ['stuck', pointA], ['paidB', pointB]] as const) {
    const invoiceId = await invoice(point, `order-${name}`);
    // The page's script reads the invoice through the checkout API; that first read stamps the view.
    if (name === 'under') assert.equal((await fetch(`${url}/checkout/api/v1/invoices/${invoiceId}`)).status, 200);
    const p = await checkout(invoiceId);
    made[name] = { invoiceId, paymentId: p.id, address: p.paymentAddress };
  }
  // The invoice without a checkout carries the caller's fields (hostile strings in the browser test).
  const openInvoiceId = await invoice(pointA, extra.orderId ?? 'order-open', extra);

  // The chain's time: one second after the last checkout, so every chain fact follows it.
  const s = Math.floor(Date.now() / 1000) + 1;
  await until('the chain second to begin', async () => (Date.now() > s * 1000 ? true : undefined));
  const block = (n: number, fork = 0): BlockRef => ({ number: BigInt(n), hash: hash(n, fork), parentHash: hash(n - 1, n - 1 >= 104 ? fork : 0), timestamp: s });
  const txHashes = { under: tx(1), over: tx(2), late: tx(3), lateExtra: tx(4), reorg: tx(5), stuck: tx(6), paidB: tx(7) };
  const transfer = (name: keyof typeof txHashes, to: string, units: bigint, b: BlockRef): SeenTransfer => ({
    txHash: txHashes[name],
    logIndex: 0,
    blockNumber: b.number,
    blockHash: b.hash,
    blockTime: b.timestamp,
    from: '0x00000000000000000000000000000000000000b1',
    to,
    token: USDT,
    amount: units,
    kind: 'token',
    reverted: false,
  });
  await inTransaction(common.db, async (em) => {
    em.create(IndexerCursor, { chain: 'ethereum', network: 'MAINNET', blockNumber: '100', blockHash: hash(100), leaseOwner: OWNER, leaseUntil: new Date(Date.now() + 3_600_000), lastError: null, lastErrorAt: null });
  });
  const range = (blocks: BlockRef[], transfers: SeenTransfer[]) =>
    applyRange(common.db, KEY, { from: blocks[0]!.number, to: blocks.at(-1)!.number, blocks, transfers, windowSize: 64, leaseOwner: OWNER, finalized: null });
  const m = made as Record<keyof MoneyShop['cases'], { invoiceId: string; paymentId: string; address: string }>;
  // Block 101: 24.5 (under), 26.25 (over), 25 (late, then extra), 25 (point B).
  const b101 = block(101);
  await range([b101], [
    transfer('under', m.under.address, 24_500_000n, b101),
    transfer('over', m.over.address, 26_250_000n, b101),
    transfer('late', m.late.address, 25_000_000n, b101),
    transfer('paidB', m.paidB.address, 25_000_000n, b101),
  ]);
  await range([block(102)], []);
  // Block 103: 3 USDT more to the completed payment: late funds.
  const b103 = block(103);
  await range([b103], [transfer('lateExtra', m.late.address, 3_000_000n, b103)]);
  // Block 104 credits the reorg case, then leaves the chain.
  const b104 = block(104);
  await range([b104], [transfer('reorg', m.reorg.address, 25_000_000n, b104)]);
  assert.deepEqual(await rollbackTo(common.db, KEY, b103), [m.reorg.paymentId]);
  // The new chain: 104' without it, 105 with the stuck case's money.
  const b105 = { ...block(105, 1), parentHash: hash(104, 1) };
  await range([{ ...block(104, 1), parentHash: hash(103) }, b105], [transfer('stuck', m.stuck.address, 25_000_000n, b105)]);
  // The stuck case's transfer was seen two hours ago and never confirmed since.
  await common.db.write((x) => x.run('update observed_transfer set created_at = ? where payment_id = ?', [new Date(Date.now() - 2 * 3_600_000), m.stuck.paymentId]));

  return {
    url,
    common,
    pointA,
    pointB,
    ok,
    failing,
    cases: Object.fromEntries(Object.entries(m).map(([k, v]) => [k, { invoiceId: v.invoiceId, paymentId: v.paymentId }])) as MoneyShop['cases'],
    openInvoiceId,
    txHashes,
  };
}
