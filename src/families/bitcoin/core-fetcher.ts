import type { Logger } from '../../logger.ts';
import { backoffMs, RpcAborted, sleep } from '../retry.ts';
import { endpointOrigin, faultCause, recordRpcCall, reportRpcFault } from '../rpc-metrics.ts';
import { RpcUnsupportedError } from '../source.ts';
import { HEX64, type BlockFetcher } from './bitcoin-source.ts';
import { ChainError } from '../../domain/errors.ts';

// Bitcoin Core's JSON-RPC, for operators who run their own node: getblockcount, getblockhash,
// getblockheader <hash> false and getblock <hash> 0 (raw hex), the same raw bytes the Esplora path
// parses. Credentials come from the URL (http://user:password@127.0.0.1:8332) and travel as Basic
// auth; they are never logged. Bitcoin Core answers an RPC error with HTTP 500 (404 for an
// unknown method) and a JSON body {"result": null, "error": {"code", "message"}, "id"}.

const RPC_IN_WARMUP = -28;
const RPC_INVALID_PARAMETER = -8; // getblockhash: "Block height out of range"
const RPC_METHOD_NOT_FOUND = -32601;

export class CoreRpcError extends ChainError {
  override readonly name = 'CoreRpcError';
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

export function createCoreFetcher(options: { url: string; timeoutMs: number; log: Logger; signal?: AbortSignal; maxBackoffMs?: number }): BlockFetcher {
  const url = new URL(options.url);
  const auth = url.username ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}` : null;
  url.username = '';
  url.password = '';
  const endpoint = url.toString();
  // Named in logs and the indexer's last error: scheme, host and port only, never the credentials.
  const origin = endpointOrigin(options.url);
  let id = 0;

  async function call<T>(method: string, params: unknown[], check: (v: unknown) => v is T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      if (options.signal?.aborted) throw new RpcAborted('stopping');
      let problem: string;
      const startedAt = performance.now();
      try {
        const res = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
          body: JSON.stringify({ jsonrpc: '1.0', id: ++id, method, params }),
          signal: AbortSignal.timeout(options.timeoutMs),
          redirect: 'error',
        });
        const text = await res.text();
        if (res.status === 401 || res.status === 403) throw new RpcUnsupportedError(`${method} at ${origin}: the node refused the credentials (HTTP ${res.status})`);
        type Answer = { result?: unknown; error?: { code?: unknown; message?: unknown } | null };
        let body: Answer | null;
        try {
          const parsed: unknown = JSON.parse(text);
          body = parsed && typeof parsed === 'object' ? (parsed as Answer) : null;
        } catch {
          body = null;
        }
        if (body?.error && typeof body.error.code === 'number') {
          const code = body.error.code;
          const message = String(body.error.message ?? '');
          if (code === RPC_METHOD_NOT_FOUND) throw new RpcUnsupportedError(`${method} at ${origin}: ${message}`);
          if (code !== RPC_IN_WARMUP) throw new CoreRpcError(`${method}: ${message} (${code})`, code);
          problem = `warming up: ${message}`;
        } else if (body && res.ok && 'result' in body && check(body.result)) {
          recordRpcCall(method, true, startedAt);
          return body.result;
        } else {
          problem = body ? `malformed answer to ${method}` : `HTTP ${res.status}`;
        }
      } catch (err) {
        if (err instanceof RpcUnsupportedError || err instanceof CoreRpcError) throw err;
        problem = faultCause(err, options.timeoutMs);
      }
      recordRpcCall(method, false, startedAt);
      const cause = problem.slice(0, 300);
      reportRpcFault({ endpoint: origin, method, cause, attempts: attempt + 1 });
      const delay = backoffMs(attempt, options.maxBackoffMs ?? 30_000);
      options.log.warn({ endpoint: origin, method, attempt: attempt + 1, retryInMs: Math.round(delay), error: cause }, 'bitcoin node call failed; retrying');
      await sleep(delay, options.signal);
    }
  }

  const isHeight = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
  const isHash = (v: unknown): v is string => typeof v === 'string' && HEX64.test(v);
  const isHex = (v: unknown): v is string => typeof v === 'string' && /^([0-9a-f]{2})+$/.test(v);

  return {
    tipHeight: async () => BigInt(await call('getblockcount', [], isHeight)),
    async hashAt(n) {
      try {
        return await call('getblockhash', [Number(n)], isHash);
      } catch (err) {
        if (err instanceof CoreRpcError && err.code === RPC_INVALID_PARAMETER) return null;
        throw err;
      }
    },
    header: async (hash) => Buffer.from(await call('getblockheader', [hash, false], isHex), 'hex'),
    rawBlock: async (hash) => Buffer.from(await call('getblock', [hash, 0], isHex), 'hex'),
  };
}
