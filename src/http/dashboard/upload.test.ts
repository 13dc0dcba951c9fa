import { test } from 'node:test';
import assert from 'node:assert/strict';
import { boundaryOf, parseMultipart } from './upload.ts';

test('parseMultipart reads the fields and a file part of a browser form', () => {
  const b = '----formdata-abc';
  const body = Buffer.from(
    `--${b}\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\ntok\r\n` +
      `--${b}\r\nContent-Disposition: form-data; name="signed"; filename="s.json"\r\nContent-Type: application/json\r\n\r\n{"a":\r\n1}\r\n` +
      `--${b}--\r\n`,
  );
  assert.deepEqual(parseMultipart(body, boundaryOf(`multipart/form-data; boundary=${b}`)), { _csrf: 'tok', signed: '{"a":\r\n1}' });
});

test('parseMultipart refuses a body that is not multipart with a coded error', () => {
  for (const body of ['garbage', '--x\r\nno headers', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated']) {
    assert.throws(() => parseMultipart(Buffer.from(body), 'x'), (err: { code?: string }) => err.code === 'VALIDATION_ERROR');
  }
  assert.throws(() => boundaryOf('multipart/form-data'), (err: { code?: string }) => err.code === 'VALIDATION_ERROR');
});
