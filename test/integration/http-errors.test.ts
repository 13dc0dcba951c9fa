import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestDaemon } from '../helpers/daemon.ts';

describe('HTTP envelope and bad input', () => {
  test('malformed JSON, wrong types, unknown routes, wrong methods, media types and size limits get coded errors', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    const malformed = await d.signed('POST', '/api/v1/invoices', undefined, { raw: '{"orderId": ' });
    assert.deepEqual([malformed.status, malformed.json.error.code], [400, 'VALIDATION_ERROR']);
    assert.equal(malformed.json.success, false);
    assert.equal(malformed.json.error.details[0].path, 'body');
    assert.match(malformed.json.timestamp, /Z$/);
    assert.equal(malformed.headers.get('x-request-id'), malformed.json.requestId);

    const array = await d.signed('POST', '/api/v1/invoices', undefined, { raw: '[1,2]' });
    assert.equal(array.json.error.code, 'VALIDATION_ERROR');
    const nul = await d.signed('POST', '/api/v1/invoices', undefined, { raw: 'null' });
    assert.equal(nul.json.error.code, 'VALIDATION_ERROR');

    const unknown = await d.plain('GET', '/api/v1/nothing-here');
    assert.deepEqual([unknown.status, unknown.json.error.code], [404, 'NOT_FOUND']);
    const root = await d.plain('GET', '/definitely/not/here');
    assert.deepEqual([root.status, root.json.error.code], [404, 'NOT_FOUND']);

    const wrong = await d.signed('PUT', '/api/v1/invoices', { a: 1 });
    assert.deepEqual([wrong.status, wrong.json.error.code], [405, 'METHOD_NOT_ALLOWED']);
    assert.equal(wrong.headers.get('allow'), 'POST');

    const xml = await d.signed('POST', '/api/v1/invoices', undefined, { raw: '<invoice/>', headers: { 'Content-Type': 'application/xml' } });
    assert.deepEqual([xml.status, xml.json.error.code], [415, 'UNSUPPORTED_MEDIA_TYPE']);

    const huge = await d.signed('POST', '/api/v1/invoices', { orderId: 'o', amount: '1', currency: 'USD', metadata: { blob: 'x'.repeat(1024 * 1024 + 10) } });
    assert.deepEqual([huge.status, huge.json.error.code], [413, 'PAYLOAD_TOO_LARGE']);

    const longKey = await d.signed('POST', '/api/v1/invoices', { orderId: 'o', amount: '1', currency: 'USD' }, { idempotencyKey: 'k'.repeat(256) });
    assert.deepEqual([longKey.status, longKey.json.error.code], [400, 'VALIDATION_ERROR']);
    const badUrl = await d.signed('GET', '/api/v1/invoices/%ff%fe');
    assert.deepEqual([badUrl.status, badUrl.json?.error.code], [400, 'VALIDATION_ERROR']);
    assert.equal(badUrl.headers.get('x-request-id'), badUrl.json.requestId);
    const weirdId = await d.signed('GET', '/api/v1/invoices/..%2F..%2Fetc');
    assert.deepEqual([weirdId.status, weirdId.json.error.code], [404, 'INVOICE_NOT_FOUND']);
  });
});
