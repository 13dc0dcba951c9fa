import { FetchRequest, JsonRpcProvider, Network } from 'ethers';
import type { z } from 'zod';
import type { Logger } from '../../logger.ts';
import { backoffMs, RpcAborted, sleep } from '../retry.ts';
import { endpointOrigin, faultCause, recordRpcCall, reportRpcFault } from '../rpc-metrics.ts';
import { ChainError } from '../../domain/errors.ts';
import { originsOnly, withoutCredentials } from '../../domain/http-url.ts';
import { RpcUnsupportedError } from '../source.ts';

/** The provider said the block range or result set is too large: split the request and retry. */
export class RangeTooLargeError extends ChainError {
  override readonly name = 'RangeTooLargeError';
}

/**
 * A call with `maxAttempts` failed that many times. `code` is the JSON-RPC error code when the node
 * itself answered with an error object (e.g. geth's -32000 "finalized block not found"), undefined
 * for transport faults and malformed answers.
 */
export class RpcGaveUpError extends ChainError {
  override readonly name = 'RpcGaveUpError';
  constructor(
    message: string,
    readonly code: number | undefined,
  ) {
    super(message);
  }
}

// -32601 method not found, -32602 invalid params (e.g. a block tag the node does not know), -32004 method not supported.
const UNSUPPORTED_CODES = new Set([-32601, -32602, -32004]);
const UNSUPPORTED_HINTS = /(method not found|not supported|does not exist\/is not available|is not available|unsupported method)/i;

const RANGE_HINTS = /(block range|range is too (large|wide)|more than \d+ (results|logs)|query returned more than|too many (results|logs|blocks)|limit exceeded|exceed(s|ed)? .*(range|limit)|response size)/i;

export interface CallOptions<T> {
  allowNull?: boolean;
  /** The answer's shape: anything else is a logged, retried fault naming the method, never a cast. */
  schema?: z.ZodType<T>;
  /** Give up after this many failed attempts with RpcGaveUpError (default: retry until stopped). */
  maxAttempts?: number;
}

export interface Rpc {
  /** One JSON-RPC call, retried with capped exponential backoff on timeouts, 429s, 5xx, garbage, wrong shapes and nulls. */
  call<T>(method: string, params: unknown[], options?: CallOptions<T>): Promise<T>;
  provider: JsonRpcProvider;
  close(): void;
}

export interface RpcOptions {
  url: string;
  chainId: number | null;
  log: Logger;
  timeoutMs?: number;
  maxBackoffMs?: number;
  signal?: AbortSignal;
  /** Sent with every request (a provider's API key header, e.g. TronGrid's TRON-PRO-API-KEY); never logged. */
  headers?: Record<string, string>;
}

export function createRpc(options: RpcOptions): Rpc {
  const request = credentialedRequest(options.url);
  const timeoutMs = options.timeoutMs ?? 15_000;
  request.timeout = timeoutMs;
  // A 429 is answered, not retried inside ethers (which would end in a bare "timeout"): the loop
  // below retries it with its own backoff and names it.
  request.retryFunc = async () => false;
  // What logs and errors name: never the URL's path, query or user info, where keys live.
  const endpoint = endpointOrigin(options.url);
  for (const [name, value] of Object.entries(options.headers ?? {})) request.setHeader(name, value);
  // One request per call (no batching), no cache: a confirmation count must never be stale.
  const provider = new JsonRpcProvider(request, options.chainId ? Network.from(options.chainId) : undefined, {
    staticNetwork: options.chainId ? Network.from(options.chainId) : undefined,
    batchMaxCount: 1,
    cacheTimeout: -1,
    polling: false,
  });
  const maxBackoff = options.maxBackoffMs ?? 30_000;

  async function call<T>(method: string, params: unknown[], callOptions: CallOptions<T> = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) throw new RpcAborted('stopping');
      const startedAt = performance.now();
      try {
        const result: unknown = await provider.send(method, params);
        recordRpcCall(method, true, startedAt);
        if (result === null || result === undefined) {
          if (!callOptions.allowNull) throw new Error(`${method} returned null`);
          return result as T;
        }
        if (!callOptions.schema) return result as T;
        const parsed = callOptions.schema.safeParse(result);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new Error(`malformed answer to ${method}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape'}`);
        }
        return parsed.data;
      } catch (err) {
        if (!(err instanceof Error && err.message.startsWith('malformed answer to'))) recordRpcCall(method, false, startedAt);
        const message = originsOnly(errorText(err));
        if (RANGE_HINTS.test(message)) throw new RangeTooLargeError(message);
        const code = errorCode(err);
        if (UNSUPPORTED_CODES.has(code ?? 0) || UNSUPPORTED_HINTS.test(message)) throw new RpcUnsupportedError(`${method}: ${message}`);
        // The node's own error object, or the transport's cause (ECONNREFUSED, timeout, HTTP 503).
        const cause = (code !== undefined ? `JSON-RPC error ${code}: ${nodeMessage(err) ?? message}` : faultCause(err, timeoutMs)).slice(0, 300);
        if (callOptions.maxAttempts !== undefined && attempt + 1 >= callOptions.maxAttempts) {
          options.log.warn({ endpoint, method, attempts: attempt + 1, error: cause }, 'RPC call failed; giving up');
          throw new RpcGaveUpError(`${method} at ${endpoint}: ${cause}`, code);
        }
        const delay = backoffMs(attempt, maxBackoff);
        options.log.warn({ endpoint, method, attempt: attempt + 1, retryInMs: Math.round(delay), error: cause }, 'RPC call failed; retrying');
        // A bounded call's caller decides what its failure means; an unbounded one is the indexer stuck.
        if (callOptions.maxAttempts === undefined) reportRpcFault({ endpoint, method, cause, attempts: attempt + 1 });
        await sleep(delay, options.signal);
      }
    }
  }
  return { call, provider, close: () => provider.destroy() };
}

/**
 * An ethers request for `url` with its user info (http://user:pass@host) sent as a Basic
 * Authorization header instead: the URL ethers keeps, and quotes in its errors, carries no credentials.
 */
export function credentialedRequest(url: string): FetchRequest {
  const { url: bare, authorization } = withoutCredentials(url);
  const request = new FetchRequest(bare);
  if (authorization) request.setHeader('authorization', authorization);
  return request;
}

function errorCode(err: unknown): number | undefined {
  const e = err as { error?: { code?: unknown }; info?: { error?: { code?: unknown } } } | null;
  const code = e?.error?.code ?? e?.info?.error?.code;
  return typeof code === 'number' ? code : undefined;
}

function nodeMessage(err: unknown): string | undefined {
  const e = err as { error?: { message?: unknown }; info?: { error?: { message?: unknown } } } | null;
  const message = e?.error?.message ?? e?.info?.error?.message;
  return typeof message === 'string' ? message : undefined;
}

function errorText(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { shortMessage?: string; message?: string; error?: { message?: string }; info?: { error?: { message?: string } } };
    return [e.shortMessage, e.error?.message, e.info?.error?.message, e.message].filter(Boolean).join(' | ');
  }
  return String(err);
}
