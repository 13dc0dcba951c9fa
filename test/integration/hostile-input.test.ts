import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { MerchantPoint } from '../../src/store/entities/merchant-point.entity.ts';
import { runCli } from '../helpers/cli.ts';
import { createTestDatabase, DIALECTS, skipUnless } from '../helpers/databases.ts';
import { evmAddresses, startTestDaemon } from '../helpers/daemon.ts';
import { writeConfigFile } from '../helpers/indexer-process.ts';
import { listenLocal } from '../helpers/local-server.ts';
import { spawnServe } from '../helpers/serve-process.ts';
import { openDatabase } from '../../src/store/orm.ts';
import { signRequest } from '../../src/sdk/sign-request.ts';

// The hostile inputs a fuzzer found, each answered with a clear coded error, never a 500, a hang
// or a daemon that will not start.

const INVOICE = { orderId: 'h1', amount: '2500', currency: 'USD' };

/** Sends raw bytes over a socket and returns what came back. */
function rawHttp(url: string, bytes: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => socket.write(bytes));
    let out = '';
    socket.on('data', (b) => (out += b.toString()));
    socket.on('end', () => resolve(out));
    socket.on('close', () => resolve(out));
    socket.on('error', reject);
  });
}

for (const dialect of DIALECTS) {
  describe(`hostile bodies on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('deep metadata, NUL characters, 80-digit and zero amounts are refused with VALIDATION_ERROR; the largest accepted amount checks out', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(3));
      const deep = `{"orderId":"d","amount":"1","currency":"USD","metadata":{"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}}`;
      for (const [raw, field] of [
        [deep, /nested too deeply|not valid JSON/],
        [JSON.stringify({ ...INVOICE, metadata: { big: 'x'.repeat(20_000) } }), /metadata/],
        [JSON.stringify({ ...INVOICE, orderId: 'a\u0000b' }), /NUL/],
        ['{"orderId":"a\u0000","amount":"1","currency":"USD"}', /NUL/],
        // NUL as an escape anywhere after decoding: a metadata key, a nested value.
        ['{"orderId":"k","amount":"1","currency":"USD","metadata":{"a\\u0000":1}}', /NUL/],
        ['{"orderId":"k","amount":"1","currency":"USD","metadata":{"a":["x","\\u0000"]}}', /NUL/],
        [JSON.stringify({ ...INVOICE, amount: '9'.repeat(80) }), /amount/],
        [JSON.stringify({ ...INVOICE, amount: '0' }), /amount/],
      ] as const) {
        const res = await d.signed('POST', '/api/v1/invoices', undefined, { raw });
        assert.equal(res.status, 400, `${raw.slice(0, 60)} -> ${res.status} ${res.text.slice(0, 200)}`);
        assert.equal(res.json.error.code, 'VALIDATION_ERROR');
        assert.match(JSON.stringify(res.json.error), field);
      }
      // An escaped backslash followed by the text "u0000" is no NUL: accepted and stored as sent.
      const text = 'C:\\u0000\\dir';
      const lookalike = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, orderId: text, metadata: { path: text } });
      assert.equal(lookalike.status, 201, lookalike.text);
      const stored = await d.signed('GET', `/api/v1/invoices/${lookalike.json.data.id}`);
      assert.equal(stored.json.data.orderId, text);
      assert.deepEqual(stored.json.data.metadata, { path: text });
      // The largest amount accepted converts into an amount the database holds, on both databases.
      const big = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, orderId: 'max', amount: '999999999999999' });
      assert.equal(big.status, 201, big.text);
      const co = await d.signed('POST', `/api/v1/invoices/${big.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' });
      assert.equal(co.status, 201, co.text);
    });

    test('lone UTF-16 surrogates are refused naming the field and nothing is stored; a pair is stored exactly; only a UTF-8 charset is read', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(3));
      const storedRows = (orderId: string) => d.common.db.em().fork().count(Invoice, { orderId });
      const surrogateError = (res: { status: number; json: { error: { code: string; details?: { path: string; message: string }[] } } }, path: string) => {
        assert.deepEqual([res.status, res.json.error.code], [400, 'VALIDATION_ERROR'], JSON.stringify(res.json));
        assert.deepEqual(res.json.error.details?.map((x) => x.path), [path]);
        assert.match(res.json.error.details![0]!.message, /lone UTF-16 surrogate/);
      };

      // A high surrogate alone in a signed creation: 400 before the idempotency claim, so nothing is
      // stored and the same key can be used again for a good body.
      const lone = await d.signed('POST', '/api/v1/invoices', undefined, { raw: '{"orderId":"s1","amount":"2500","currency":"USD","description":"x\\ud800"}', idempotencyKey: 'surrogate-1' });
      surrogateError(lone, 'body.description');
      assert.equal(await storedRows('s1'), 0);
      // A low surrogate alone in a metadata key.
      const key = await d.signed('POST', '/api/v1/invoices', undefined, { raw: '{"orderId":"s2","amount":"2500","currency":"USD","metadata":{"\\udc00":"v"}}' });
      surrogateError(key, 'body.metadata.\\udc00');
      assert.equal(await storedRows('s2'), 0);

      // A well-formed pair (an emoji), as escapes and as raw UTF-8: answered and stored exactly.
      const pair = await d.signed('POST', '/api/v1/invoices', undefined, { raw: '{"orderId":"s1","amount":"2500","currency":"USD","description":"x\\ud83d\\ude00","metadata":{"\\ud83d\\ude00":"😀"}}', idempotencyKey: 'surrogate-1' });
      assert.equal(pair.status, 201, pair.text);
      assert.equal(pair.json.data.description, 'x😀');
      assert.deepEqual(pair.json.data.metadata, { '😀': '😀' });
      const read = await d.signed('GET', `/api/v1/invoices/${pair.json.data.id}`);
      assert.equal(read.json.data.description, 'x😀');
      assert.deepEqual(read.json.data.metadata, { '😀': '😀' });
      const row = await d.common.db.em().fork().findOneOrFail(Invoice, { id: pair.json.data.id });
      assert.equal(row.description, 'x\ud83d\ude00');

      // The buyer API reads its bodies the same way.
      const checkout = await d.plain('POST', `/checkout/api/v1/invoices/${pair.json.data.id}/checkout`, '{"blockchain":"ethereum","cryptoCurrency":"ETH\\udbff"}');
      surrogateError(checkout, 'body.cryptoCurrency');

      // Bodies are read as UTF-8 only: another charset is a 415 before authentication, on both surfaces.
      const latin1 = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, orderId: 's3' }, { headers: { 'Content-Type': 'application/json; charset=latin1' } });
      assert.deepEqual([latin1.status, latin1.json.error.code], [415, 'UNSUPPORTED_MEDIA_TYPE'], latin1.text);
      const unsigned = await d.plain('POST', '/api/v1/invoices', { ...INVOICE, orderId: 's3' }, { 'Content-Type': 'application/json; charset=ISO-8859-1' });
      assert.deepEqual([unsigned.status, unsigned.json.error.code], [415, 'UNSUPPORTED_MEDIA_TYPE']);
      const buyer = await d.plain('POST', `/checkout/api/v1/invoices/${pair.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH' }, { 'Content-Type': 'application/json; charset=utf-16' });
      assert.deepEqual([buyer.status, buyer.json.error.code], [415, 'UNSUPPORTED_MEDIA_TYPE']);
      assert.equal(await storedRows('s3'), 0);
      const quoted = await d.signed('POST', '/api/v1/invoices', { ...INVOICE, orderId: 's3' }, { headers: { 'Content-Type': 'application/json; charset="UTF-8"' } });
      assert.equal(quoted.status, 201, quoted.text);
    });

    test('a body whose bytes are not UTF-8 is a 400 naming the byte, on every surface, and nothing is stored', async (t) => {
      const d = await startTestDaemon(t, dialect);
      await d.seedPool('ethereum', evmAddresses(3));
      const storedRows = (orderId: string) => d.common.db.em().fork().count(Invoice, { orderId });
      const bytes = (before: string, bad: number[], after: string) => Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)]);
      const prefix = '{"orderId":"u1","amount":"2500","currency":"USD","description":"caf';
      // A Latin-1 é, a stray continuation byte, a truncated sequence, an overlong "/", an encoded surrogate.
      for (const bad of [[0xe9], [0x80], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
        const res = await d.signed('POST', '/api/v1/invoices', undefined, { raw: bytes(prefix, bad, '"}'), idempotencyKey: `utf8-${bad.join('-')}` });
        assert.deepEqual([res.status, res.json?.error?.code], [400, 'VALIDATION_ERROR'], `${bad}: ${res.text}`);
        assert.equal(res.json.error.message, 'Request body is not valid UTF-8');
        assert.deepEqual(res.json.error.details.map((x: { path: string }) => x.path), ['body']);
        assert.match(res.json.error.details[0].message, new RegExp(`^byte ${Buffer.byteLength(prefix)} \\(0x${bad[0]!.toString(16)}\\) starts no valid UTF-8 sequence`));
      }
      assert.equal(await storedRows('u1'), 0);
      // The same key then takes a good body: the refusal claimed nothing.
      const good = await d.signed('POST', '/api/v1/invoices', undefined, { raw: Buffer.from(`${prefix}é"}`), idempotencyKey: 'utf8-233' });
      assert.equal(good.status, 201, good.text);
      assert.equal(good.json.data.description, 'café');

      // The buyer API reads its bodies the same way.
      const checkout = await d.plain('POST', `/checkout/api/v1/invoices/${good.json.data.id}/checkout`, bytes('{"blockchain":"ethereum","cryptoCurrency":"ET', [0xff], '"}'));
      assert.deepEqual([checkout.status, checkout.json?.error?.code], [400, 'VALIDATION_ERROR'], checkout.text);
      assert.equal(checkout.json.error.message, 'Request body is not valid UTF-8');
    });
  });
}

