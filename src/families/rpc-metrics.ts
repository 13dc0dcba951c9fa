import { Counter, Histogram, Registry } from 'prom-client';
import { originsOnly } from '../domain/http-url.ts';

// RPC calls of this indexer process by method and outcome, served on its own /metrics when
// metrics.indexerPort (CHAINGATE_INDEXER_METRICS_PORT) is set. One registry per process: an
// indexer process indexes one chain and network, which label every series. Calls that keep
// failing are also reported to whoever listens (the indexer records them on its cursor row, so
// `chaingate status` and serve's /metrics show an indexer stuck on its endpoint).

export const rpcRegistry = new Registry();

const calls = new Counter({
  name: 'chaingate_rpc_calls_total',
  help: 'RPC / chain API calls by method and outcome (ok, error: a failed attempt, retried or not)',
  labelNames: ['method', 'outcome'],
  registers: [rpcRegistry],
});
const duration = new Histogram({
  name: 'chaingate_rpc_call_duration_seconds',
  help: 'RPC / chain API call duration by method',
  labelNames: ['method'],
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [rpcRegistry],
});

/** A path with its ids taken out, so each endpoint is one series (`/block/:id/raw`). */
export function methodOfPath(path: string): string {
  return path
    .split('?')[0]!
    .replace(/\/[0-9a-fA-F]{16,}/g, '/:id')
    .replace(/\/\d+/g, '/:n');
}

export function recordRpcCall(method: string, ok: boolean, startedAt: number): void {
  calls.inc({ method, outcome: ok ? 'ok' : 'error' });
  duration.observe({ method }, (performance.now() - startedAt) / 1000);
}

/**
 * What logs and status may show of an endpoint: scheme://host[:port]. Providers put API keys in
 * the path (Infura, Alchemy, QuickNode, Chainstack), the query or the user info; none is shown.
 */
export function endpointOrigin(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(not a URL)';
  }
}

/**
 * Why a call failed, in the transport's own terms: ECONNREFUSED, ENOTFOUND, a timeout, an HTTP
 * status, the node's error message. fetch says only "fetch failed"; the socket error is its cause.
 */
export function faultCause(err: unknown, timeoutMs?: number): string {
  // Logged, stored and shown by `status`: a URL quoted by fetch or ethers keeps only its origin.
  return originsOnly(transportCause(err, timeoutMs));
}

function transportCause(err: unknown, timeoutMs?: number): string {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e instanceof Error && e.cause !== undefined && e.cause !== null; depth++) e = e.cause;
  if (!(e instanceof Error)) return String(e);
  const x = e as Error & { code?: unknown; shortMessage?: string; errors?: unknown[]; info?: { responseStatus?: unknown } };
  if (x.name === 'TimeoutError' || x.code === 'TIMEOUT') return timeoutMs === undefined ? 'timeout' : `timeout after ${timeoutMs} ms`;
  // ethers: "server response 503 Service Unavailable".
  if (x.code === 'SERVER_ERROR' && typeof x.info?.responseStatus === 'string') return `HTTP ${x.info.responseStatus}`;
  if (typeof x.code === 'string' && /^[A-Z][A-Z0-9_]+$/.test(x.code) && !/^(UNKNOWN_ERROR|UNSUPPORTED_OPERATION|BAD_DATA|SERVER_ERROR|CALL_EXCEPTION)$/.test(x.code)) {
    // A socket error (ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET…); several addresses tried make an AggregateError with no message.
    const detail = x.message || (x.errors?.[0] instanceof Error ? x.errors[0].message : '');
    return detail.includes(x.code) ? detail : `${x.code}${detail ? `: ${detail}` : ''}`;
  }
  const message = x.shortMessage ?? x.message;
  return x.name && x.name !== 'Error' ? `${x.name}: ${message}` : message;
}

/** A call that has failed several times in a row and is still being retried. */
export interface RpcFault {
  /** scheme://host[:port] (endpointOrigin). */
  endpoint: string;
  /** The JSON-RPC method, or the chain API's path (relative to its base URL, ids taken out). */
  method: string;
  cause: string;
  attempts: number;
}

/** One line naming all of it, for a cursor row's lastError (at most 255 characters). */
export function faultText(f: RpcFault): string {
  return `${f.method} at ${f.endpoint} failed ${f.attempts} times: ${f.cause}`.slice(0, 255);
}

/** After this many failed attempts in a row a call counts as the indexer failing (one or two are weather). */
export const FAULT_REPORT_AFTER = 3;

const faultListeners = new Set<(fault: RpcFault) => void>();

/** Listen for calls that keep failing; returns the function that stops listening. */
export function onRpcFault(listener: (fault: RpcFault) => void): () => void {
  faultListeners.add(listener);
  return () => faultListeners.delete(listener);
}

export function reportRpcFault(fault: RpcFault): void {
  if (fault.attempts < FAULT_REPORT_AFTER) return;
  for (const listener of faultListeners) listener(fault);
}
