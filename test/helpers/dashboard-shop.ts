import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { openDatabase, type Database } from '../../src/store/orm.ts';
import { leasedPayment, regtestAddress } from './bitcoin-pool.ts';
import { paidInvoice } from './ledger-rows.ts';
import { createInvoice } from './serve-shop.ts';
import { totpAt } from '../../src/domain/totp.ts';
import { runCli } from './cli.ts';
import { createTestDatabase, type DialectName } from './databases.ts';
import { dashboardClient, PASSWORD, setupTokenOf, type DashboardClient } from './dashboard.ts';
import { writeConfigFile } from './indexer-process.ts';
import { spawnServe, type ServeProcess } from './serve-process.ts';

// A shop for the dashboard's tests against the real binary: a fresh database, merchant points made
// by `chaingate merchant create`, a real `serve` process, and users made by `chaingate users create`
// who sign in through the set-up link with a password and TOTP as a browser would.

export interface ShopPoint {
  id: string;
  apiKey: string;
  apiSecret: string;
}

export interface DashboardShop {
  env: Record<string, string>;
  serve: ServeProcess;
  url: string;
  point(name: string, webhookUrl?: string): Promise<ShopPoint>;
  /** A user made by the operator and signed in (password, TOTP); the client holds a full session. */
  user(email: string, role: string, pointIds?: string[]): Promise<DashboardClient & { email: string; totpSecret: string }>;
  /** The set-up link of a new user, not yet used (the browser tests walk it themselves). */
  setupLink(email: string, role: string, pointIds?: string[]): Promise<string>;
}

export async function startDashboardShop(t: { after(fn: () => Promise<void> | void): void }, dialect: DialectName, config: Record<string, unknown> = {}): Promise<DashboardShop> {
  const tdb = await createTestDatabase(dialect, { migrated: dialect === 'postgresql' });
  t.after(() => tdb.drop());
  const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'k'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ rateLimit: { enabled: false }, ...config }) };
  // The first command migrates a SQLite database; serve then finds it ready.
  const points: ShopPoint[] = [];
  const point = async (name: string, webhookUrl?: string): Promise<ShopPoint> => {
    const made = await runCli(['merchant', 'create', '--name', name, ...(webhookUrl ? ['--webhook-url', webhookUrl] : []), '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    const p = JSON.parse(made.stdout) as ShopPoint;
    points.push(p);
    return p;
  };
  await runCli(['migrate'], env);
  const serve = await spawnServe(env);
  t.after(() => serve.stop().then(() => undefined));
  const setupLink = async (email: string, role: string, pointIds: string[] = []) => {
    const made = await runCli(['users', 'create', '--email', email, '--role', role, ...(pointIds.length ? ['--points', pointIds.join(',')] : []), '--json'], env);
    assert.equal(made.code, 0, made.stderr);
    return (JSON.parse(made.stdout) as { setupLink: string }).setupLink;
  };
  return {
    env,
    serve,
    url: serve.url,
    point,
    setupLink,
    async user(email, role, pointIds = []) {
      const link = await setupLink(email, role, pointIds);
      const c = dashboardClient(serve.url);
      const token = setupTokenOf(link);
      await c.get(`/dashboard/setup?token=${token}`);
      assert.equal((await c.post('/dashboard/api/setup', { token, password: PASSWORD, confirm: PASSWORD })).status, 303);
      const enrol = await c.get('/dashboard/enrol');
      const secret = /id="totp-secret">([A-Z2-7]+)</.exec(enrol.text)![1]!;
      const sealed = /name="sealed" value="([^"]+)"/.exec(enrol.text)![1]!;
      assert.equal((await c.post('/dashboard/api/totp', { sealed, code: totpAt(secret, Date.now()) })).status, 200);
      await c.get('/dashboard/points');
      return Object.assign(c, { email, totpSecret: secret });
    },
  };
}

/** Webhook settings for tests: the local receiver allowed, a retry every second, polled often. */
export const HOOKS = { allowPrivateNetworks: true, retryScheduleSeconds: [1], retryJitter: 0, pollIntervalMs: 50, maxAttempts: 20, timeoutMs: 2000, leaseSeconds: 10 };