describe('hostile clients and a damaged store', () => {
  test('bad header bytes and oversized headers get the envelope; a slow body is cut off with 408; shutdown is bounded', async (t) => {
    const d = await startTestDaemon(t, 'sqlite', { server: { requestTimeoutMs: 1500, headersTimeoutMs: 1500, shutdownGraceMs: 1000 } });
    const bad = await rawHttp(d.url, 'GET /api/v1/invoices HTTP/1.1\r\nHost: x\r\nBad\u0001Header: y\r\n\r\n');
    assert.match(bad, /^HTTP\/1\.1 400 /);
    assert.match(bad, /"success":false,"error":\{"code":"VALIDATION_ERROR"/);
    const big = await rawHttp(d.url, `GET /api/v1/invoices HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(big, /^HTTP\/1\.1 431 /);
    assert.match(big, /"code":"HEADERS_TOO_LARGE"/);

    // A client that announces a body and sends it a byte at a time.
    const u = new URL(d.url);
    const started = Date.now();
    const slow = await new Promise<string>((resolve) => {
      const socket = connect(Number(u.port), u.hostname, () => socket.write(`POST /checkout/api/v1/invoices/x/checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`));
      const drip = setInterval(() => socket.writable && socket.write(' '), 200);
      let out = '';
      socket.on('data', (b) => (out += b.toString()));
      socket.on('close', () => {
        clearInterval(drip);
        resolve(out);
      });
    });
    assert.match(slow, /^HTTP\/1\.1 408 /, slow.slice(0, 200));
    assert.match(slow, /"success":false,"error":\{"code":"REQUEST_TIMEOUT"/, slow.slice(0, 400));
    assert.ok(Date.now() - started < 10_000, 'cut off near requestTimeoutMs');

    // A request still arriving when the daemon stops does not hold the shutdown past its grace.
    const hanging = connect(Number(u.port), u.hostname, () => hanging.write('POST /api/v1/invoices HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{'));
    hanging.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 200));
    const stopping = Date.now();
    await d.daemon.stop();
    assert.ok(Date.now() - stopping < 5000, `stopped in ${Date.now() - stopping} ms`);
    hanging.destroy();
  });

  test('a tampered stored secret: the daemon still starts, that point gets a coded 503 naming the fix, others work', async (t) => {
    const tdb = await createTestDatabase('sqlite');
    t.after(() => tdb.drop());
    const env = { CHAINGATE_DATABASE_URL: tdb.url, CHAINGATE_MASTER_KEY: 'q'.repeat(64), CHAINGATE_LOG_LEVEL: 'info' };
    const victim = JSON.parse((await runCli(['merchant', 'create', '--name', 'Victim', '--json'], env)).stdout) as { id: string; apiKey: string; apiSecret: string };
    const other = JSON.parse((await runCli(['merchant', 'create', '--name', 'Other', '--json'], env)).stdout) as { id: string; apiKey: string; apiSecret: string };
    const db = await openDatabase(tdb.url);
    const row = await db.em().findOneOrFail(MerchantPoint, { id: victim.id });
    const [v, k, payload] = row.apiSecretEnc.split('.');
    const flipped = Buffer.from(payload!, 'base64url');
    flipped[20] = flipped[20]! ^ 0xff;
    await db.em().nativeUpdate(MerchantPoint, { id: victim.id }, { apiSecretEnc: `${v}.${k}.${flipped.toString('base64url')}` });
    // The newest point is the one start-up samples first: make the victim the newest.
    await db.em().nativeUpdate(MerchantPoint, { id: victim.id }, { createdAt: new Date(Date.now() + 60_000) });
    await db.close();

    const serve = await spawnServe(env);
    t.after(() => serve.stop());
    const send = async (m: typeof victim) => {
      const body = JSON.stringify(INVOICE);
      const res = await fetch(`${serve.url}/api/v1/invoices`, { method: 'POST', headers: signRequest({ ...m, method: 'POST', path: '/api/v1/invoices', body }), body });
      return { status: res.status, json: (await res.json()) as { error?: { code: string; message: string } } };
    };
    const refused = await send(victim);
    assert.deepEqual([refused.status, refused.json.error?.code], [503, 'SERVICE_UNAVAILABLE']);
    assert.match(refused.json.error!.message, /rotate/);
    assert.equal((await send(other)).status, 201);
    assert.match(serve.output(), new RegExp(`"merchantId":"${victim.id}".*cannot be decrypted`));
    // Rotating gives the point a new, readable secret.
    const rotated = JSON.parse((await runCli(['secrets', 'rotate', victim.id, '--json'], env)).stdout) as { apiSecret: string };
    assert.equal((await send({ ...victim, apiSecret: rotated.apiSecret })).status, 201);
  });

  test('/confirm: id tokens from the future or with an absurd lifetime are refused; a malformed node receipt is a coded 503', async (t) => {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), alg: 'ES256' };
    // A JSON-RPC node that answers every receipt in a broken shape.
    const node = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const call = JSON.parse(body) as { id: unknown };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: { status: 1, logs: 'none' } }));
      });
    });
    const rpc = await listenLocal(node);
    t.after(() => rpc.close());
    const contract = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
    const d = await startTestDaemon(t, 'sqlite', {
      idToken: { issuer: 'https://id.test', audience: 'chaingate', jwk },
      chains: { ethereum: { mainnet: { rpcUrl: rpc.url, paymentContract: contract, treasury: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' } } },
    });
    const inv = await d.signed('POST', '/api/v1/invoices', INVOICE);
    const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH', method: 'web3' });
    assert.equal(co.status, 201, co.text);
    const paymentId = co.json.data.payment.id as string;
    const now = Math.floor(Date.now() / 1000);
    const token = (claims: { iat?: number; nbf?: number; exp: number }) => {
      const jwt = new SignJWT({ sub: 'buyer' }).setProtectedHeader({ alg: 'ES256' }).setIssuer('https://id.test').setAudience('chaingate').setExpirationTime(claims.exp);
      if (claims.iat !== undefined) jwt.setIssuedAt(claims.iat);
      if (claims.nbf !== undefined) jwt.setNotBefore(claims.nbf);
      return jwt.sign(privateKey);
    };
    const confirm = async (jwt: string) => d.plain('POST', `/checkout/api/v1/payments/${paymentId}/confirm`, { txHash: `0x${'ab'.repeat(32)}` }, { Authorization: `Bearer ${jwt}` });
    for (const claims of [{ iat: now + 3600, exp: now + 7200 }, { nbf: now + 3600, exp: now + 7200 }, { iat: now, exp: now + 365 * 86_400 }]) {
      const res = await confirm(await token(claims));
      assert.deepEqual([res.status, res.json.error.code], [401, 'UNAUTHORIZED'], JSON.stringify(claims));
    }
    const malformed = await confirm(await token({ iat: now, exp: now + 300 }));
    assert.deepEqual([malformed.status, malformed.json.error.code], [503, 'SERVICE_UNAVAILABLE']);
    assert.match(malformed.json.error.message, /malformed receipt/);
  });

  test('unsigned or unknown-key /api/v1 traffic meets the service-wide limits; a known key does not', async (t) => {
    const tdb = await createTestDatabase('sqlite');
    t.after(() => tdb.drop());
    const env = {
      CHAINGATE_DATABASE_URL: tdb.url,
      CHAINGATE_MASTER_KEY: 'r'.repeat(64),
      CHAINGATE_CONFIG: writeConfigFile({ rateLimit: { enabled: true, serviceWide: { burst: { max: 5, windowMs: 60_000 }, sustained: { max: 100, windowMs: 600_000 }, gateway: false } } }),
    };
    const m = JSON.parse((await runCli(['merchant', 'create', '--name', 'Busy', '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
    const serve = await spawnServe(env);
    t.after(() => serve.stop());
    const statuses = async (headers: () => Record<string, string>, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await fetch(`${serve.url}/api/v1/payments`, { headers: headers() })).status);
      return out;
    };
    const known = await statuses(() => signRequest({ ...m, method: 'GET', path: '/api/v1/payments' }), 8);
    assert.ok(known.every((s) => s === 200), `a known key is exempt: ${known}`);
    const unknown = await statuses(() => ({ 'X-API-Key': 'f'.repeat(64), 'X-Signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` }), 8);
    assert.ok(unknown.includes(429), `an unknown key is limited: ${unknown}`);
  });
});
