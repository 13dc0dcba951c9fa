import type { CryptoKey, JWK, JWTPayload, JWTVerifyGetKey } from 'jose';
import type { Config } from '../../config/schema.ts';
import { GatewayError, UsageError } from '../../domain/errors.ts';
import type { Logger } from '../../logger.ts';

// The id token guarding POST /checkout/api/v1/payments/{id}/confirm (docs/checkout.md): an ES256 JWT
// from the operator's identity provider in `Authorization: Bearer <token>`. Checked: the signature
// against the provider's keys (a JWKS URL, or one static JWK), the algorithm (ES256 only, so neither
// HS256 with a public key as secret nor `none` gets through), iss, aud, and exp (required).

export type IdTokenConfig = Config['idToken'];
export type VerifyIdToken = (authorization: string | undefined) => Promise<JWTPayload>;

const ALGORITHMS = ['ES256'];
const CLOCK_TOLERANCE_S = 30;
/** Id tokens live minutes, not days: a longer exp is not a token an identity provider would issue for a checkout. */
const MAX_LIFETIME_S = 24 * 3600;
const BEARER_RE = /^Bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/i;

/** Failures of the key source itself (unreachable or broken JWKS endpoint): the server's problem. */
const KEY_SOURCE_FAILURES = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC']);

function unauthorized(message: string, error = 'invalid_token'): GatewayError {
  return new GatewayError('UNAUTHORIZED', message, { headers: { 'WWW-Authenticate': `Bearer error="${error}"` } });
}

/**
 * Builds the verifier once at start-up. A static JWK that cannot be imported is a config error.
 * Without issuer, audience and a key source every token is refused: a key alone would accept
 * tokens minted for any other audience of the same provider.
 */
export async function createIdTokenVerifier(config: IdTokenConfig, log: Logger): Promise<VerifyIdToken> {
  // jose is loaded only when a key source is configured (daemon memory, docs/performance.md).
  const jose = config?.jwksUrl || config?.jwk ? await import('jose') : null;
  const key = jose ? await keySource(jose, config) : null;
  const issuer = config?.issuer;
  const audience = config?.audience;
  if (!key || !issuer || !audience) {
    log.warn('idToken.issuer, idToken.audience and idToken.jwksUrl or idToken.jwk are not all set: POST /checkout/api/v1/payments/{id}/confirm refuses every request');
  }

  return async (authorization) => {
    if (!authorization) throw unauthorized('Authorization: Bearer <id token> is required', 'invalid_request');
    const match = BEARER_RE.exec(authorization.trim());
    if (!match) throw unauthorized('Authorization must be "Bearer <id token>" with a compact JWT', 'invalid_request');
    if (!jose || !key || !issuer || !audience) throw unauthorized('Id tokens are not accepted: the identity provider is not configured on this server');
    const token = match[1]!;
    const options = { issuer, audience, algorithms: ALGORITHMS, requiredClaims: ['exp'], clockTolerance: CLOCK_TOLERANCE_S };
    try {
      // Two calls only because jwtVerify's overloads take a key or a key resolver, not the union.
      const verified = typeof key === 'function' ? await jose.jwtVerify(token, key, options) : await jose.jwtVerify(token, key, options);
      const now = Math.floor(Date.now() / 1000);
      const { iat, exp } = verified.payload;
      // jose checks nbf and exp; an iat from the future or an exp days away means a forged or broken issuer.
      if (iat !== undefined && iat > now + CLOCK_TOLERANCE_S) throw unauthorized('Id token is issued in the future');
      if (exp !== undefined && exp - now > MAX_LIFETIME_S) throw unauthorized(`Id token expires too far ahead (more than ${MAX_LIFETIME_S / 3600} h)`);
      return verified.payload;
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      if (!(err instanceof jose.errors.JOSEError) || KEY_SOURCE_FAILURES.has(err.code)) {
        log.warn({ err: err instanceof Error ? err.message : String(err) }, 'id token keys could not be fetched');
        throw new GatewayError('SERVICE_UNAVAILABLE', 'The identity provider keys are unavailable; retry shortly', { cause: err });
      }
      throw unauthorized(err instanceof jose.errors.JWTExpired ? 'Id token has expired' : 'Id token is invalid');
    }
  };
}

async function keySource(jose: typeof import('jose'), config: IdTokenConfig): Promise<JWTVerifyGetKey | CryptoKey | Uint8Array | null> {
  if (config?.jwksUrl) {
    return jose.createRemoteJWKSet(new URL(config.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
  }
  if (config?.jwk) {
    if ('d' in config.jwk) throw new UsageError('idToken.jwk: holds a private key ("d"); configure the public key only');
    try {
      return await jose.importJWK(config.jwk as JWK, 'ES256');
    } catch (err) {
      throw new UsageError(`idToken.jwk: not an ES256 public key (${err instanceof Error ? err.message : String(err)})`);
    }
  }
  return null;
}
