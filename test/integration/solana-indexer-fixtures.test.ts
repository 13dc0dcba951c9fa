import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createHttpClient } from '../../src/families/http-client.ts';
import { createSolanaSource } from '../../src/families/solana/solana-source.ts';
import { createLogger } from '../../src/logger.ts';
import { listenLocal } from '../helpers/local-server.ts';
import { key } from '../helpers/solana-sim.ts';

// The Solana reader on answers in Agave's exact getBlock / getTransaction shapes (test/fixtures/solana,
// each naming its source): a v0 transaction paying an account loaded through an address lookup
// table, a Token-2022 transferChecked, a failed transfer; balances above 2^53 lamports, written as
// bare JSON numbers as Agave writes u64. Served as the node would, read by the real client.

const FIXTURE = new URL('../fixtures/solana/getblock-accounts.json', import.meta.url);
const WHALE_BLOCK = new URL('../fixtures/solana/getblock-whale.json', import.meta.url);
const WHALE_TX = new URL('../fixtures/solana/gettransaction-whale.json', import.meta.url);

/** A fixture's text as the node sends it: placeholders filled, our `_source` note dropped, numbers untouched. */
function answerText(file: URL, fill: Record<string, string>): string {
  let text = readFileSync(file, 'utf8').replace(/^\s*"_source": .*\n/m, '');
  for (const [placeholder, address] of Object.entries(fill)) text = text.replaceAll(placeholder, address);
  return text;
}

type Call = { id: number; method: string; params: unknown[] };

/** A JSON-RPC endpoint answering with raw text (JSON.stringify cannot write a u64 beyond 2^53); unknown calls: -32601. */
async function rawRpc(t: { after(fn: () => Promise<void>): void }, answer: (call: Call) => string | undefined): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const call = JSON.parse(body) as Call;
      const text = answer(call) ?? JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'Method not found' } });
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    });
  });
  const local = await listenLocal(server);
  t.after(() => local.close());
  return local.url;
}

const result = (call: Call, value: unknown) => JSON.stringify({ jsonrpc: '2.0', id: call.id, result: value });

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

test('a block with accounts above 2^53 lamports: the payment beside them is credited exactly and the range is read', async (t) => {
  const deposits = { DEPOSIT_SOL: key(), DEPOSIT_LARGE: key() };
  const text = answerText(WHALE_BLOCK, deposits);
  assert.match(text, /"preBalances": \[18446744073709551000, 0, 1\]/, 'served as the node writes it: a bare JSON number');
  const slot = 336241991;
  const url = await rawRpc(t, (call) => {
    if (call.method === 'getSlot') return result(call, slot + 40);
    if (call.method === 'getBlock' && call.params[0] === slot) return text;
    return undefined;
  });
  const source = createSolanaSource({ http: createHttpClient({ baseUrl: url, timeoutMs: 2000, log: createLogger('silent') }) });
  const range = await source.fetchRange(BigInt(slot), BigInt(slot), { addresses: new Set(Object.values(deposits)), paymentContract: null });

  assert.deepEqual(range.blocks.map((b) => [b.number, b.hash]), [[BigInt(slot), 'FjA8NkdmXpVr1vVPxmettK7xvebLqZNEEzpwkTpwQqVX']], 'the block is read: the cursor moves on');
  assert.deepEqual(
    range.transfers.map((x) => [x.to, x.amount, x.kind, x.txHash.slice(0, 8)]),
    [
      [deposits.DEPOSIT_SOL, 1_250_000_000n, 'native', '4Wse2a82'],
      [deposits.DEPOSIT_LARGE, 1_250_000_001n, 'native', '57MWRXrq'],
    ],
    'paid by a whale, and on top of a balance above 2^53: both rises exact',
  );
});

test('addresses mode: getTransaction whose payer holds more than 2^53 lamports credits the deposit exactly', async (t) => {
  const deposits = { DEPOSIT_SOL: key() };
  const tx = answerText(WHALE_TX, deposits);
  assert.match(tx, /"preBalances": \[13456789123456789, 0, 1\]/);
  const slot = 336241991;
  const signature = '4Wse2a82uGj5i8joBWPgTX6ZteDuc96rzxqhRBQ9Qq8rnnk23q5MELqZprkiPdn4MGiN5WJYCYx6tKrhWDfSjNgT';
  const header = { blockHeight: 312004130, blockTime: 1735689700, blockhash: 'FjA8NkdmXpVr1vVPxmettK7xvebLqZNEEzpwkTpwQqVX', parentSlot: slot - 1, previousBlockhash: '9XXxcsNiD76RNK8ooNBFqMCaGEaC13Y1QdXFCWmxRTZ6' };
  const asked: string[] = [];
  const url = await rawRpc(t, (call) => {
    asked.push(call.method);
    if (call.method === 'getSignaturesForAddress' && call.params[0] === deposits.DEPOSIT_SOL) {
      return result(call, [{ blockTime: 1735689700, confirmationStatus: 'finalized', err: null, memo: null, signature, slot }]);
    }
    if (call.method === 'getTransaction' && call.params[0] === signature) return tx;
    if (call.method === 'getBlock' && call.params[0] === slot) return result(call, header);
    return undefined;
  });
  const source = createSolanaSource({ http: createHttpClient({ baseUrl: url, timeoutMs: 2000, log: createLogger('silent') }), mode: 'addresses' });
  const range = await source.fetchRange(BigInt(slot), BigInt(slot), { addresses: new Set(Object.values(deposits)), paymentContract: null });

  assert.deepEqual(asked, ['getSignaturesForAddress', 'getTransaction', 'getBlock', 'getBlock']);
  assert.deepEqual(range.transfers.map((x) => [x.to, x.amount, x.kind, x.txHash, x.blockHash, x.blockTime]), [[deposits.DEPOSIT_SOL, 1_250_000_000n, 'native', signature, header.blockhash, 1735689700]]);
});
