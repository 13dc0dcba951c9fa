import { FetchRequest, JsonRpcProvider, Network } from 'ethers';
import type { Logger } from '../../logger.ts';
import { backoffMs, RpcAborted, sleep } from '../retry.ts';

/** The provider said the block range or result set is too large: split the request and retry. */
export class RangeTooLargeError extends Error {
  override readonly name = 'RangeTooLargeError';
}

/** The node does not offer this method (or refuses its parameters): retrying cannot help. */
export class RpcUnsupportedError extends Error {
  override readonly name = 'RpcUnsupportedError';
}

const UNSUPPORTED_CODES = new Set([-32601, -32004]);
const UNSUPPORTED_HINTS = /(method not found|not supported|does not exist\/is not available|is not available|unsupported method)/i;

const RANGE_HINTS = /(block range|range is too (large|wide)|more than \d+ (results|logs)|query returned more than|too many (results|logs|blocks)|limit exceeded|exceed(s|ed)? .*(range|limit)|response size)/i;

export interface Rpc {
  /** One JSON-RPC call, retried with capped exponential backoff on timeouts, 429s, 5xx, garbage and nulls. */
  call<T>(method: string, params: unknown[], options?: { allowNull?: boolean }): Promise<T>;
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
}

export function createRpc(options: RpcOptions): Rpc {
  const request = new FetchRequest(options.url);
  request.timeout = options.timeoutMs ?? 15_000;
  // One request per call (no batching), no cache: a confirmation count must never be stale.
  const provider = new JsonRpcProvider(request, options.chainId ? Network.from(options.chainId) : undefined, {
    staticNetwork: options.chainId ? Network.from(options.chainId) : undefined,
    batchMaxCount: 1,
    cacheTimeout: -1,
    polling: false,
  });
  const maxBackoff = options.maxBackoffMs ?? 30_000;

  async function call<T>(method: string, params: unknown[], callOptions: { allowNull?: boolean } = {}): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) throw new RpcAborted('stopping');
      try {
        const result = (await provider.send(method, params)) as T;
        if ((result === null || result === undefined) && !callOptions.allowNull) throw new Error(`${method} returned null`);
        return result;
      } catch (err) {
        const message = errorText(err);
        if (RANGE_HINTS.test(message)) throw new RangeTooLargeError(message);
        if (UNSUPPORTED_CODES.has(errorCode(err) ?? 0) || UNSUPPORTED_HINTS.test(message)) throw new RpcUnsupportedError(`${method}: ${message}`);
        const delay = backoffMs(attempt, maxBackoff);
        options.log.warn({ method, attempt: attempt + 1, retryInMs: Math.round(delay), error: message.slice(0, 300) }, 'RPC call failed; retrying');
        await sleep(delay, options.signal);
      }
    }
  }
  return { call, provider, close: () => provider.destroy() };
}

function errorCode(err: unknown): number | undefined {
  const e = err as { error?: { code?: unknown }; info?: { error?: { code?: unknown } } } | null;
  const code = e?.error?.code ?? e?.info?.error?.code;
  return typeof code === 'number' ? code : undefined;
}

function errorText(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { shortMessage?: string; message?: string; error?: { message?: string }; info?: { error?: { message?: string } } };
    return [e.shortMessage, e.error?.message, e.info?.error?.message, e.message].filter(Boolean).join(' | ');
  }
  return String(err);
}
