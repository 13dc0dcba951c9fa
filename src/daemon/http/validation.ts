import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../domain/errors.ts';

/** Validates with zod; every failing field becomes an entry of error.details (docs/errors.md). */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, where = 'body'): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => {
    const path = [where, ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys') return { path, message: `unknown field(s): ${issue.keys.join(', ')}` };
    return { path, message: issue.message };
  });
  throw new GatewayError('VALIDATION_ERROR', `Invalid request ${where}`, { details });
}

const parsed = new WeakMap<FastifyRequest, unknown>();

/** The JSON body, parsed from the raw bytes kept for signature checks. Missing body -> undefined. */
export function jsonBody(req: FastifyRequest): unknown {
  if (parsed.has(req)) return parsed.get(req);
  const raw = rawBody(req);
  let value: unknown;
  if (raw.length === 0) value = undefined;
  else {
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch (err) {
      throw new GatewayError('VALIDATION_ERROR', 'Request body is not valid JSON', {
        details: [{ path: 'body', message: err instanceof Error ? err.message : 'malformed JSON' }],
      });
    }
  }
  parsed.set(req, value);
  return value;
}

export function rawBody(req: FastifyRequest): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/** A JSON object as sent: the same reference is kept, so keys such as "__proto__" stay plain data. */
export const jsonObject = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  { message: 'must be a JSON object' },
);

export const absoluteUrl = z
  .string()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === 'https:' || u.protocol === 'http:';
    } catch {
      return false;
    }
  }, 'must be an absolute http(s) URL');

/** Path ids are CUIDs; anything else cannot exist, so it is a plain not-found. */
export function isIdShaped(id: string): boolean {
  return /^[a-z0-9]{1,32}$/.test(id);
}
