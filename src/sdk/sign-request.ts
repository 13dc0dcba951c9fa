import { createHash, createHmac, randomUUID } from 'node:crypto';

// Merchant-side signing for the chaingate gateway (/api/v1). Import it in your back end:
//   const headers = signRequest({ apiKey, apiSecret, method: 'POST', path: '/api/v1/invoices', body });
//   await fetch(baseUrl + '/api/v1/invoices', { method: 'POST', headers, body });
// Serialise the body once and send exactly those bytes: the server hashes what it receives.

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export interface SignInput {
  apiKey: string;
  apiSecret: string;
  method: string;
  /** Path only; a query string, if present, is stripped before signing (it is not signed). */
  path: string;
  /** The exact bytes to send (string or Buffer); omit for no body. */
  body?: string | Uint8Array;
  /** Required for writes; a fresh UUID is made when omitted. */
  idempotencyKey?: string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
}

export function sha256Hex(body: string | Uint8Array = ''): string {
  return createHash('sha256').update(body).digest('hex');
}

/** The canonical string: t, METHOD, path, [idempotency key for writes], sha256(body) joined by LF. */
export function canonicalString(t: string, method: string, path: string, idempotencyKey: string | undefined, bodyHash: string): string {
  const m = method.toUpperCase();
  const lines = [t, m, path.split('?')[0]!];
  if (WRITE_METHODS.has(m)) lines.push(idempotencyKey ?? '');
  lines.push(bodyHash);
  return lines.join('\n');
}

export function hmacHex(secret: string, message: string): string {
  return createHmac('sha256', secret).update(message, 'utf8').digest('hex');
}

export function signRequest(input: SignInput): Record<string, string> {
  const method = input.method.toUpperCase();
  const t = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  const isWrite = WRITE_METHODS.has(method);
  const idempotencyKey = isWrite ? (input.idempotencyKey ?? randomUUID()) : undefined;
  const signature = hmacHex(input.apiSecret, canonicalString(t, method, input.path, idempotencyKey, sha256Hex(input.body ?? '')));
  const headers: Record<string, string> = {
    'X-API-Key': input.apiKey,
    'X-Signature': `t=${t},v1=${signature}`,
    'Content-Type': 'application/json',
    Accept: 'application/json',
  };
  if (idempotencyKey !== undefined) headers['Idempotency-Key'] = idempotencyKey;
  return headers;
}
