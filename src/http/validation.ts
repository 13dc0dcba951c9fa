import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatewayError, type ErrorDetail } from '../domain/errors.ts';

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

/** Deepest nesting of arrays and objects a request body may have (docs/api.md#limits). */
export const MAX_JSON_DEPTH = 32;
/** Largest serialized size of a free-form JSON field (metadata, customerMetadata), in characters. */
export const MAX_JSON_FIELD_CHARS = 16_384;

/** Nesting depth of a parsed JSON value, without recursion (a hostile body cannot overflow the stack here). */
export function jsonDepth(value: unknown): number {
  return inspectJson(value).depth;
}

/** String.prototype.isWellFormed (ES2024, in Node since 20); typed here because the project's lib is es2023. */
function isWellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * Nesting depth of a parsed JSON value, whether any decoded string (a value or a key) holds NUL,
 * and whether any holds a lone UTF-16 surrogate, in one walk without recursion. Both are looked for
 * after decoding: the escape `\u0000` is a NUL, while the text `\\u0000` (an escaped backslash,
 * then "u0000") is not; a lone surrogate can only arrive as an escape such as `\ud800`.
 */
export function inspectJson(value: unknown): { depth: number; hasNul: boolean; illFormed: boolean } {
  let deepest = 0;
  let hasNul = false;
  let illFormed = false;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) hasNul = true;
      if (!isWellFormed(v)) illFormed = true;
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > MAX_JSON_DEPTH) return { depth: deepest, hasNul, illFormed };
    if (Array.isArray(v)) for (const child of v) stack.push([child, depth + 1]);
    else
      for (const [k, child] of Object.entries(v as object)) {
        if (k.includes('\0')) hasNul = true;
        if (!isWellFormed(k)) illFormed = true;
        stack.push([child, depth + 1]);
      }
  }
  return { depth: deepest, hasNul, illFormed };
}

/** At most this many fields are named in one error's details. */
const MAX_SURROGATE_DETAILS = 10;

/**
 * The fields of a parsed JSON value whose string or key holds a lone UTF-16 surrogate, as
 * VALIDATION_ERROR details (`body.metadata.note`), in document order, at most ten. Called only
 * once inspectJson found one and the depth is within MAX_JSON_DEPTH, so paths are built only then.
 * A lone surrogate in a key is written in the path as its escape (`body.metadata.\udc00`).
 */
export function surrogateDetails(value: unknown, where = 'body'): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const stack: [unknown, string][] = [[value, where]];
  while (stack.length && details.length < MAX_SURROGATE_DETAILS) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (!isWellFormed(v)) details.push({ path, message: `holds a lone UTF-16 surrogate (${loneSurrogates(v)}); strings must be well-formed Unicode` });
      continue;
    }
    if (v === null || typeof v !== 'object') continue;
    const children: [unknown, string][] = [];
    if (Array.isArray(v)) for (const [i, child] of v.entries()) children.push([child, `${path}.${i}`]);
    else
      for (const [k, child] of Object.entries(v as object)) {
        const childPath = `${path}.${escapeSurrogates(k)}`;
        if (!isWellFormed(k)) details.push({ path: childPath, message: `the key holds a lone UTF-16 surrogate (${loneSurrogates(k)}); keys must be well-formed Unicode` });
        children.push([child, childPath]);
      }
    // Reversed onto the stack, so fields come out in the order they were sent.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return details.slice(0, MAX_SURROGATE_DETAILS);
}

/** In a `u` regex a lone surrogate is a code point of its own, of category Cs; a pair is not. */
const LONE_SURROGATE = /\p{Cs}/gu;

