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
/** Deepest nesting of arrays and objects a request body may have (docs/api.md#limits). */
export const MAX_JSON_DEPTH = 32;
/** Largest serialized size of a free-form JSON field (metadata, customerMetadata), in characters. */
export const MAX_JSON_FIELD_CHARS = 16_384;

/** Nesting depth of a parsed JSON value, without recursion (a hostile body cannot overflow the stack here). */
export function jsonDepth(value: unknown): number {
  return inspectJson(value).depth;
}

/**
 * Nesting depth of a parsed JSON value and whether any decoded string (a value or a key) holds
 * NUL, in one walk without recursion. NUL is looked for after decoding: the escape `\u0000` is a
 * NUL, while the text `\\u0000` (an escaped backslash, then "u0000") is not.
 */
export function inspectJson(value: unknown): { depth: number; hasNul: boolean } {
  let deepest = 0;
  let hasNul = false;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) hasNul = true;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_JSON_DEPTH) return { depth: deepest, hasNul };
    if (Array.isArray(v)) for (const child of v) stack.push([child, depth + 1]);
    else
      for (const [k, child] of Object.entries(v as object)) {
        if (k.includes('\0')) hasNul = true;
        stack.push([child, depth + 1]);
      }
  }
  return { depth: deepest, hasNul };
}

export function jsonBody(req: FastifyRequest): unknown {
  if (parsed.has(req)) return parsed.get(req);
  const raw = rawBody(req);
  let value: unknown;
  // PostgreSQL text cannot hold NUL, and no field of this API has a use for it: refused on both
  // databases alike, as a raw byte here and as a decoded character (the \u0000 escape) below.
  if (raw.includes(0)) throw nulError();
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
  const { depth, hasNul } = inspectJson(value);
  if (depth > MAX_JSON_DEPTH) {
    throw new GatewayError('VALIDATION_ERROR', 'Request body is nested too deeply', { details: [{ path: 'body', message: `JSON may nest at most ${MAX_JSON_DEPTH} levels` }] });
  }
  if (hasNul) throw nulError();
  parsed.set(req, value);
  return value;
}

function nulError(): GatewayError {
  return new GatewayError('VALIDATION_ERROR', 'Request body must not contain NUL characters', { details: [{ path: 'body', message: 'NUL (\\u0000) is not allowed in any field' }] });
}

export function rawBody(req: FastifyRequest): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/** A JSON object as sent: the same reference is kept, so keys such as "__proto__" stay plain data. */
export const jsonObject = z
  .custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), { message: 'must be a JSON object' })
  .refine((v) => JSON.stringify(v).length <= MAX_JSON_FIELD_CHARS, { message: `must be at most ${MAX_JSON_FIELD_CHARS} characters as JSON` });

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