/** An event of the point made the real way: a signed invoice, then its cancellation (invoice.cancelled). */
export async function cancelledInvoice(base: string, p: ShopPoint): Promise<string> {
  const made = await createInvoice(base, p, `order-${randomUUID()}`);
  assert.equal(made.status, 201, await made.clone().text());
  const id = ((await made.json()) as { data: { id: string } }).data.id;
  const path = `/api/v1/invoices/${id}`;
  const res = await fetch(base + path, { method: 'DELETE', headers: signRequest({ apiKey: p.apiKey, apiSecret: p.apiSecret, method: 'DELETE', path, body: '', idempotencyKey: randomUUID() }) });
  assert.equal(res.status, 200, await res.text());
  return id;
}

const PRICING = { mode: 'convert', rate: '65000.5', source: 'static', fiat: 'USD', at: new Date().toISOString() };

/** Money on two points: a completed payment each, late funds on the first, and a final sweep of the shared pool. */
export async function seedLedger(url: string, a: string, b: string): Promise<void> {
  const db: Database = await openDatabase(url);
  try {
    const em = db.em();
    const invoiceA = paidInvoice(em, a, 'INV-REPORT-A');
    const invoiceB = paidInvoice(em, b, 'INV-REPORT-B');
    const now = new Date();
    const paid = (invoice: ReturnType<typeof paidInvoice>, merchantId: string, ref: string, byte: number, received: string, status: 'COMPLETED' | 'EXPIRED' = 'COMPLETED') =>
      leasedPayment(em, invoice, merchantId, { referenceId: ref, status, address: regtestAddress(byte), amount: '0.05', receivedAmount: received, requiredConfirmations: 1, transactionHash: status === 'COMPLETED' ? String(byte).padStart(2, '0').repeat(32) : null, completedAt: status === 'COMPLETED' ? now : null, metadata: { pricing: PRICING } });
    await paid(invoiceA, a, 'PAY-REPORT-A1', 0x71, '0.04999973');
    const late = await paid(invoiceA, a, 'PAY-REPORT-A2', 0x72, '0', 'EXPIRED');
    await paid(invoiceB, b, 'PAY-REPORT-B1', 0x73, '0.05000001');
    em.create(ObservedTransfer, { chain: 'bitcoin', network: 'REGTEST', txHash: 'cd'.repeat(32), logIndex: 0, blockNumber: '7', blockHash: '00'.repeat(32), fromAddress: null, tokenAddress: null, toAddress: regtestAddress(0x72), symbol: 'BTC', amount: '1234', paymentId: late.id, status: 'LATE', note: 'after the window' } as ObservedTransfer);
    await em.flush();
    const plan = { format: 'chaingate-sweep-plan/1', id: '5e'.repeat(32), kind: 'sweep', chain: 'bitcoin', deposits: [{ moves: [{ symbol: 'BTC', decimals: 8, amount: '4999000' }] }] };
    await db.write(async (x) => {
      await x.run('insert into sweep_plan (id, chain, network, is_testnet, kind, to_address, fee_payer, body, created_at) values (?, ?, ?, ?, ?, ?, null, ?, ?)', [plan.id, 'bitcoin', 'REGTEST', true, 'sweep', regtestAddress(0x61), JSON.stringify(plan), now]);
      await x.run(
        `insert into sweep_tx (id, plan_id, tx_key, chain, network, is_testnet, txid, raw, deposits, moves, fee, status, error, attempts, sent_at, final_at, created_at, updated_at)
         values (?, ?, 'tx-0', 'bitcoin', 'REGTEST', ?, ?, '00', ?, ?, ?, 'FINAL', null, 1, ?, ?, ?, ?)`,
        ['sweeptxreport'.padEnd(32, '0'), plan.id, true, '77'.repeat(32), JSON.stringify([regtestAddress(0x71)]), JSON.stringify({ BTC: '4999000' }), '1000', now, now, now, now],
      );
    });
  } finally {
    await db.close();
  }
}

