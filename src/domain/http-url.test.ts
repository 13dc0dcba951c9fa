import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUrlScrubber, httpUrlProblem, originsOnly, urlOrigin, withoutCredentials } from './http-url.ts';

test('httpUrlProblem() refuses what fetch would refuse or misread, and takes http(s) URLs', () => {
  for (const good of ['https://ethereum-rpc.publicnode.com', 'http://127.0.0.1:8545', 'https://node.example.com/v2/KEY?x=1', 'http://[::1]:8545/']) {
    assert.equal(httpUrlProblem(good), null, good);
  }
  assert.match(httpUrlProblem('htp:/bad url')!, /spaces/);
  assert.match(httpUrlProblem('htp://node.example.com')!, /scheme htp is not http or https/);
  assert.match(httpUrlProblem('ws://node.example.com')!, /scheme ws is not http or https/);
  assert.match(httpUrlProblem('http:/node.example.com')!, /needs a host/);
  assert.match(httpUrlProblem('node.example.com:8545')!, /scheme node\.example\.com|http:\/\/ or https:\/\//);
  assert.match(httpUrlProblem('not a url')!, /spaces/);
  assert.match(httpUrlProblem('example')!, /must be an http/);
});

test('urlOrigin() shows scheme://host[:port] only', () => {
  assert.equal(urlOrigin('https://user:pass@node.example.com:8443/v2/KEY?apikey=1'), 'https://node.example.com:8443');
  assert.equal(urlOrigin('nope'), '(not a URL)');
});

test('withoutCredentials() moves user info into a Basic Authorization value', () => {
  assert.deepEqual(withoutCredentials('https://node.example.com/v2/KEY'), { url: 'https://node.example.com/v2/KEY', authorization: null });
  const { url, authorization } = withoutCredentials('http://us%40er:p%3Ass@127.0.0.1:8545/KEY?apikey=1');
  assert.equal(url, 'http://127.0.0.1:8545/KEY?apikey=1');
  assert.equal(Buffer.from(authorization!.replace(/^Basic /, ''), 'base64').toString(), 'us@er:p:ss');
});

test('originsOnly() leaves scheme://host[:port] of every URL in a text', () => {
  const text = 'TypeError: Request cannot be constructed from a URL that includes credentials: http://u:pw@127.0.0.1:1/KEY?apikey=Q (request={"url":"https://x:y@node.example.com/v3/KEY"})';
  assert.equal(originsOnly(text), 'TypeError: Request cannot be constructed from a URL that includes credentials: http://127.0.0.1:1 (request={"url":"https://node.example.com"})');
  assert.equal(originsOnly('no url here'), 'no url here');
});

test('createUrlScrubber() hides the configured endpoints and any URL with user info, and keeps other URLs', () => {
  const scrub = createUrlScrubber(['https://alice:Pa55word@rpc.example.com/v3/c0ffee0123456789abcdef?apikey=QueryKey123456', 'not a url']);
  const line = JSON.stringify({ url: 'https://rpc.example.com/v3/c0ffee0123456789abcdef?x=1', other: 'https://shop.example/hooks/abc', err: 'at wss://bob:pw@ws.example.org:8546/k said Pa55word and QueryKey123456 and c0ffee0123456789abcdef' });
  const out = scrub(line);
  assert.deepEqual(JSON.parse(out), { url: 'https://rpc.example.com', other: 'https://shop.example/hooks/abc', err: 'at wss://ws.example.org:8546 said [redacted] and [redacted] and [redacted]' });
  assert.equal(scrub('GET /api/v1/invoices 200'), 'GET /api/v1/invoices 200');
});
