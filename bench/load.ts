// The bench's load generator: C keep-alive connections (node:http), each sending its next request
// as soon as the previous answer is read, for a fixed time or until the requests run out.
// Latency is measured per request from send to the last byte of the answer.
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface LoadRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p99: number;
  /** Every answer's latency in ms, sorted (to merge slices of a run). */
  latencies: number[];
  /** Answers whose status was not the expected one, by status (0: a connection error). */
  failed: Record<number, number>;
}

export interface LoadOptions {
  baseUrl: string;
  connections: number;
  durationMs: number;
  /** The i-th request, or null when there is nothing more to send. */
  next(i: number): LoadRequest | null;
  expect: number;
  onAnswer?(i: number, status: number, body: string): void;
}

function send(agent: Agent, base: URL, r: LoadRequest): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = request(
      { agent, host: base.hostname, port: base.port, method: r.method, path: r.path, headers: r.body === undefined ? r.headers : { ...r.headers, 'content-length': String(Buffer.byteLength(r.body)) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', () => resolve({ status: 0, body: '' }));
      },
    );
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end(r.body);
  });
}

export async function drive(o: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: o.connections });
  const base = new URL(o.baseUrl);
  const latencies: number[] = [];
  const failed: Record<number, number> = {};
  let next = 0;
  const started = performance.now();
  const deadline = started + o.durationMs;
  await Promise.all(
    Array.from({ length: o.connections }, async () => {
      while (performance.now() < deadline) {
        const i = next++;
        const r = o.next(i);
        if (!r) return;
        const t0 = performance.now();
        const res = await send(agent, base, r);
        latencies.push(performance.now() - t0);
        if (res.status !== o.expect) failed[res.status] = (failed[res.status] ?? 0) + 1;
        o.onAnswer?.(i, res.status, res.body);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return summarize(latencies, seconds, failed);
}

/** req/s and quantiles of answers gathered over `seconds` (one drive, or several slices merged). */
export function summarize(latencies: number[], seconds: number, failed: Record<number, number>): LoadResult {
  latencies.sort((a, b) => a - b);
  const q = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]! : NaN);
  return { requests: latencies.length, seconds, rps: latencies.length / seconds, p50: q(0.5), p99: q(0.99), latencies, failed };
}
