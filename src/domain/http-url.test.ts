import { test } from 'node:test';
import assert from 'node:assert/strict';
import { httpUrlProblem, urlOrigin } from './http-url.ts';

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
