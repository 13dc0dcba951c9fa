import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import type { AuthMerchant, MerchantKeys } from '../../domain/merchant-auth.ts';
import { canonicalString, hmacHex, sha256Hex } from '../../sdk/sign-request.ts';
import { rawBody } from '../validation.ts';

export const SIGNATURE_RE = /^t=(\d+),v1=([a-f0-9]{64})$/;
export const TOLERANCE_SECONDS = 300;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

function signatureMatches(secret: string, given: string, message: string): boolean {
  const want = Buffer.from(hmacHex(secret, message), 'utf8');
  const got = Buffer.from(given, 'utf8');
  return got.length === want.length && timingSafeEqual(got, want);
}

/**
 * The spec's seven checks, in the spec's order; returns the merchant point the key names.
 * The point comes from the process's MerchantKeyCache; `fresh` forces a database read (after a
 * write found the cached version stale); `confirm` checks a cached entry's version. A cached entry that fails the signature is re-checked
 * against the database once, in case the secret was rotated by another process.
 */
export async function authenticate(req: FastifyRequest, cache: MerchantKeys, options: { fresh?: boolean; confirm?: boolean; nowMs?: number } = {}): Promise<AuthMerchant> {
  const nowMs = options.nowMs ?? Date.now();
  const apiKey = header(req, 'x-api-key');
  if (!apiKey) throw new GatewayError('API_KEY_INVALID', 'X-API-Key header is missing');
  const signature = header(req, 'x-signature');
  if (!signature) throw new GatewayError('SIGNATURE_MISSING', 'X-Signature header is missing');
  const match = SIGNATURE_RE.exec(signature);
  if (!match) throw new GatewayError('SIGNATURE_INVALID', 'X-Signature must look like t=<unix seconds>,v1=<64 lowercase hex>');
  const t = match[1]!;
  const skew = Math.abs(nowMs / 1000 - Number(t));
  if (!(skew <= TOLERANCE_SECONDS)) {
    throw new GatewayError('SIGNATURE_EXPIRED', `Signature timestamp is more than ${TOLERANCE_SECONDS} s from server time; re-sign at send time (t is Unix seconds)`);
  }
  const method = req.method.toUpperCase();
  const idempotencyKey = header(req, 'idempotency-key');
  if (WRITE_METHODS.has(method) && !idempotencyKey) {
    throw new GatewayError('IDEMPOTENCY_KEY_REQUIRED', `${method} requests need an Idempotency-Key header`);
  }
  if (apiKey.length > 128) throw new GatewayError('API_KEY_INVALID', 'API key is unknown or its merchant point is not active');

  let merchant = options.fresh ? undefined : cache.peek(apiKey);
  const cached = merchant !== undefined;
  merchant ??= (await cache.load(apiKey)) ?? undefined;
  if (!merchant?.active) throw new GatewayError('API_KEY_INVALID', 'API key is unknown or its merchant point is not active');
  if (merchant.secret === null) {
    // A stored secret that no longer decrypts (tampered or corrupted): this point alone is out of
    // service until `chaingate secrets rotate` gives it a new one; the rest of the daemon runs.
    req.log.error({ merchantId: merchant.id, err: merchant.secretError }, "the merchant point's stored API secret cannot be decrypted; rotate it with `chaingate secrets rotate`");
    throw new GatewayError('SERVICE_UNAVAILABLE', "This merchant point's API secret cannot be read on the server; the operator must rotate it");
  }
  const path = req.url.split('?')[0]!;
  const message = canonicalString(t, method, path, idempotencyKey, sha256Hex(rawBody(req)));
  if (signatureMatches(merchant.secret, match[2]!, message)) {
    // Reads confirm a cached point with one primary-key lookup; writes do it inside their transaction.
    if (cached && options.confirm && !(await cache.current(merchant))) return authenticate(req, cache, { ...options, fresh: true });
    return merchant;
  }
  if (cached && !(await cache.current(merchant))) return authenticate(req, cache, { fresh: true, nowMs });
  throw new GatewayError('SIGNATURE_INVALID', 'Signature does not match the request');
}
