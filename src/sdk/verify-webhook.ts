import { createHmac, timingSafeEqual } from 'node:crypto';

// Merchant-side verification of chaingate webhook deliveries. In your handler, before parsing:
//   const result = verifyWebhook({ apiSecret, rawBody, signature: req.headers['x-webhook-signature'] });
//   if (!result.ok) return res.writeHead(400).end();
// rawBody must be the exact bytes received (read the body as a Buffer; never re-serialise parsed JSON).
// X-Webhook-Signature is `t=<unix seconds>,v1=<hex HMAC-SHA256(apiSecret, "<t>.<raw body>")>`.

/** Deliveries older or newer than this (seconds, both directions) are refused. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export interface VerifyWebhookInput {
  /** The merchant point's current apiSecret. */
  apiSecret: string;
  /** The raw request body exactly as received. */
  rawBody: string | Uint8Array;
  /** The X-Webhook-Signature header value. */
  signature: string | string[] | null | undefined;
  /** The X-Webhook-Timestamp header value; when given it must equal the signed t. */
  timestamp?: string | string[] | null | undefined;
  /** Defaults to 300 seconds. */
  toleranceSeconds?: number;
  /** Unix seconds; defaults to now (tests). */
  now?: number;
}

export type VerifyWebhookFailure = 'missing' | 'malformed' | 'expired' | 'mismatch';

export type VerifyWebhookResult = { ok: true; timestamp: number } | { ok: false; reason: VerifyWebhookFailure };

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly reason: VerifyWebhookFailure;

  constructor(reason: VerifyWebhookFailure) {
    super(`webhook signature ${reason === 'missing' ? 'is missing' : reason === 'malformed' ? 'is malformed' : reason === 'expired' ? 'is outside the time tolerance' : 'does not match'}`);
    this.reason = reason;
  }
}

/** Lowercase hex HMAC-SHA256 of "<t>.<raw body>" keyed with the apiSecret. */
export function webhookSignatureHex(apiSecret: string, t: number | string, rawBody: string | Uint8Array): string {
  return createHmac('sha256', apiSecret).update(`${t}.`, 'utf8').update(rawBody).digest('hex');
}

/** The X-Webhook-Signature header value for a body sent at unix time t. */
export function signWebhookPayload(apiSecret: string, t: number, rawBody: string | Uint8Array): string {
  return `t=${t},v1=${webhookSignatureHex(apiSecret, t, rawBody)}`;
}

/**
 * The apiSecret in the form Standard Webhooks libraries take (`whsec_` + base64 of its bytes):
 * `new Webhook(standardWebhookSecret(apiSecret)).verify(rawBody, headers)` with the
 * `standardwebhooks` package (or any other implementation of https://www.standardwebhooks.com).
 */
export function standardWebhookSecret(apiSecret: string): string {
  return `whsec_${Buffer.from(apiSecret, 'utf8').toString('base64')}`;
}

/** The `webhook-signature` header of Standard Webhooks: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">. */
export function standardWebhookSignature(apiSecret: string, id: string, timestamp: number, rawBody: string | Uint8Array): string {
  return `v1,${createHmac('sha256', Buffer.from(apiSecret, 'utf8')).update(`${id}.${timestamp}.`, 'utf8').update(rawBody).digest('base64')}`;
}

function single(value: string | string[] | null | undefined): string | undefined {
  return Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : (value ?? undefined);
}

/** Checks signature and timestamp in constant time; never throws. */
export function verifyWebhook(input: VerifyWebhookInput): VerifyWebhookResult {
  const header = single(input.signature)?.trim();
  if (!header) return { ok: false, reason: 'missing' };
  let t: string | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') t = value;
    else if (key === 'v1') candidates.push(value);
  }
  if (!t || !/^\d{1,12}$/.test(t) || candidates.length === 0) return { ok: false, reason: 'malformed' };
  const ts = single(input.timestamp);
  if (ts !== undefined && ts.trim() !== t) return { ok: false, reason: 'malformed' };

  const now = input.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(t)) > (input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) return { ok: false, reason: 'expired' };

  const expected = Buffer.from(webhookSignatureHex(input.apiSecret, t, input.rawBody), 'hex');
  let match = false;
  for (const hex of candidates) {
    if (!/^[0-9a-f]{64}$/.test(hex)) continue;
    // timingSafeEqual on equal-length buffers: no early exit on the first differing byte.
    if (timingSafeEqual(expected, Buffer.from(hex, 'hex'))) match = true;
  }
  return match ? { ok: true, timestamp: Number(t) } : { ok: false, reason: 'mismatch' };
}

/** verifyWebhook that throws a WebhookVerificationError, and returns the parsed event on success. */
export function constructWebhookEvent<T = WebhookEventEnvelope>(input: VerifyWebhookInput): T {
  const result = verifyWebhook(input);
  if (!result.ok) throw new WebhookVerificationError(result.reason);
  const text = typeof input.rawBody === 'string' ? input.rawBody : Buffer.from(input.rawBody).toString('utf8');
  return JSON.parse(text) as T;
}

/** The envelope of every event (docs/webhooks.md). */
export interface WebhookEventEnvelope {
  id: string;
  type: string;
  apiVersion: string;
  createdAt: string;
  data: Record<string, unknown>;
}
