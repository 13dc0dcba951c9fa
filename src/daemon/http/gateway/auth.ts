import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { SecretBox } from '../../../domain/secret-box.ts';
import { GatewayError } from '../../../domain/errors.ts';
import type { Database } from '../../../db/orm.ts';
import { findByApiKey, openSecret } from '../../../db/merchants.ts';
import type { MerchantPoint } from '../../../db/entities/merchant-point.entity.ts';
import { canonicalString, hmacHex, sha256Hex } from '../../../sdk/sign-request.ts';
import { rawBody } from '../validation.ts';

export const SIGNATURE_RE = /^t=(\d+),v1=([a-f0-9]{64})$/;
export const TOLERANCE_SECONDS = 300;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/** The spec's seven checks, in the spec's order; returns the merchant point the key names. */
export async function authenticate(req: FastifyRequest, db: Database, box: SecretBox, nowMs = Date.now()): Promise<MerchantPoint> {
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
  const merchant = await findByApiKey(db.em(), apiKey);
  if (!merchant || !merchant.active) throw new GatewayError('API_KEY_INVALID', 'API key is unknown or its merchant point is not active');

  const path = req.url.split('?')[0]!;
  const expected = hmacHex(openSecret(box, merchant), canonicalString(t, method, path, idempotencyKey, sha256Hex(rawBody(req))));
  const given = Buffer.from(match[2]!, 'utf8');
  const want = Buffer.from(expected, 'utf8');
  if (given.length !== want.length || !timingSafeEqual(given, want)) {
    throw new GatewayError('SIGNATURE_INVALID', 'Signature does not match the request');
  }
  return merchant;
}
