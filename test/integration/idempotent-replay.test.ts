import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { createInvoice, newShop } from '../helpers/serve-shop.ts';

// A replayed Idempotency-Key is one read and one answer: the stored bytes again, and nothing in the
// log at error level (a Fastify reply is a thenable, and awaiting one used to restart the claim).

for (const dialect of DIALECTS) {
  describe(`idempotent replays on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('50 creations replayed 3 times each: byte-identical answers, no error-level log line', async (t) => {
      const shop = await newShop(dialect, 'Replay Shop');
      t.after(() => shop.drop());
      const serve = await spawnServe(shop.env);
      t.after(() => serve.stop());
      const create = async (key: string) => {
        const res = await createInvoice(serve.url, shop.creds, key);
        return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.text() };
      };
      for (let i = 0; i < 50; i++) {
        const key = randomUUID();
        const first = await create(key);
        assert.equal(first.status, 201, first.body);
        assert.equal(first.replayed, null);
        for (let r = 0; r < 3; r++) assert.deepEqual(await create(key), { ...first, replayed: 'true' });
      }
      await serve.stop();
      const errors = serve.output().split('\n').filter((l) => /"level":(5\d|60)/.test(l) || l.includes('reply.sent'));
      assert.deepEqual(errors, []);
    });
  });
}
