import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEther, parseUnits, type Contract, type Wallet } from 'ethers';
import pg from 'pg';
import { IndexerCursor } from '../../src/store/entities/indexer-cursor.entity.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { WebhookEvent } from '../../src/store/entities/webhook-event.entity.ts';
import { openDatabase } from '../../src/store/orm.ts';
import { sweepExpired } from '../../src/store/expiry.ts';
import { DIALECTS, skipUnless, type DialectName } from '../helpers/databases.ts';
import { startEvmWorld, type EvmWorld } from '../helpers/evm-world.ts';
import { waitFor, writeConfigFile } from '../helpers/indexer-process.ts';
import { prng } from '../helpers/prng.ts';

// Replay determinism (docs/indexers.md): the ledger is a function of the chain. One chain history on
// a real Hardhat node is indexed by an indexer that never stopped, by indexers killed with SIGKILL
// at random points and restarted, and with ranges of 1, 7 and 500 blocks; every ledger must be
// identical: transfers and their verdicts, amounts, confirmations, statuses, completedAt, events.

const REQUIRED = 6;

async function send(token: Contract, from: Wallet, to: string, amount: bigint): Promise<void> {
  const tx = await (token.connect(from) as Contract).getFunction('transfer')(to, amount);
  await tx.wait();
}

async function sendEth(from: Wallet, to: string, value: bigint): Promise<void> {
  await (await from.sendTransaction({ to, value })).wait();
}

interface Clone {
  url: string;
  drop(): Promise<void>;
}

