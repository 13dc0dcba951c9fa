import { Counter, Histogram, Registry } from 'prom-client';

// RPC calls of this indexer process by method and outcome, served on its own /metrics when
// metrics.indexerPort (CHAINGATE_INDEXER_METRICS_PORT) is set. One registry per process: an
// indexer process indexes one chain and network, which label every series.

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
