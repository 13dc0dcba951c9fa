import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postWebhook, type PostInput } from './post.ts';

async function server(t: { after(fn: () => Promise<void>): void }, handler: http.RequestListener): Promise<string> {
  const s = http.createServer(handler);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  t.after(async () => {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  });
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/h`;
}

const base: Omit<PostInput, 'url'> = { headers: { 'Content-Type': 'application/json' }, body: Buffer.from('{"a":1}'), timeoutMs: 300, responseBodyLimit: 8, allowPrivateNetworks: true };

test('postWebhook sends the exact bytes with Content-Length and keeps the first bytes of the answer', async (t) => {
  let got = Buffer.alloc(0);
  let length = '';
  const url = await server(t, (req, res) => {
    length = String(req.headers['content-length']);
    req.on('data', (c: Buffer) => (got = Buffer.concat([got, c])));
    req.on('end', () => res.end('a long answer body'));
  });
  const res = await postWebhook({ ...base, url });
  assert.deepEqual([res.ok, res.statusCode, res.responseBody, res.error], [true, 200, 'a long a', null]);
  assert.equal(got.toString(), '{"a":1}');
  assert.equal(length, '7');
});

test('a 2xx whose body stalls still counts; a 500 whose body stalls is a timeout; a dropped connection is an error', async (t) => {
  const url = await server(t, (req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/h?drop') return req.socket.destroy();
      res.writeHead(req.url === '/h?fail' ? 500 : 202);
      res.write('par'); // and never end
    });
  });
  const stalledOk = await postWebhook({ ...base, url });
  assert.deepEqual([stalledOk.ok, stalledOk.statusCode, stalledOk.responseBody], [true, 202, 'par']);
  const stalledFail = await postWebhook({ ...base, url: `${url}?fail` });
  assert.deepEqual([stalledFail.ok, stalledFail.statusCode, stalledFail.error], [false, 500, 'timed out after 300 ms']);
  const dropped = await postWebhook({ ...base, url: `${url}?drop` });
  assert.equal(dropped.ok, false);
  assert.equal(dropped.statusCode, null);
  assert.match(dropped.error ?? '', /socket hang up|ECONNRESET|closed/);
  const bad = await postWebhook({ ...base, url: 'ftp://127.0.0.1/' });
  assert.match(bad.error ?? '', /not http\(s\)/);
});
