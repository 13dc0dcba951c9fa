import { withoutCredentials } from '../domain/http-url.ts';
import type { Logger } from '../logger.ts';
import { backoffMs, RpcAborted, sleep } from './retry.ts';
import { endpointOrigin, faultCause, methodOfPath, recordRpcCall, reportRpcFault } from './rpc-metrics.ts';

function jsonRpcMethod(body: unknown): string {
  try {
    return String((JSON.parse(String(body)) as { method?: unknown }).method ?? 'jsonrpc');
  } catch {
    return 'jsonrpc';
  }
}

/** A REST chain API (Esplora for bitcoin), with the same fault tolerance as the JSON-RPC client. */
export interface HttpClient {
  /** GET a path; null only for a 404 when `allowNotFound`. Timeouts, 429, 5xx, resets are retried. */
  text(path: string, options?: { allowNotFound?: boolean }): Promise<string | null>;
  bytes(path: string): Promise<Uint8Array>;
  /**
   * One JSON-RPC 2.0 call (POST to the base URL). Transport faults are retried; a JSON-RPC error
   * object is returned to the caller, who knows which codes mean "nothing there" for its chain.
   */
  jsonRpc<T>(method: string, params: unknown[]): Promise<{ result?: T; error?: { code: number; message: string } }>;
  /** POST a JSON body to a path; the answer's text, null only for a 404 when `allowNotFound`. */
  post(path: string, body: unknown, options?: { allowNotFound?: boolean }): Promise<string | null>;
}

export function createHttpClient(options: {
  baseUrl: string;
  timeoutMs: number;
  log: Logger;
  signal?: AbortSignal;
  maxBackoffMs?: number;
  /** Sent with every request (a provider's API key header); never logged. */
  headers?: Record<string, string>;
}): HttpClient {
  // User info in the URL (http://user:pass@host) travels as Basic auth: fetch refuses it in the URL.
  const { url: bare, authorization } = withoutCredentials(options.baseUrl);
  const base = bare.replace(/\/+$/, '');
  const fixedHeaders = { ...(authorization ? { authorization } : {}), ...options.headers };
  // What logs and errors name: never the base URL's path, query or user info, where keys live.
  const endpoint = endpointOrigin(options.baseUrl);
  const maxBackoff = options.maxBackoffMs ?? 30_000;

  async function get<T>(path: string, read: (res: Response) => Promise<T>, allowNotFound: boolean, init: RequestInit = {}): Promise<T | null> {
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) throw new RpcAborted('stopping');
      let problem: string;
      const startedAt = performance.now();
      const method = init.method === 'POST' && path === '' ? jsonRpcMethod(init.body) : methodOfPath(path);
      try {
        const headers = { ...fixedHeaders, ...(init.headers as Record<string, string> | undefined) };
        const res = await fetch(base + path, { ...init, headers, signal: AbortSignal.timeout(options.timeoutMs), redirect: 'error' });
        if (res.ok) {
          const value = await read(res);
          recordRpcCall(method, true, startedAt);
          return value;
        }
        await res.arrayBuffer().catch(() => undefined);
        if (res.status === 404 && allowNotFound) {
          recordRpcCall(method, true, startedAt);
          return null;
        }
        // 404 is retried too: a node behind a load balancer may not have the block yet.
        problem = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
      } catch (err) {
        problem = faultCause(err, options.timeoutMs);
      }
      recordRpcCall(method, false, startedAt);
      const delay = backoffMs(attempt, maxBackoff);
      const cause = problem.slice(0, 300);
      options.log.warn({ endpoint, method, attempt: attempt + 1, retryInMs: Math.round(delay), error: cause }, 'chain API call failed; retrying');
      reportRpcFault({ endpoint, method, cause, attempts: attempt + 1 });
      await sleep(delay, options.signal);
    }
  }

  return {
    text: (path, opts = {}) => get(path, (r) => r.text(), Boolean(opts.allowNotFound)),
    bytes: async (path) => (await get(path, async (r) => new Uint8Array(await r.arrayBuffer()), false))!,
    async jsonRpc<T>(method: string, params: unknown[]) {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
      const read = async (r: Response) => {
        const parsed = JSON.parse(await r.text()) as { result?: T; error?: { code: number; message: string } };
        if (typeof parsed !== 'object' || parsed === null || (!('result' in parsed) && !('error' in parsed))) throw new Error('not a JSON-RPC response');
        return parsed;
      };
      // A malformed body throws inside read(), which get() treats like any transport fault: retried.
      return (await get('', read, false, { method: 'POST', body, headers: { 'content-type': 'application/json' } }))!;
    },
    post: (path, body, opts = {}) =>
      get(path, (r) => r.text(), Boolean(opts.allowNotFound), { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  };
}
