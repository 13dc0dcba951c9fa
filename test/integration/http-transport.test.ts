import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { signRequest } from '../../src/sdk/sign-request.ts';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { evmAddresses, startTestDaemon } from '../helpers/daemon.ts';

// What HTTP/1.1 itself refuses gets the same JSON envelope as everything else, written by raw
// sockets (node:net) because fetch would fix the requests up: a missing or repeated Host, an
// Expect other than 100-continue, a body in a content coding. Expect: 100-continue works.

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Every status line the server sent (a 100 Continue first, for instance). */
  statusLines: string[];
}

/** Sends `head` (and `body` once the server says 100 Continue, or at once) and reads until the server closes. */
function rawRequest(url: string, head: string, body: Buffer | string = '', waitForContinue = false): Promise<RawAnswer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => {
      socket.write(head);
      if (!waitForContinue) socket.write(body);
    });
    let out = Buffer.alloc(0);
    let continued = false;
    socket.on('data', (b: Buffer) => {
      out = Buffer.concat([out, b]);
      if (waitForContinue && !continued && out.toString('latin1').startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        continued = true;
        socket.write(body);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      let text = out.toString('utf8');
      // Interim answers (100 Continue) come first, each a status line and a blank line.
      const statusLines: string[] = [];
      for (let m = /^(HTTP\/1\.1 1\d\d[^\r]*)\r\n\r\n/.exec(text); m; m = /^(HTTP\/1\.1 1\d\d[^\r]*)\r\n\r\n/.exec(text)) {
        statusLines.push(m[1]!);
        text = text.slice(m[0].length);
      }
      const [headPart, ...rest] = text.split('\r\n\r\n');
      const lines = headPart!.split('\r\n');
      statusLines.push(lines[0]!);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status: Number(lines[0]!.split(' ')[1]), headers, body: rest.join('\r\n\r\n'), statusLines });
    });
  });
}

function assertEnvelope(a: RawAnswer, status: number, code: string, message: RegExp): void {
  assert.equal(a.status, status, `${a.statusLines.join(' / ')}\n${a.body}`);
  const json = JSON.parse(a.body) as { success: boolean; error: { code: string; message: string }; requestId: string };
  assert.equal(json.success, false);
  assert.equal(json.error.code, code);
  assert.match(json.error.message, message);
  assert.equal(a.headers['x-request-id'], json.requestId);
  assert.match(a.headers['content-type'] ?? '', /^application\/json/);
  assert.equal(a.headers.connection, 'close');
}

describe('HTTP/1.1 refusals get the envelope', () => {
  test('a missing or repeated Host, a bogus Expect and a gzip body are coded errors; Expect: 100-continue is served', async (t) => {
    const d = await startTestDaemon(t, 'sqlite');
    await d.seedPool('ethereum', evmAddresses(2));
    const invoices = () => d.common.db.em().fork().count(Invoice, {});
    const signedHead = (body: Buffer | string, headers: Record<string, string>, key: string) => {
      const h = signRequest({ apiKey: d.merchant.apiKey, apiSecret: d.merchant.apiSecret, method: 'POST', path: '/api/v1/invoices', body, idempotencyKey: key });
      const all = { ...h, ...headers, 'Content-Length': String(Buffer.byteLength(body)) };
      return `POST /api/v1/invoices HTTP/1.1\r\n${Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
    };
    const body = JSON.stringify({ orderId: 'raw-1', amount: '2500', currency: 'USD' });

    // Host: none on HTTP/1.1, on every surface; two on any.
    for (const path of ['/api/v1/invoices', '/checkout/api/v1/invoices/inv_x', '/healthz', '/nothing']) {
      assertEnvelope(await rawRequest(d.url, `GET ${path} HTTP/1.1\r\nConnection: close\r\n\r\n`), 400, 'VALIDATION_ERROR', /must have a Host header/);
    }
    assertEnvelope(await rawRequest(d.url, 'GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n'), 400, 'VALIDATION_ERROR', /one Host header/);
    assertEnvelope(await rawRequest(d.url, 'GET /healthz HTTP/1.1\r\nHost: a\r\nhOsT: a\r\n\r\n'), 400, 'VALIDATION_ERROR', /one Host header/);
    // HTTP/1.0 has no Host requirement.
    assert.equal((await rawRequest(d.url, 'GET /healthz HTTP/1.0\r\n\r\n')).status, 200);

    // An expectation the server cannot meet: refused before the body is read, nothing stored.
    const bogus = await rawRequest(d.url, signedHead(body, { Host: 'x', 'Content-Type': 'application/json', Expect: 'bogus' }, 'expect-1'), body);
    assertEnvelope(bogus, 400, 'VALIDATION_ERROR', /Expect: "bogus" cannot be met; only 100-continue/);
    assert.equal(await invoices(), 0);

    // A gzip body, even correctly signed over the bytes sent: 415 before authentication, nothing stored.
    const zipped = gzipSync(body);
    const gz = await rawRequest(d.url, signedHead(zipped, { Host: 'x', 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', Connection: 'close' }, 'gzip-1'), zipped);
    assertEnvelope(gz, 415, 'UNSUPPORTED_MEDIA_TYPE', /Content-Encoding "gzip" is not supported; send the body uncompressed/);
    const unsigned = await rawRequest(d.url, `POST /api/v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}`);
    assertEnvelope(unsigned, 415, 'UNSUPPORTED_MEDIA_TYPE', /"br"/);
    assert.equal(await invoices(), 0);

    // Expect: 100-continue: the server says 100, the body follows, the invoice is created; identity is fine.
    const ok = await rawRequest(d.url, signedHead(body, { Host: 'x', 'Content-Type': 'application/json', 'Content-Encoding': 'identity', Expect: '100-continue', Connection: 'close' }, 'expect-2'), body, true);
    assert.deepEqual(ok.statusLines, ['HTTP/1.1 100 Continue', 'HTTP/1.1 201 Created'], ok.body);
    assert.equal((JSON.parse(ok.body) as { data: { orderId: string } }).data.orderId, 'raw-1');
    assert.equal(await invoices(), 1);
  });
});
