import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createHttpClient } from '../../src/indexers/http-client.ts';
import { createSolanaSource } from '../../src/indexers/solana/solana-source.ts';
import { createLogger } from '../../src/logger.ts';
import { listenLocal } from '../helpers/local-server.ts';
import { key } from '../helpers/solana-sim.ts';

// The Solana reader on an answer in Agave's exact getBlock shape (test/fixtures/solana, its source
// named inside): a v0 transaction paying an account loaded through an address lookup table, a
// Token-2022 transferChecked, a failed transfer. Served as the node would, read by the real client.

const FIXTURE = new URL('../fixtures/solana/getblock-accounts.json', import.meta.url);

test('recorded-format getBlock: v0 lookup-table recipient, Token-2022 deposit credited to the owner, failed transaction passed over', async (t) => {
  const deposits = { DEPOSIT_SOL: key(), DEPOSIT_TOKEN: key(), DEPOSIT_FAILED: key() };
  let text = readFileSync(FIXTURE, 'utf8');
  for (const [placeholder, address] of Object.entries(deposits)) text = text.replaceAll(placeholder, address);
  const answer = JSON.parse(text) as { result: { parentSlot: number } };
  const slot = answer.result.parentSlot + 1;
  const asked: unknown[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      const reply = (payload: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, ...(payload as object) }));
      if (call.method === 'getSlot') return reply({ result: slot + 40 });
      if (call.method === 'getBlock' && call.params[0] === slot) {
        asked.push(call.params[1]);
        return reply({ result: answer.result });
      }
      return reply({ error: { code: -32601, message: 'Method not found' } });
    });
  });
  const local = await listenLocal(server);
  t.after(() => local.close());
  const source = createSolanaSource({ http: createHttpClient({ baseUrl: local.url, timeoutMs: 2000, log: createLogger('silent') }) });
  const range = await source.fetchRange(BigInt(slot), BigInt(slot), { addresses: new Set(Object.values(deposits)), paymentContract: null });

  assert.deepEqual(asked, [{ encoding: 'json', transactionDetails: 'accounts', maxSupportedTransactionVersion: 0, rewards: false, commitment: 'confirmed' }]);
  assert.deepEqual(range.blocks.map((b) => [b.number, b.hash, b.parentHash, b.timestamp]), [[BigInt(slot), '6F5hkvh6mPsQo7oXPDoV1gR8PHsJ2Lwh9Fvdd2Xe3Cpx', '9fzMvgnpk8JU3jJHfPFnmfv8wHtKBaRyqcQT4bgZqTQc', 1735689612]]);
  assert.deepEqual(
    range.transfers.map((x) => [x.to, x.token, x.amount, x.kind, x.txHash.slice(0, 8)]),
    [
      [deposits.DEPOSIT_SOL, null, 1_250_000_000n, 'native', '4Nd1mBQt'],
      [deposits.DEPOSIT_TOKEN, '2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo', 25_000_000n, 'token', '3tXk5Bq7'],
    ],
    'the lookup-table account and the Token-2022 owner are found; the failed transfer moves nothing',
  );
});
