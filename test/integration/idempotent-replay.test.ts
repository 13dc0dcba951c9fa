import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, skipUnless } from '../helpers/databases.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { spawnServe } from '../helpers/serve-process.ts';

// A replayed Idempotency-Key is one read and one answer: the stored bytes again, and nothing in the
// log at error level (a Fastify reply is a thenable, and awaiting one used to restart the claim).

for (const dialect of DIALECTS) {
  describe(`idempotent replays on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('50 creations replayed 3 times each: byte-identical answers, no error-level log line', async (t) => {
      const tdb = await createTestDatabase(dialect);
      t.after(() => tdb.drop());
      const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'k'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ rateLimit: { enabled: false } }) };
      if (dialect === 'postgresql') assert.equal((await runCli(['migrate'], env)).code, 0);
      const creds = JSON.parse((await runCli(['merchant', 'create', '--name', 'Replay Shop', '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
      const serve = await spawnServe(env);
      t.after(() => serve.stop());
      const create = async (key: string) => {
        const body = JSON.stringify({ orderId: key, amount: '2500', currency: 'USD' });
        const res = await fetch(`${serve.url}/api/v1/invoices`, { method: 'POST', headers: signRequest({ ...creds, method: 'POST', path: '/api/v1/invoices', body, idempotencyKey: key }), body });
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
