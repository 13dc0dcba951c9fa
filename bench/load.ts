// The bench's load generator: C keep-alive connections (raw HTTP/1.1 on node:net), each sending its next request
// as soon as the previous answer is read, for a fixed time or until the requests run out.
// Latency is measured per request from send to the last byte of the answer.
import { connect, type Socket } from 'node:net';
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

interface Answer {
  status: number;
  body: string;
}

/**
 * One keep-alive connection speaking HTTP/1.1 on a raw socket, one request at a time (like wrk or
 * autocannon): the request is written as one string, the answer parsed by its status line and
 * Content-Length (or chunked body). node:http's client cost the shared two-core box about half a
 * core at these rates, CPU taken from the server being measured (docs/performance.md).
 */
class Connection {
  private socket: Socket | null = null;
  private buffered: Buffer = Buffer.alloc(0);
  private pending: ((a: Answer) => void) | null = null;

  constructor(private readonly base: URL) {}

  send(r: LoadRequest): Promise<Answer> {
    const socket = this.socket ?? this.open();
    const headers = Object.entries(r.headers ?? {})
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    const length = r.body === undefined ? '' : `content-length: ${Buffer.byteLength(r.body)}\r\n`;
    return new Promise<Answer>((resolve) => {
      this.pending = resolve;
      socket.write(`${r.method} ${r.path} HTTP/1.1\r\nhost: ${this.base.host}\r\n${headers}${length}\r\n${r.body ?? ''}`);
    });
  }

  close(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  private open(): Socket {
    const socket = connect({ host: this.base.hostname, port: Number(this.base.port), noDelay: true });
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    const lost = () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.buffered = Buffer.alloc(0);
      this.settle({ status: 0, body: '' });
    };
    socket.on('error', lost);
    socket.on('close', lost);
    this.socket = socket;
    return socket;
  }

  private settle(a: Answer): void {
    const resolve = this.pending;
    this.pending = null;
    resolve?.(a);
  }

  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    const end = this.buffered.indexOf('\r\n\r\n');
    if (end < 0) return;
    const head = this.buffered.toString('latin1', 0, end).split('\r\n');
    const status = Number(head[0]!.split(' ')[1]);
    const header = (name: string) => head.find((l) => l.slice(0, name.length + 1).toLowerCase() === `${name}:`)?.slice(name.length + 1).trim();
    const start = end + 4;
    let body: Buffer | null;
    let used: number;
    if (header('transfer-encoding')?.toLowerCase() === 'chunked') [body, used] = dechunk(this.buffered, start);
    else {
      const length = Number(header('content-length') ?? 0);
      [body, used] = this.buffered.length - start >= length ? [this.buffered.subarray(start, start + length), start + length] : [null, 0];
    }
    if (body === null) return; // the rest of the answer is still to come
    const text = body.toString('utf8');
    this.buffered = this.buffered.subarray(used);
    if (header('connection')?.toLowerCase() === 'close') this.close();
    this.settle({ status, body: text });
  }
}

/** A chunked body from `start`: the body and the bytes used, or null while incomplete. */
function dechunk(buf: Buffer, start: number): [Buffer | null, number] {
  const parts: Buffer[] = [];
  let at = start;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return [null, 0];
    const size = parseInt(buf.toString('latin1', at, eol), 16);
    if (size === 0) {
      const trailerEnd = buf.indexOf('\r\n\r\n', eol);
      return trailerEnd < 0 ? [null, 0] : [Buffer.concat(parts), trailerEnd + 4];
    }
    if (buf.length < eol + 2 + size + 2) return [null, 0];
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

export async function drive(o: LoadOptions): Promise<LoadResult> {
  const base = new URL(o.baseUrl);
  const connections: Connection[] = [];
  const latencies: number[] = [];
  const failed: Record<number, number> = {};
  let next = 0;
  const started = performance.now();
  const deadline = started + o.durationMs;
  await Promise.all(
    Array.from({ length: o.connections }, async () => {
      const connection = new Connection(base);
      connections.push(connection);
      while (performance.now() < deadline) {
        const i = next++;
        const r = o.next(i);
        if (!r) return;
        const t0 = performance.now();
        const res = await connection.send(r);
        latencies.push(performance.now() - t0);
        if (res.status !== o.expect) failed[res.status] = (failed[res.status] ?? 0) + 1;
        o.onAnswer?.(i, res.status, res.body);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const c of connections) c.close();
  return summarize(latencies, seconds, failed);
}

/** req/s and quantiles of answers gathered over `seconds` (one drive, or several slices merged). */
export function summarize(latencies: number[], seconds: number, failed: Record<number, number>): LoadResult {
  latencies.sort((a, b) => a - b);
  const q = (p: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))]! : NaN);
  return { requests: latencies.length, seconds, rps: latencies.length / seconds, p50: q(0.5), p99: q(0.99), latencies, failed };
}
