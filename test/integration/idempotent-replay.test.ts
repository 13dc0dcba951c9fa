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

    test('two identical requests at once: one runs, the other waits and replays its answer (no 409), idle and under load', async (t) => {
      const shop = await newShop(dialect, 'Pair Shop');
      t.after(() => shop.drop());
      const serve = await spawnServe(shop.env);
      t.after(() => serve.stop());
      const create = async (key: string) => {
        const res = await createInvoice(serve.url, shop.creds, key);
        return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.text() };
      };
      const pair = async (key: string) => {
        const answers = await Promise.all([create(key), create(key)]);
        assert.deepEqual(answers.map((a) => a.status), [201, 201], `${key}: ${answers.map((a) => a.body).join(' / ')}`);
        assert.deepEqual(answers.map((a) => a.replayed ?? 'first').sort(), ['first', 'true'], key);
        assert.equal(answers[0]!.body, answers[1]!.body, 'the replay is the first answer, byte for byte');
      };
      // Idle: one pair at a time.
      for (let i = 0; i < 100; i++) await pair(randomUUID());
      // Under load: 30 pairs among 90 other creations, all sent at once.
      await Promise.all([
        ...Array.from({ length: 30 }, () => pair(randomUUID())),
        ...Array.from({ length: 90 }, async () => assert.equal((await create(randomUUID())).status, 201)),
      ]);
    });
  });
}
