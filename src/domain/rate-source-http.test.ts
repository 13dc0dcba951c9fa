import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { coinRateIds } from '../families/families.ts';
import { createHttpRateSource, jsonNumberToDecimal, parseSimplePrice } from './rate-source-http.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A real HTTP server on 127.0.0.1 with a swappable handler and a request log. */
async function startServer(t: { after: (fn: () => Promise<void> | void) => void }, handler: Handler) {
  const state = { handler, requests: [] as URL[] };
  const server = createServer((req, res) => {
    state.requests.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    state.handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { state, baseUrl: `http://127.0.0.1:${port}/api/v3` };
}

const json = (body: string, status = 200): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
};

test('HTTP source: reads simple-price, keeps the exact decimal text and the update time', async (t) => {
  const { state, baseUrl } = await startServer(
    t,
    json('{"bitcoin":{"usd":60000.12,"last_updated_at":1777593600},"tether":{"usd":0.99980000001},"tron":{"usd":1.2e-1}}'),
  );
  const source = createHttpRateSource({ coinIds: coinRateIds(), baseUrl, ttlSeconds: 60, timeoutMs: 1000 });
  assert.equal(source.name, 'coingecko');
  assert.deepEqual(await source.getRate('BTC', 'USD'), { rate: '60000.12', at: new Date(1777593600 * 1000) });
  assert.equal((await source.getRate('usdt', 'usd'))?.rate, '0.99980000001');
  assert.equal((await source.getRate('TRX', 'USD'))?.rate, '0.12');
  assert.equal(await source.getRate('SOL', 'USD'), null, 'absent from the answer');
  assert.equal(await source.getRate('DOGE', 'USD'), null, 'no CoinGecko id mapped');

  const first = state.requests[0];
  assert.ok(first);
  assert.equal(first.pathname, '/api/v3/simple/price');
  assert.equal(first.searchParams.get('vs_currencies'), 'usd');
  const ids = first.searchParams.get('ids')?.split(',') ?? [];
  for (const id of ['bitcoin', 'ethereum', 'polygon-ecosystem-token', 'binancecoin', 'avalanche-2', 'tron', 'solana', 'the-open-network', 'tether', 'usd-coin']) {
    assert.ok(ids.includes(id), id);
  }
});

test('HTTP source: a second call within the TTL does not reach the server; after it, it does', async (t) => {
  const { state, baseUrl } = await startServer(t, json('{"ethereum":{"usd":3000,"eur":2750}}'));
  let clock = 1_000_000;
  const source = createHttpRateSource({ coinIds: coinRateIds(), baseUrl, ttlSeconds: 60, timeoutMs: 1000, now: () => clock });
  assert.equal((await source.getRate('ETH', 'USD'))?.rate, '3000');
  clock += 59_000;
  assert.equal((await source.getRate('ETH', 'USD'))?.rate, '3000');
  assert.equal(state.requests.length, 1);
  // Concurrent first calls for another fiat share one request.
  const [a, b] = await Promise.all([source.getRate('ETH', 'EUR'), source.getRate('ETH', 'eur')]);
  assert.equal(a?.rate, '2750');
  assert.equal(b?.rate, '2750');
  assert.equal(state.requests.length, 2);
  clock += 2_000;
  await source.getRate('ETH', 'USD');
  assert.equal(state.requests.length, 3);
});

test('HTTP source: server error, garbage, wrong shape and timeout all give null, never a throw', async (t) => {
  const { state, baseUrl } = await startServer(t, json('{"error":"boom"}', 500));
  const source = createHttpRateSource({ coinIds: coinRateIds(), baseUrl, ttlSeconds: 60, timeoutMs: 200 });
  assert.equal(await source.getRate('BTC', 'USD'), null);

  state.handler = json('<html>not json</html>');
  assert.equal(await source.getRate('BTC', 'USD'), null);
  state.handler = json('[1,2,3]');
  assert.equal(await source.getRate('BTC', 'USD'), null);
  state.handler = json('{"bitcoin":{"usd":"60000"}}');
  assert.equal(await source.getRate('BTC', 'USD'), null, 'a string is not a JSON number');
  state.handler = json('{"bitcoin":{"usd":-5}}');
  assert.equal(await source.getRate('BTC', 'USD'), null);

  // Never answers: the timeout fires and the call resolves to null.
  state.handler = () => {};
  const started = Date.now();
  assert.equal(await source.getRate('BTC', 'EUR'), null);
  assert.ok(Date.now() - started < 2_000);

  // A failure is not cached: once the server recovers, rates flow again.
  state.handler = json('{"bitcoin":{"usd":61000}}');
  assert.equal((await source.getRate('BTC', 'USD'))?.rate, '61000');
});

test('HTTP source: a refused connection gives null', async () => {
  const source = createHttpRateSource({ coinIds: coinRateIds(), baseUrl: 'http://127.0.0.1:1', ttlSeconds: 60, timeoutMs: 500 });
  assert.equal(await source.getRate('BTC', 'USD'), null);
});

test('jsonNumberToDecimal() turns JSON number text into plain decimals without float error', () => {
  const cases: Array<[string, string | null]> = [
    ['60000.12', '60000.12'],
    ['3000', '3000'],
    ['3000.0', '3000'],
    ['0.1', '0.1'],
    ['1e-7', '0.0000001'],
    ['1.5E+3', '1500'],
    ['2.5e2', '250'],
    ['1.23456789e-5', '0.0000123456789'],
    ['0.30000000000000004', '0.30000000000000004'],
    ['123456789012345678901234.5', '123456789012345678901234.5'],
    ['0', '0'],
    ['-1', null],
    ['1e999', null],
    ['abc', null],
  ];
  for (const [input, expected] of cases) assert.equal(jsonNumberToDecimal(input), expected, input);
  // Digits past a double's precision survive because the source text is used, not the parsed float.
  const quotes = parseSimplePrice('{"x":{"usd":0.12345678901234567890123}}', 'usd', new Date(0));
  assert.equal(quotes?.get('x')?.rate, '0.12345678901234567890123');
});
