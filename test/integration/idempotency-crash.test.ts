import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { IdempotencyRecord } from '../../src/store/entities/idempotency-record.entity.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { openDatabase } from '../../src/store/orm.ts';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, skipUnless } from '../helpers/databases.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { spawnServe } from '../helpers/serve-process.ts';

// Crash-safe idempotency: the claim of a key, the work and the stored answer commit in one
// transaction. A real `serve` is killed with SIGKILL twenty times under a load of signed creations
// (fresh keys); then every key that got no answer is retried: no key may have made two invoices,
// every 201 ever answered must still be what its key replays, and no key may be left in flight.

const CYCLES = 20;
const IN_FLIGHT = 8;

for (const dialect of DIALECTS) {
  describe(`idempotency under kill -9 on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test(`${CYCLES} SIGKILLs under load: 0 duplicates, 0 lost 201s, 0 keys stuck in flight`, async (t) => {
      const tdb = await createTestDatabase(dialect, { migrated: dialect === 'postgresql' });
      t.after(() => tdb.drop());
      const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'k'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ rateLimit: { enabled: false } }) };
      const creds = JSON.parse((await runCli(['merchant', 'create', '--name', 'Crash Shop', '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
      const create = async (url: string, key: string) => {
        const body = JSON.stringify({ orderId: key, amount: '2500', currency: 'USD' });
        const res = await fetch(`${url}/api/v1/invoices`, { method: 'POST', headers: signRequest({ ...creds, method: 'POST', path: '/api/v1/invoices', body, idempotencyKey: key }), body });
        return { status: res.status, json: (await res.json()) as { data?: { id: string } } };
      };

      const answered = new Map<string, string>(); // key -> invoice id it was answered with
      const unanswered = new Set<string>();
      let killedMidway = 0;
      for (let cycle = 0; cycle < CYCLES; cycle++) {
        const serve = await spawnServe(env);
        // This cycle's own unanswered keys: whether *this* kill cut requests off.
        const cutOff = new Set<string>();
        let alive = true;
        const workers = Array.from({ length: IN_FLIGHT }, async () => {
          while (alive) {
            const key = randomUUID();
            try {
              const res = await create(serve.url, key);
              if (res.status === 201 && res.json.data) answered.set(key, res.json.data.id);
              else {
                unanswered.add(key);
                cutOff.add(key);
              }
            } catch {
              unanswered.add(key); // the connection died with the process
              cutOff.add(key);
              return;
            }
          }
        });
        await new Promise((r) => setTimeout(r, 60 + Math.floor(Math.random() * 240)));
        alive = false;
        await serve.stop('SIGKILL');
        await Promise.all(workers);
        if (cutOff.size) killedMidway++;
      }
      assert.ok(answered.size > CYCLES, `load was served (${answered.size} answered)`);
      assert.ok(killedMidway > CYCLES / 2, `most kills cut requests off (${killedMidway} of ${CYCLES})`);

      // Retry every key that got no answer, as a client would.
      const serve = await spawnServe(env);
      t.after(() => serve.stop());
      for (const key of unanswered) {
        const res = await create(serve.url, key);
        assert.equal(res.status, 201, `retry of ${key}`);
        answered.set(key, res.json.data!.id);
      }
      const db = await openDatabase(tdb.url);
      t.after(() => db.close());
      const invoices = await db.em().find(Invoice, {});
      const byOrder = new Map<string, string[]>();
      for (const inv of invoices) byOrder.set(inv.orderId, [...(byOrder.get(inv.orderId) ?? []), inv.id]);
      const duplicates = [...byOrder].filter(([, ids]) => ids.length > 1);
      assert.deepEqual(duplicates, [], 'no key made two invoices');
      for (const [key, id] of answered) assert.deepEqual(byOrder.get(key), [id], `the 201 answered for ${key} is the invoice stored`);
      assert.equal(await db.em().count(IdempotencyRecord, { state: 'IN_FLIGHT' }), 0, 'no key is left in flight');
      assert.equal(invoices.length, answered.size, 'every invoice belongs to an answered key');
    });
  });
}
