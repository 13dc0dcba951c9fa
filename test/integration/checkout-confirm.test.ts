import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWK } from 'jose';
import { confirmContractPayment } from '../../src/app/confirm-payment.ts';
import { createIdTokenVerifier } from '../../src/http/checkout/id-token.ts';
import { createLogger } from '../../src/logger.ts';
import { GatewayError } from '../../src/domain/errors.ts';
import { DIALECTS, skipUnless } from '../helpers/databases.ts';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.ts';

const ISSUER = 'https://id.example.test/';
const AUDIENCE = 'chaingate-checkout';
const TX = `0x${'1f'.repeat(32)}`;
const CONTRACT = '0x00000000000000000000000000000000000c0de1';
const TREASURY = '0x0000000000000000000000000000000000007ea5';

interface Keys {
  ec: { privateKey: CryptoKey; publicKey: CryptoKey };
  otherEc: { privateKey: CryptoKey; publicKey: CryptoKey };
  rsa: { privateKey: CryptoKey; publicKey: CryptoKey };
  jwks: { keys: JWK[] };
}

async function makeKeys(): Promise<Keys> {
  const ec = await generateKeyPair('ES256', { extractable: true });
  const otherEc = await generateKeyPair('ES256', { extractable: true });
  const rsa = await generateKeyPair('RS256', { extractable: true });
  const jwks = {
    keys: [
      { ...(await exportJWK(ec.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
      // An RSA key is published too, so an RS256 token finds a key and is refused for its algorithm.
      { ...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
    ],
  };
  return { ec, otherEc, rsa, jwks };
}

/** A JWKS endpoint on 127.0.0.1 that counts its hits. */
async function startJwksServer(t: { after(fn: () => Promise<void>): void }, jwks: unknown): Promise<{ url: string; hits: () => number }> {
  let hits = 0;
  const server: Server = createServer((req, res) => {
    hits++;
    if (req.url !== '/.well-known/jwks.json') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`, hits: () => hits };
}

function token(
  key: CryptoKey | Uint8Array,
  options: { alg?: string; kid?: string; iss?: string; aud?: string; exp?: number | null; sub?: string } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({ email: 'buyer@example.com' })
    .setProtectedHeader({ alg: options.alg ?? 'ES256', kid: options.kid ?? 'ec-1', typ: 'JWT' })
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setSubject(options.sub ?? 'buyer-1')
    .setIssuedAt(now - 5);
  if (options.exp !== null) jwt = jwt.setExpirationTime(options.exp ?? now + 300);
  return jwt.sign(key);
}

/** What the route must answer once the token and body pass: whatever confirmContractPayment does. */
async function expectedConfirm(d: TestDaemon, paymentId: string): Promise<{ status: number; body: unknown }> {
  try {
    return { status: 200, body: await confirmContractPayment(d.daemon.deps, paymentId, TX) };
  } catch (err) {
    assert.ok(err instanceof GatewayError, String(err));
    return { status: err.status, body: err.code };
  }
}

const confirmPath = (id: string) => `/checkout/api/v1/payments/${id}/confirm`;

for (const dialect of DIALECTS) {
  describe(`checkout API: confirm on ${dialect}`, { skip: await skipUnless(dialect) }, () => {
    test('every missing or invalid id token is 401 UNAUTHORIZED; a valid one reaches the confirmation', async (t) => {
      const keys = await makeKeys();
      const jwks = await startJwksServer(t, keys.jwks);
      const d = await startTestDaemon(t, dialect, {
        idToken: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url },
        chains: { ethereum: { mainnet: { paymentContract: CONTRACT, treasury: TREASURY } } },
      });
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: 'o-1', amount: '1000', currency: 'USD' });
      const co = await d.plain('POST', `/checkout/api/v1/invoices/${inv.json.data.id}/checkout`, { blockchain: 'ethereum', cryptoCurrency: 'ETH', method: 'service_wallet' });
      assert.equal(co.status, 201, co.text);
      const pid = co.json.data.payment.id as string;
      const now = Math.floor(Date.now() / 1000);
      const hs256 = new TextEncoder().encode('a-shared-secret-that-is-long-enough-for-hs256');

      const bad: [string, Record<string, string>][] = [
        ['no Authorization header', {}],
        ['wrong scheme', { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
        ['Bearer without a token', { Authorization: 'Bearer ' }],
        ['not a JWT', { Authorization: 'Bearer not-a-jwt' }],
        ['bad signature (another key, same kid)', { Authorization: `Bearer ${await token(keys.otherEc.privateKey)}` }],
        ['HS256', { Authorization: `Bearer ${await token(hs256, { alg: 'HS256' })}` }],
        ['RS256 with a published RSA key', { Authorization: `Bearer ${await token(keys.rsa.privateKey, { alg: 'RS256', kid: 'rsa-1' })}` }],
        ['unknown kid', { Authorization: `Bearer ${await token(keys.ec.privateKey, { kid: 'nope' })}` }],
        ['wrong issuer', { Authorization: `Bearer ${await token(keys.ec.privateKey, { iss: 'https://evil.example/' })}` }],
        ['wrong audience', { Authorization: `Bearer ${await token(keys.ec.privateKey, { aud: 'someone-else' })}` }],
        ['expired', { Authorization: `Bearer ${await token(keys.ec.privateKey, { exp: now - 3600 })}` }],
        ['no exp claim', { Authorization: `Bearer ${await token(keys.ec.privateKey, { exp: null })}` }],
      ];
      // alg "none": an unsigned token with a valid-looking payload.
      const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
      const payload = Buffer.from(JSON.stringify({ iss: ISSUER, aud: AUDIENCE, exp: now + 300 })).toString('base64url');
      bad.push(['alg none', { Authorization: `Bearer ${header}.${payload}.` }]);

      for (const [what, headers] of bad) {
        const res = await d.plain('POST', confirmPath(pid), { txHash: TX }, headers);
        assert.equal(res.status, 401, `${what}: ${res.text}`);
        assert.deepEqual([res.json.success, res.json.error.code], [false, 'UNAUTHORIZED'], what);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/, what);
        assert.match(res.json.requestId, /^req_/);
      }
      // An unauthenticated caller learns nothing about the payment or the body.
      const noAuthUnknown = await d.plain('POST', confirmPath('doesnotexist0000000000000'), { txHash: 'nope' });
      assert.deepEqual([noAuthUnknown.status, noAuthUnknown.json.error.code], [401, 'UNAUTHORIZED']);

      const good = { Authorization: `Bearer ${await token(keys.ec.privateKey)}` };
      for (const body of [{}, { txHash: '0x1234' }, { txHash: TX.toUpperCase() }, { txHash: `${TX}00` }, { txHash: TX, extra: 1 }]) {
        const res = await d.plain('POST', confirmPath(pid), body, good);
        assert.deepEqual([res.status, res.json.error.code], [400, 'VALIDATION_ERROR'], JSON.stringify(body));
      }
      const lowercaseScheme = await d.plain('POST', confirmPath(pid), { txHash: 'bad' }, { Authorization: good.Authorization.replace('Bearer', 'bearer') });
      assert.equal(lowercaseScheme.json.error.code, 'VALIDATION_ERROR', 'the scheme is case-insensitive (RFC 6750)');

      const expected = await expectedConfirm(d, pid);
      const res = await d.plain('POST', confirmPath(pid), { txHash: TX }, good);
      assert.equal(res.status, expected.status, res.text);
      if (expected.status === 200) assert.deepEqual(res.json.data, expected.body);
      else assert.equal(res.json.error.code, expected.body);
      assert.ok(!['UNAUTHORIZED', 'VALIDATION_ERROR'].includes(res.json.error?.code), res.text);
      assert.ok(jwks.hits() >= 1 && jwks.hits() <= 3, `the key set is cached (${jwks.hits()} fetches)`);

      const unknown = await d.plain('POST', confirmPath('doesnotexist0000000000000'), { txHash: TX }, good);
      const unknownExpected = await expectedConfirm(d, 'doesnotexist0000000000000');
      assert.equal(unknown.status, unknownExpected.status, unknown.text);
    });
  });
}

describe('checkout API: confirm key sources', () => {
  test('a static idToken.jwk verifies tokens without any fetch', async (t) => {
    const keys = await makeKeys();
    const d = await startTestDaemon(t, 'sqlite', { idToken: { issuer: ISSUER, audience: AUDIENCE, jwk: keys.jwks.keys[0] } });
    const ok = await d.plain('POST', confirmPath('doesnotexist0000000000000'), { txHash: TX }, { Authorization: `Bearer ${await token(keys.ec.privateKey)}` });
    assert.notEqual(ok.json.error?.code, 'UNAUTHORIZED', ok.text);
    const wrong = await d.plain('POST', confirmPath('doesnotexist0000000000000'), { txHash: TX }, { Authorization: `Bearer ${await token(keys.otherEc.privateKey)}` });
    assert.deepEqual([wrong.status, wrong.json.error.code], [401, 'UNAUTHORIZED']);
  });

  test('without an identity provider configured every token is refused', async (t) => {
    const keys = await makeKeys();
    const d = await startTestDaemon(t, 'sqlite');
    const res = await d.plain('POST', confirmPath('doesnotexist0000000000000'), { txHash: TX }, { Authorization: `Bearer ${await token(keys.ec.privateKey)}` });
    assert.deepEqual([res.status, res.json.error.code], [401, 'UNAUTHORIZED']);
    // A key without issuer and audience is not enough either.
    const d2 = await startTestDaemon(t, 'sqlite', { idToken: { jwk: keys.jwks.keys[0] } });
    const res2 = await d2.plain('POST', confirmPath('doesnotexist0000000000000'), { txHash: TX }, { Authorization: `Bearer ${await token(keys.ec.privateKey)}` });
    assert.deepEqual([res2.status, res2.json.error.code], [401, 'UNAUTHORIZED']);
  });

  test('an unreachable key set is the server\'s problem: 503, not 401', async (t) => {
    const keys = await makeKeys();
    const jwks = await startJwksServer(t, keys.jwks);
    const dead = jwks.url.replace('/.well-known/jwks.json', '/missing.json');
    const d = await startTestDaemon(t, 'sqlite', { idToken: { issuer: ISSUER, audience: AUDIENCE, jwksUrl: dead } });
    const res = await d.plain('POST', confirmPath('doesnotexist0000000000000'), { txHash: TX }, { Authorization: `Bearer ${await token(keys.ec.privateKey)}` });
    assert.deepEqual([res.status, res.json.error.code], [503, 'SERVICE_UNAVAILABLE']);
  });

  test('a private or non-ES256 static key is a start-up error', async () => {
    const keys = await makeKeys();
    const log = createLogger('silent');
    const priv = { ...(await exportJWK(keys.ec.privateKey)), kid: 'ec-1' };
    await assert.rejects(createIdTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, jwk: priv }, log), /idToken\.jwk: holds a private key/);
    await assert.rejects(createIdTokenVerifier({ issuer: ISSUER, audience: AUDIENCE, jwk: keys.jwks.keys[1] }, log), /idToken\.jwk: not an ES256 public key/);
  });
});
