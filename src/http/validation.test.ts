import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyRequest } from 'fastify';
import { pino } from 'pino';
import { GatewayError } from '../domain/errors.ts';
import { createHttpApp } from './app.ts';
import { firstInvalidUtf8, inspectJson, jsonBody, surrogateDetails, unsupportedCharset, utf8Text } from './validation.ts';

/** A request as jsonBody sees it: the raw bytes the content-type parser kept. */
const requestWith = (text: string) => ({ body: Buffer.from(text) }) as unknown as FastifyRequest;

function refusal(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    return err;
  }
  assert.fail('expected a GatewayError');
}

test('inspectJson() tells a lone surrogate in a value or a key from a well-formed pair', () => {
  assert.equal(inspectJson({ a: ['x', '\ud800'] }).illFormed, true);
  assert.equal(inspectJson({ '\udc00': 1 }).illFormed, true);
  assert.equal(inspectJson({ a: 'x\ud83d\ude00y', '\ud83d\ude00': ['\ud83d\ude00'] }).illFormed, false);
  // Reversed, the two halves are two lone surrogates.
  assert.equal(inspectJson('\ude00\ud83d').illFormed, true);
});

test('surrogateDetails() names each field in document order, keys written as escapes, at most ten', () => {
  const value = { description: 'a\ud800', metadata: { ok: '\ud83d\ude00', '\udc00k': 'v', list: ['x', '\udfff'] } };
  assert.deepEqual(
    surrogateDetails(value).map((d) => d.path),
    ['body.description', 'body.metadata.\\udc00k', 'body.metadata.list.1'],
  );
  assert.match(surrogateDetails(value)[0]!.message, /lone UTF-16 surrogate \(\\ud800\)/);
  assert.match(surrogateDetails(value)[1]!.message, /key/);
  assert.equal(surrogateDetails({ many: Array.from({ length: 50 }, () => '\ud800') }).length, 10);
});

test('jsonBody() refuses a lone surrogate escape with VALIDATION_ERROR naming the field; a pair is kept exactly', () => {
  const err = refusal(() => jsonBody(requestWith('{"orderId":"o","description":"\\ud800"}')));
  assert.equal(err.code, 'VALIDATION_ERROR');
  assert.deepEqual(err.details?.map((d) => d.path), ['body.description']);
  const key = refusal(() => jsonBody(requestWith('{"metadata":{"\\udc00":1}}')));
  assert.deepEqual(key.details?.map((d) => d.path), ['body.metadata.\\udc00']);
  assert.deepEqual(jsonBody(requestWith('{"description":"\\ud83d\\ude00","raw":"😀"}')), { description: '😀', raw: '😀' });
  // An escaped backslash before "ud800" is text, not a surrogate.
  assert.deepEqual(jsonBody(requestWith('{"d":"\\\\ud800"}')), { d: '\\ud800' });
});

test('unsupportedCharset() accepts none or utf-8 in any case, quoted or not; refuses every other charset with 415', () => {
  for (const ok of [undefined, 'application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json; charset="UTF-8"', 'application/json; foo=bar', 'application/json; x="a;charset=latin1"; charset=utf-8']) {
    assert.equal(unsupportedCharset(ok), null, String(ok));
  }
  for (const bad of ['application/json; charset=latin1', 'application/json; CHARSET="ISO-8859-1"', 'application/json; charset=utf-16', 'application/json; charset=utf8', 'application/json; charset=', 'application/json; charset=utf-8; charset=latin1']) {
    const err = unsupportedCharset(bad);
    assert.equal(err?.code, 'UNSUPPORTED_MEDIA_TYPE', bad);
    assert.equal(err.status, 415);
  }
});

test('the JSON content-type parser answers a non-UTF-8 charset with the 415 envelope before the route runs', async (t) => {
  const app = createHttpApp({ log: pino({ level: 'silent' }), bodyLimit: 1024, trustProxy: false });
  let ran = 0;
  app.post('/echo', async (req) => {
    ran++;
    return { body: jsonBody(req) };
  });
  t.after(() => app.close());
  const post = (contentType: string) => app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': contentType }, payload: '{"a":"é"}' });
  const refused = await post('application/json; charset=latin1');
  assert.equal(refused.statusCode, 415);
  assert.equal(refused.json().error.code, 'UNSUPPORTED_MEDIA_TYPE');
  assert.equal(ran, 0);
  for (const ok of ['application/json', 'application/json; charset="UTF-8"']) {
    const res = await post(ok);
    assert.equal(res.statusCode, 200, ok);
    assert.deepEqual(res.json(), { body: { a: 'é' } });
  }
});

test('utf8Text() decodes UTF-8 (a BOM kept) and refuses anything else naming the first bad sequence', () => {
  assert.equal(utf8Text(Buffer.from('{"a":"café 😀"}')), '{"a":"café 😀"}');
  assert.equal(utf8Text(Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d])), '\ufeff{}');
  const cases: [number[], number][] = [
    [[0x7b, 0xe9, 0x7d], 1], // Latin-1 é
    [[0x61, 0x80], 1], // a stray continuation byte
    [[0x61, 0x62, 0xe2, 0x82], 2], // cut short
    [[0xc0, 0xaf], 0], // overlong "/"
    [[0xe0, 0x80, 0xaf], 0], // overlong, three bytes
    [[0xed, 0xa0, 0x80], 0], // an encoded surrogate
    [[0xf4, 0x90, 0x80, 0x80], 0], // past U+10FFFF
    [[0xf5, 0x80, 0x80, 0x80], 0],
  ];
  for (const [bytes, at] of cases) {
    assert.equal(firstInvalidUtf8(Uint8Array.from(bytes)), at, bytes.join(','));
    const err = refusal(() => utf8Text(Buffer.from(bytes)));
    assert.equal(err.code, 'VALIDATION_ERROR');
    assert.match(err.details![0]!.message, new RegExp(`^byte ${at} \\(0x${bytes[at]!.toString(16)}\\)`));
  }
  for (const ok of ['\u0000\u007f', '\u0080\u07ff', '\u0800\uffff', '\u{10000}\u{10ffff}']) assert.equal(firstInvalidUtf8(Buffer.from(ok)), Buffer.byteLength(ok), ok);
  assert.equal(refusal(() => jsonBody({ body: Buffer.from([0x7b, 0xff, 0x7d]) } as unknown as FastifyRequest)).message, 'Request body is not valid UTF-8');
});
