import { createServer, request as httpRequest, type Server } from 'node:http';
import { listenLocal } from './local-server.ts';

export type Fault = '429' | '500' | 'timeout' | 'garbage' | 'null' | 'reset';

export interface RpcProxyOptions {
  target: string;
  latencyMs?: number;
  /** Share of requests that get a fault (0..1); deterministic with the seed. */
  faultRate?: number;
  faults?: Fault[];
  /** How long a 'timeout' fault holds the request before dropping it. */
  hangMs?: number;
  seed?: number;
  /** Refuse eth_getLogs spanning more blocks than this, as hosted providers do. */
  maxLogRange?: number;
  /** Methods answered as geth answers a disabled method (-32601 "… does not exist/is not available"). */
  refuseMethods?: string[];
  /** Answers a call with this JSON-RPC error object instead of forwarding it (e.g. geth's -32000 "finalized block not found"). */
  errorFor?: (method: string, params: unknown[]) => { code: number; message: string } | undefined;
  /** Replaces a result before it is sent back (return undefined to keep it): wrong shapes, forks. */
  rewrite?: (method: string, params: unknown[], result: unknown) => unknown;
}

export interface RpcProxy {
  url: string;
  stats: { requests: number; faults: Record<string, number>; methods: Record<string, number> };
  setFaultRate(rate: number): void;
  setLatency(ms: number): void;
  setRefused(methods: string[]): void;
  close(): Promise<void>;
}

/** A JSON-RPC proxy on 127.0.0.1 that adds latency and injects 429s, 5xx, hangs, garbage and null results. */
export async function startRpcProxy(options: RpcProxyOptions): Promise<RpcProxy> {
  let seed = options.seed ?? 42;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  let faultRate = options.faultRate ?? 0;
  let latencyMs = options.latencyMs ?? 0;
  const faults = options.faults ?? ['429', '500', 'timeout', 'garbage', 'null', 'reset'];
  const stats = { requests: 0, faults: {} as Record<string, number>, methods: {} as Record<string, number> };
  let refused = new Set(options.refuseMethods ?? []);
  const target = new URL(options.target);

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      stats.requests++;
      const body = Buffer.concat(chunks);
      let call: { id?: unknown; method?: string; params?: unknown[] } = {};
      try {
        call = JSON.parse(body.toString()) as typeof call;
      } catch {
        /* not JSON: passed through as is */
      }
      if (call.method) stats.methods[call.method] = (stats.methods[call.method] ?? 0) + 1;
      const go = () => {
        if (call.method && refused.has(call.method)) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32601, message: `the method ${call.method} does not exist/is not available` } }),
          );
          return;
        }
        const error = call.method ? options.errorFor?.(call.method, call.params ?? []) : undefined;
        if (error) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, error }));
          return;
        }
        if (options.maxLogRange) {
          try {
            const call = JSON.parse(body.toString()) as { id?: unknown; method?: string; params?: { fromBlock?: string; toBlock?: string }[] };
            const f = call.params?.[0];
            if (call.method === 'eth_getLogs' && f?.fromBlock && f.toBlock && BigInt(f.toBlock) - BigInt(f.fromBlock) + 1n > BigInt(options.maxLogRange)) {
              stats.faults.range = (stats.faults.range ?? 0) + 1;
              res.writeHead(200, { 'content-type': 'application/json' }).end(
                JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32005, message: `block range is too large, max ${options.maxLogRange} blocks` } }),
              );
              return;
            }
          } catch {
            /* not JSON: let it through */
          }
        }
        if (random() < faultRate) {
          const fault = faults[Math.floor(random() * faults.length)]!;
          stats.faults[fault] = (stats.faults[fault] ?? 0) + 1;
          switch (fault) {
            case '429':
              res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' }).end('{"jsonrpc":"2.0","id":1,"error":{"code":429,"message":"Too Many Requests"}}');
              return;
            case '500':
              res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>');
              return;
            case 'timeout':
              setTimeout(() => res.destroy(), options.hangMs ?? 5000);
              return;
            case 'garbage':
              res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":');
              return;
            case 'reset':
              req.socket.destroy();
              return;
            case 'null': {
              let id: unknown = 1;
              try {
                id = (JSON.parse(body.toString()) as { id?: unknown }).id;
              } catch {
                /* keep 1 */
              }
              res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: null }));
              return;
            }
          }
        }
        const upstream = httpRequest(
          { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } },
          (up) => {
            if (!options.rewrite || !call.method) {
              res.writeHead(up.statusCode ?? 502, { 'content-type': up.headers['content-type'] ?? 'application/json' });
              up.pipe(res);
              return;
            }
            const parts: Buffer[] = [];
            up.on('data', (c: Buffer) => parts.push(c));
            up.on('end', () => {
              const answer = JSON.parse(Buffer.concat(parts).toString()) as { result?: unknown };
              const replaced = 'result' in answer ? options.rewrite!(call.method!, call.params ?? [], answer.result) : undefined;
              if (replaced !== undefined) answer.result = replaced;
              res.writeHead(up.statusCode ?? 502, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
            });
          },
        );
        upstream.on('error', () => res.destroy());
        upstream.end(body);
      };
      if (latencyMs) setTimeout(go, latencyMs);
      else go();
    });
  });
  const local = await listenLocal(server);
  return {
    url: `${local.url}/`,
    stats,
    setFaultRate: (rate) => {
      faultRate = rate;
    },
    setLatency: (ms) => {
      latencyMs = ms;
    },
    setRefused: (methods) => {
      refused = new Set(methods);
    },
    close: local.close,
  };
}
