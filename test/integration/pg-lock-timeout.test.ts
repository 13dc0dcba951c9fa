import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { skipUnless } from '../helpers/databases.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { createInvoice, newShop } from '../helpers/serve-shop.ts';

// Another session holding a lock on PostgreSQL (an operator's LOCK TABLE, a long migration) makes
// serve's writes wait at most lock_timeout, then answer 503 DATABASE_BUSY: never a hang, and the
// reads and /healthz keep answering meanwhile.

describe('a table lock held by another PostgreSQL session', { skip: await skipUnless('postgresql') }, () => {
  test('writes get 503 DATABASE_BUSY within seconds, /healthz answers, and after the release they succeed', async (t) => {
    const shop = await newShop('postgresql', 'Lock Shop');
    t.after(() => shop.drop());
    const serve = await spawnServe(shop.env);
    t.after(() => serve.stop());
    const create = async () => {
      const res = await createInvoice(serve.url, shop.creds, randomUUID(), undefined, { signal: AbortSignal.timeout(30_000) });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), code: ((await res.json()) as { error?: { code: string } }).error?.code };
    };
    assert.equal((await create()).status, 201);

    const holder = new pg.Client({ connectionString: shop.url });
    await holder.connect();
    await holder.query('begin');
    await holder.query('lock table invoice in access exclusive mode');
    const started = Date.now();
    const pending = create();
    const health: number[] = [];
    while (Date.now() - started < 3_000) {
      const at = Date.now();
      assert.equal((await fetch(`${serve.url}/healthz`, { signal: AbortSignal.timeout(5_000) })).status, 200);
      health.push(Date.now() - at);
      await new Promise((r) => setTimeout(r, 200));
    }
    const refused = await pending;
    const waited = Date.now() - started;
    await holder.query('commit');
    await holder.end();

    assert.deepEqual(refused, { status: 503, retryAfter: '1', code: 'DATABASE_BUSY' });
    assert.ok(waited < 20_000, `answered after ${waited} ms`);
    assert.ok(Math.max(...health) < 1000, `the slowest /healthz took ${Math.max(...health)} ms`);
    assert.equal((await create()).status, 201);
  });
});
