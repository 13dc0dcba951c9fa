import { timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../domain/errors.ts';
import type { ApiKeyPrincipal, AuthOptions, AuthRequest } from '../domain/principal.ts';
import { canonicalString, hmacHex, sha256Hex } from '../sdk/sign-request.ts';
import { apiKeyIsCurrent, cachedApiKey, loadApiKey } from '../store/merchant-keys.ts';
import type { AuthScheme } from './auth-scheme.ts';
import type { DaemonDeps } from './deps.ts';

export const SIGNATURE_RE = /^t=(\d+),v1=([a-f0-9]{64})$/;
export const TOLERANCE_SECONDS = 300;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function signatureMatches(secret: string, given: string, message: string): boolean {
  const want = Buffer.from(hmacHex(secret, message), 'utf8');
  const got = Buffer.from(given, 'utf8');
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * The spec's seven checks, in the spec's order; answers the merchant point the key names.
 * The point comes from the process's key cache (src/store/merchant-keys.ts); `fresh` forces a
 * database read, `confirm` checks a cached entry's version. A cached entry that fails the
 * signature is re-checked against the database once, in case another process rotated the secret.
 */
async function verifySignedRequest(deps: DaemonDeps, req: AuthRequest, options: AuthOptions): Promise<ApiKeyPrincipal> {
  const { db, box } = deps.common;
  const nowMs = options.nowMs ?? Date.now();
  const apiKey = req.header('x-api-key');
  if (!apiKey) throw new GatewayError('API_KEY_INVALID', 'X-API-Key header is missing');
  const signature = req.header('x-signature');
  if (!signature) throw new GatewayError('SIGNATURE_MISSING', 'X-Signature header is missing');
  const match = SIGNATURE_RE.exec(signature);
  if (!match) throw new GatewayError('SIGNATURE_INVALID', 'X-Signature must look like t=<unix seconds>,v1=<64 lowercase hex>');
  const t = match[1]!;
  const skew = Math.abs(nowMs / 1000 - Number(t));
  if (!(skew <= TOLERANCE_SECONDS)) {
    throw new GatewayError('SIGNATURE_EXPIRED', `Signature timestamp is more than ${TOLERANCE_SECONDS} s from server time; re-sign at send time (t is Unix seconds)`);
  }
  const method = req.method.toUpperCase();
  const idempotencyKey = req.header('idempotency-key');
  if (WRITE_METHODS.has(method) && !idempotencyKey) {
    throw new GatewayError('IDEMPOTENCY_KEY_REQUIRED', `${method} requests need an Idempotency-Key header`);
  }
  if (apiKey.length > 128) throw new GatewayError('API_KEY_INVALID', 'API key is unknown or its merchant point is not active');

  let merchant = options.fresh ? undefined : cachedApiKey(db, apiKey);
  const cached = merchant !== undefined;
  merchant ??= (await loadApiKey(db, box, apiKey)) ?? undefined;
  if (!merchant?.active) throw new GatewayError('API_KEY_INVALID', 'API key is unknown or its merchant point is not active');
  if (merchant.secret === null) {
    // A stored secret that no longer decrypts (tampered or corrupted): this point alone is out of
    // service until `chaingate secrets rotate` gives it a new one; the rest of the daemon runs.
    req.log.error({ merchantId: merchant.id, err: merchant.secretError }, "the merchant point's stored API secret cannot be decrypted; rotate it with `chaingate secrets rotate`");
    throw new GatewayError('SERVICE_UNAVAILABLE', "This merchant point's API secret cannot be read on the server; the operator must rotate it");
  }
  const message = canonicalString(t, method, req.path, idempotencyKey, sha256Hex(req.body));
  if (signatureMatches(merchant.secret, match[2]!, message)) {
    // Reads confirm a cached point with one primary-key lookup; writes do it inside their transaction.
    if (cached && options.confirm && !(await apiKeyIsCurrent(db, merchant))) return verifySignedRequest(deps, req, { ...options, fresh: true });
    return { kind: 'api-key', merchantPointIds: [merchant.id], apiKey: merchant.apiKey, version: merchant.version };
  }
  if (cached && !(await apiKeyIsCurrent(db, merchant))) return verifySignedRequest(deps, req, { fresh: true, nowMs });
  throw new GatewayError('SIGNATURE_INVALID', 'Signature does not match the request');
}

/** The merchant API's scheme: X-API-Key and an HMAC-SHA256 X-Signature over the canonical string. */
export const signedRequestScheme: AuthScheme<'api-key'> = {
  kind: 'api-key',
  presented: (req) => req.header('x-api-key') !== undefined || req.header('x-signature') !== undefined,
  authenticate: verifySignedRequest,
};

/** Whether this process holds the key as an active point's (no database read): the rate limits' exemption. */
export function isCachedApiKey(deps: DaemonDeps, apiKey: string): boolean {
  return cachedApiKey(deps.common.db, apiKey) !== undefined;
}