/** A copy of the world's database as it is now (payments opened, nothing indexed yet). */
async function cloneDatabase(w: EvmWorld, dialect: DialectName): Promise<Clone> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'cg-replay-'));
    const path = join(dir, 'clone.db');
    await w.d.common.db.em().getConnection().execute(`vacuum into '${path}'`);
    return { url: `sqlite:${path}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const source = w.d.common.config.database.url;
  const name = `chaingate_r_${randomBytes(5).toString('hex')}`;
  // Create and drop through the server's maintenance database: the source is dropped first at teardown.
  const maintenance = new URL(source);
  maintenance.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: maintenance.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const target = new URL(source);
  target.pathname = `/${name}`;
  execFileSync('sh', ['-c', `pg_dump --no-owner --no-privileges "$SRC" | psql -q -v ON_ERROR_STOP=1 "$DST" >/dev/null`], {
    env: { ...process.env, SRC: source, DST: target.toString() },
  });
  return {
    url: target.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: maintenance.toString() });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

/** Everything the ledger decides, in a comparable form (event ids are random; everything else must match). */
async function readLedger(url: string) {
  const db = await openDatabase(url);
  try {
    const em = db.em();
    const payments = (await em.find(Payment, {}, { orderBy: { address: 'asc' } })).map((p) => ({
      address: p.address,
      status: p.status,
      receivedAmount: p.receivedAmount,
      confirmations: p.confirmations,
      transactionHash: p.transactionHash ?? null,
      blockNumber: p.blockNumber ?? null,
      completedAt: p.completedAt?.toISOString() ?? null,
      amountDifference: p.metadata.amountDifference ?? null,
    }));
    const transfers = (await em.find(ObservedTransfer, {})).map((t) => `${t.blockNumber} ${t.txHash} ${t.logIndex} ${t.toAddress} ${t.amount} ${t.status} ${t.paymentId ?? '-'}`).sort();
    const events = (await em.find(WebhookEvent, {})).map((e) => {
      const body = JSON.parse(e.payload) as Record<string, unknown>;
      delete body.id;
      return JSON.stringify(body);
    }).sort();
    const cursor = await em.findOneOrFail(IndexerCursor, { chain: 'ethereum' });
    return { payments, transfers, events, cursor: cursor.blockNumber };
  } finally {
    await db.close();
  }
}

for (const dialect of DIALECTS) {
  describe(`ledger replay determinism on ${dialect} (real Hardhat node, real indexer processes)`, { skip: await skipUnless(dialect) }, () => {
    test('live, kill -9 at random points, and ranges of 1, 7 and 500 blocks give identical ledgers', async (t) => {
      const w = await startEvmWorld(t, { dialect, confirmations: REQUIRED, blockTimeMs: 200, indexer: { maxBlocksPerRange: 20, minPollMs: 100 } });
      const usd = (n: string) => parseUnits(n, 6);
      const split = await w.openPayment('USDT'); // 40 then 60 five blocks later: both credited
      const extra = await w.openPayment('USDC'); // completes, then more arrives: EXTRA + payment.late_funds
      const native = await w.openPayment('ETH');
      const lookAlike = await w.openPayment('USDC'); // a look-alike token: never credited
      const late = await w.openPayment('USDC'); // sent after the window: LATE + payment.late_funds
      const untouched = await w.openPayment('USDT');
      const clones: Clone[] = [];
      for (let i = 0; i < 4; i++) clones.push(await cloneDatabase(w, dialect));
      t.after(async () => {
        for (const c of clones) await c.drop();
      });

      const start = BigInt(await w.node.send<string>('eth_blockNumber', [])) + 1n;
      const live = w.startIndexer(['--from-block', start.toString()]);
      const opened = new Map<string, Awaited<ReturnType<typeof openDatabase>>>();
      t.after(async () => {
        for (const db of opened.values()) await db.close();
      });
      const cursorOf = async (url: string) => {
        if (!opened.has(url)) opened.set(url, await openDatabase(url));
        return BigInt((await opened.get(url)!.em().findOne(IndexerCursor, { chain: 'ethereum' }, { refresh: true }))?.blockNumber ?? '-1');
      };
      const head = async () => BigInt(await w.node.send<string>('eth_blockNumber', []));
      // The live indexer is caught up after every step, so it sees the history as it happens.
      const caughtUp = async () => {
        const h = await head();
        await waitFor(`live indexer at ${h}`, async () => (await cursorOf(w.d.common.config.database.url)) >= h, 30_000, 50);
      };
      const step = async (fn: () => Promise<void>) => {
        await fn();
        await caughtUp();
      };

      await step(() => send(w.fx.usdt, w.fx.payer, split.address, usd('40')));
      await step(() => w.node.mine(4));
      await step(() => send(w.fx.usdt, w.fx.payer, split.address, usd('60')));
      await step(() => send(w.fx.usdc, w.fx.payer, extra.address, usd('25')));
      await step(() => sendEth(w.fx.payer, native.address, parseEther('0.01')));
      await step(() => send(w.fx.fakeUsdc, w.fx.payer, lookAlike.address, usd('25')));
      await step(() => w.node.mine(REQUIRED));
      await step(() => send(w.fx.usdc, w.fx.payer, extra.address, usd('5')));
      // Two hours later by the chain's clock: past every payment window.
      await w.node.send('evm_increaseTime', [7200]);
      await step(() => send(w.fx.usdc, w.fx.payer, late.address, usd('25')));
      await step(() => w.node.mine(REQUIRED + 1));
      const final = await head();
      await caughtUp();
      await live.stop();
      const expected = await readLedger(w.d.common.config.database.url);

      // The history is what the test meant it to be (so that "identical" is not identical emptiness).
      const byAddress = new Map(expected.payments.map((p) => [p.address, p]));
      assert.equal(byAddress.get(split.address)?.receivedAmount, '100', '40 + 60 are both credited');
      assert.equal(byAddress.get(split.address)?.status, 'COMPLETED');
      assert.equal(byAddress.get(extra.address)?.receivedAmount, '25');
      assert.equal(byAddress.get(native.address)?.status, 'COMPLETED');
      assert.equal(byAddress.get(lookAlike.address)?.status, 'PENDING');
      assert.equal(byAddress.get(late.address)?.receivedAmount, '0');
      assert.equal(byAddress.get(untouched.address)?.status, 'PENDING');
      assert.equal(byAddress.get(split.address)?.confirmations, REQUIRED);
      assert.ok(expected.transfers.some((l) => l.includes(' EXTRA ')), 'an EXTRA transfer');
      assert.ok(expected.transfers.some((l) => l.includes(' LATE ')), 'a LATE transfer');
      assert.ok(expected.transfers.some((l) => l.includes(' NOT_CREDITED ')), 'a look-alike');
      assert.equal(expected.events.filter((e) => e.includes('"payment.late_funds"')).length, 2, 'late funds are reported: after completion and after the window');
      assert.equal(expected.events.filter((e) => e.includes('"payment.completed"')).length, 3);
      assert.equal(expected.events.filter((e) => e.includes('"payment.confirming"')).length, 3);
      assert.equal(expected.cursor, final.toString());

      const configFor = (maxBlocksPerRange: number) =>
        writeConfigFile({ chains: w.chains, indexer: { ...w.indexerConfig, maxBlocksPerRange } });
      const runToEnd = async (url: string, config: string, args: string[]) => {
        const p = w.startIndexer(args, { CHAINGATE_DATABASE_URL: url, CHAINGATE_CONFIG: config });
        await waitFor(`replay at ${final}`, async () => (await cursorOf(url)) >= final, 60_000, 50).catch((err: unknown) => {
          throw new Error(`${String(err)}\n${p.output().slice(-3000)}`);
        });
        await p.stop();
      };

      // (c) other range sizes, from the same start.
      for (const [i, size] of [1, 7, 500].entries()) {
        const clone = clones[i]!;
        await runToEnd(clone.url, configFor(size), ['--from-block', start.toString()]);
        assert.deepEqual(await readLedger(clone.url), expected, `maxBlocksPerRange ${size} gives the live ledger`);
      }

      // (b) SIGKILL at random points, restarted from the cursor each time, random range sizes: each
      // run is killed a random few blocks (and milliseconds) after it starts committing, so every
      // run dies mid-way by construction, not by timing.
      const seed = Number(process.env.CHAINGATE_REPLAY_SEED ?? Date.now() % 100_000);
      const random = prng(seed);
      const clone = clones[3]!;
      let first = true;
      let kills = 0;
      let reached = start - 1n;
      while (reached < final && kills < 12) {
        const size = 1 + Math.floor(random() * 5);
        const p = w.startIndexer(first ? ['--from-block', start.toString()] : [], { CHAINGATE_DATABASE_URL: clone.url, CHAINGATE_CONFIG: configFor(size) });
        first = false;
        const target = reached + 1n + BigInt(Math.floor(random() * 6));
        await waitFor('progress to kill at', async () => (await cursorOf(clone.url)) >= (target < final ? target : final) || p.child.exitCode !== null, 30_000, 5);
        await new Promise((r) => setTimeout(r, Math.floor(random() * 40)));
        await p.stop('SIGKILL');
        kills++;
        reached = await cursorOf(clone.url);
      }
      await runToEnd(clone.url, configFor(3), []);
      assert.ok(kills >= 2, `killed ${kills} times`);
      assert.deepEqual(await readLedger(clone.url), expected, `kill -9 ${kills} times (seed ${seed}) gives the live ledger`);
    });

    test('a window that closes while the indexer is down closes at the chain\'s time: funds sent in time are credited, no payment.expired', async (t) => {
      const w = await startEvmWorld(t, { dialect, confirmations: 3, indexer: { minPollMs: 100 } });
      const paid = await w.openPayment('USDT');
      const idle = await w.openPayment('USDC');
      const head = async () => BigInt(await w.node.send<string>('eth_blockNumber', []));
      const cursor = async () => BigInt((await w.d.common.db.em().findOne(IndexerCursor, { chain: 'ethereum' }, { refresh: true }))?.blockNumber ?? '-1');
      const latest = await w.node.send<{ timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
      const windowEnd = new Date((Number(BigInt(latest.timestamp)) + 60) * 1000);
      await w.d.common.db.em().nativeUpdate(Payment, { id: { $in: [paid.id, idle.id] } }, { expiresAt: windowEnd });

      const first = w.startIndexer(['--from-block', ((await head()) + 1n).toString()]);
      await w.node.mine(1);
      const h1 = await head();
      await waitFor('the indexer at the head', async () => (await cursor()) >= h1, 30_000, 50);
      await first.stop();

      // While it is down: the buyer pays within the window, then the chain moves an hour on.
      await send(w.fx.usdt, w.fx.payer, paid.address, parseUnits('25', 6));
      await w.node.send('evm_increaseTime', [3600]);
      await w.node.mine(4);
      const muchLater = new Date(windowEnd.getTime() + 7_200_000);
      await sweepExpired(w.d.common.db, muchLater);
      assert.deepEqual([(await w.payment(paid.id)).status, (await w.payment(idle.id)).status], ['PENDING', 'PENDING'], 'the clock does not close a window the chain has not passed');

      w.startIndexer([]);
      const done = await w.waitStatus(paid.id, ['COMPLETED'], 30_000);
      assert.equal(done.receivedAmount, '25');
      const h2 = await head();
      await waitFor('the indexer at the head again', async () => (await cursor()) >= h2, 30_000, 50);
      await sweepExpired(w.d.common.db, muchLater);
      const expired = await w.payment(idle.id);
      assert.equal(expired.status, 'EXPIRED', 'the chain passed the window: now it closes');

      const events = await w.d.common.db.em().find(WebhookEvent, { paymentId: { $in: [paid.id, idle.id] } }, { orderBy: { createdAt: 'asc' } });
      const of = (id: string) => events.filter((e) => e.paymentId === id).map((e) => e.type);
      assert.deepEqual(of(paid.id).filter((e) => e === 'payment.expired'), [], 'no payment.expired for money sent in time');
      assert.ok(of(paid.id).includes('payment.completed'));
      const idleExpired = events.find((e) => e.paymentId === idle.id && e.type === 'payment.expired');
      assert.equal(idleExpired?.createdAt.toISOString(), windowEnd.toISOString(), 'stamped at the window\'s end, whenever it was applied');
    });
  });
}