function escapeSurrogates(s: string): string {
  return s.replace(LONE_SURROGATE, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

function loneSurrogates(s: string): string {
  return [...new Set(s.match(LONE_SURROGATE) ?? [])].map(escapeSurrogates).join(', ');
}

/** The JSON body, parsed from the raw bytes kept for signature checks. Missing body -> undefined. */
export function jsonBody(req: FastifyRequest): unknown {
  if (parsed.has(req)) return parsed.get(req);
  const raw = rawBody(req);
  let value: unknown;
  // PostgreSQL text cannot hold NUL, and no field of this API has a use for it: refused on both
  // databases alike, as a raw byte here and as a decoded character (the \u0000 escape) below.
  if (raw.includes(0)) throw nulError();
  if (raw.length === 0) value = undefined;
  else {
    const text = utf8Text(raw);
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new GatewayError('VALIDATION_ERROR', 'Request body is not valid JSON', {
        details: [{ path: 'body', message: err instanceof Error ? err.message : 'malformed JSON' }],
      });
    }
  }
  const { depth, hasNul, illFormed } = inspectJson(value);
  if (depth > MAX_JSON_DEPTH) {
    throw new GatewayError('VALIDATION_ERROR', 'Request body is nested too deeply', { details: [{ path: 'body', message: `JSON may nest at most ${MAX_JSON_DEPTH} levels` }] });
  }
  if (hasNul) throw nulError();
  // A lone surrogate (the escape \ud800 without its pair) cannot be stored: both databases keep
  // UTF-8, where it becomes U+FFFD. Refused, so what is answered is what is stored.
  if (illFormed) throw new GatewayError('VALIDATION_ERROR', 'Request body must be well-formed Unicode', { details: surrogateDetails(value) });
  parsed.set(req, value);
  return value;
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A body's bytes as text, refused with VALIDATION_ERROR when they are not UTF-8: decoded leniently,
 * each bad byte would become U+FFFD and be stored as something the client never sent.
 */
export function utf8Text(raw: Buffer): string {
  try {
    return UTF8.decode(raw);
  } catch {
    const at = firstInvalidUtf8(raw);
    throw new GatewayError('VALIDATION_ERROR', 'Request body is not valid UTF-8', {
      details: [{ path: 'body', message: `byte ${at} (0x${raw[at]?.toString(16).padStart(2, '0') ?? '??'}) starts no valid UTF-8 sequence; send UTF-8 bytes` }],
    });
  }
}

/** Offset of the first byte that starts no valid UTF-8 sequence (RFC 3629: no overlongs, surrogates or values past U+10FFFF). */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    let n: number;
    let min: number;
    let max = 0xbf;
    if (c < 0x80) {
      i++;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) n = 2;
    else if (c >= 0xf0 && c <= 0xf4) n = 3;
    else return i;
    // The second byte's range rules out overlongs (E0, F0), surrogates (ED) and > U+10FFFF (F4).
    min = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    if (c === 0xed) max = 0x9f;
    if (c === 0xf4) max = 0x8f;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      if (d === undefined || d < (k === 1 ? min : 0x80) || d > (k === 1 ? max : 0xbf)) return i;
    }
    i += n + 1;
  }
  return b.length;
}

function nulError(): GatewayError {
  return new GatewayError('VALIDATION_ERROR', 'Request body must not contain NUL characters', { details: [{ path: 'body', message: 'NUL (\\u0000) is not allowed in any field' }] });
}

export function rawBody(req: FastifyRequest): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

/** RFC 9110 media-type parameters: `; name=token` or `; name="quoted string"`. */
const MEDIA_TYPE_PARAMETER = /;\s*([\w!#$%&'*+.^`|~-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]*)/g;

/**
 * The 415 for an application/json Content-Type that names a charset other than UTF-8 (matched
 * case-insensitively, quoted or not), or null. Bodies are read as UTF-8 only; decoding another
 * charset as UTF-8 would store something other than what was sent. Checked with the media type,
 * before authentication.
 */
export function unsupportedCharset(contentType: string | undefined): GatewayError | null {
  if (!contentType?.includes(';')) return null; // no parameters: the usual case, no regex
  for (const [, name, value] of contentType.matchAll(MEDIA_TYPE_PARAMETER)) {
    if (name!.toLowerCase() !== 'charset') continue;
    const charset = value!.startsWith('"') && value!.length > 1 && value!.endsWith('"') ? value!.slice(1, -1).replace(/\\(.)/g, '$1') : value!;
    if (charset.toLowerCase() !== 'utf-8') return new GatewayError('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json in UTF-8: a charset other than utf-8 is not accepted');
  }
  return null;
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
