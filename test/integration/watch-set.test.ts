import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { applyPaymentFact } from '../../src/store/lifecycle.ts';
import { createWatchSet, type WatchSetOptions } from '../../src/indexer/watch-set.ts';
import type { Logger } from '../../src/logger.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

// The indexer keeps its watch set between polls and reads only what changed (src/indexer/watch-set.ts).
// Payments are opened through the real gateway checkout, as serve writes them; after every poll the
// set must equal a full read made at the same chain time.

const KEY = { chain: 'ethereum', network: 'mainnet', isTestnet: false };
const HOUR = 3_600_000;

async function open(d: TestDaemon): Promise<Payment> {
  const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `o-${Math.random()}`, amount: '25', currency: 'USD' });
  assert.equal(inv.status, 201, inv.text);
  const res = await d.signed('POST', `/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'USDC' });
  assert.equal(res.status, 201, res.text);
  return d.common.db.em().findOneOrFail(Payment, { id: res.json.data.payment.id });
}

/** As if written by a process whose clock runs `ms` behind this one. */
async function stampedBehind(d: TestDaemon, p: Payment, ms: number): Promise<void> {
  const at = new Date(Date.now() - ms);
  await d.common.db.em().nativeUpdate(Payment, { id: p.id }, { createdAt: at, updatedAt: at });
  const row = await d.common.db.em().findOneOrFail(Payment, { id: p.id }, { refresh: true });
  assert.equal(row.updatedAt.getTime(), at.getTime());
}

for (const dialect of DIALECTS) {
  describe(`the indexer's watch set (${dialect})`, { skip: await skipUnless(dialect) }, () => {
    test('a payment opened between two polls is watched at the next; a closed one leaves; every poll equals a full read', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(8, 3));
      const options: WatchSetOptions = { db: d.common.db, key: KEY, paymentContract: null, lateWatchMs: 0 };
      // No full read after the first: only the reads of changes keep it right.
      const watch = createWatchSet({ ...options, fullReadMs: HOUR });
      const fullRead = async (at: Date) => [...(await createWatchSet(options).at(at)).addresses].sort();
      const poll = async (at: Date) => {
        const addresses = [...(await watch.at(at)).addresses].sort();
        assert.deepEqual(addresses, await fullRead(at), 'the same set as a full read');
        return addresses;
      };

      assert.deepEqual(await poll(new Date()), []);
      const a = await open(d);
      const b = await open(d);
      assert.deepEqual(await poll(new Date()), [a.address, b.address].sort());
      const c = await open(d);
      assert.deepEqual(await poll(new Date()), [a.address, b.address, c.address].sort(), 'opened between two polls, watched at the next');

      // The chain's time passes a's window: still watched while PENDING (money may yet arrive in time).
      const past = new Date(a.expiresAt.getTime() + 1);
      assert.ok((await poll(past)).includes(a.address));
      await d.common.db.write((x) => applyPaymentFact(x, a.id, 'windowClosed', a.expiresAt));
      const afterClose = await poll(past);
      assert.ok(!afterClose.includes(a.address), 'closed and past its window: left at the next poll');
      assert.ok(afterClose.includes(b.address) && afterClose.includes(c.address), 'the live ones stay');

      // A reorg's rollback moves the chain's time back: a is within its late-watch window again.
      assert.ok((await poll(new Date(a.expiresAt.getTime() - 1))).includes(a.address));

      // serve on a machine whose clock runs 30 s behind: within the overlap, read at the next poll.
      const e = await open(d);
      await stampedBehind(d, e, 30_000);
      assert.ok((await poll(new Date())).includes(e.address));
    });

    test('a change stamped further back than the overlap is found by the periodic full read, with a warning', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(4, 4));
      const warnings: string[] = [];
      const log = { warn: (_: unknown, msg: string) => warnings.push(msg), debug: () => undefined } as unknown as Logger;
      const watch = createWatchSet({ db: d.common.db, key: KEY, paymentContract: null, lateWatchMs: 0, overlapMs: 5_000, fullReadMs: 1_000, log });
      const a = await open(d);
      assert.deepEqual([...(await watch.at(new Date())).addresses], [a.address]);
      const b = await open(d);
      await stampedBehind(d, b, 60_000);
      assert.ok(!(await watch.at(new Date())).addresses.has(b.address), 'a read of changes cannot see it');
      await new Promise((r) => setTimeout(r, 1_000));
      assert.ok((await watch.at(new Date())).addresses.has(b.address), 'the full read does');
      assert.equal(warnings.length, 1);
      assert.match(warnings[0]!, /full read found payments the reads of changes missed/);
    });
  });
}
