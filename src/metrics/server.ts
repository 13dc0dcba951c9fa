import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { http } from '../node-http.ts';
import type { Readiness } from '../app/health.ts';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/**
 * GET /metrics (Prometheus text), /healthz (the process answers) and /readyz (`ready()`; 503 with
 * the reasons otherwise) on a listener of their own, apart from the public port.
 */
export async function startMetricsServer(options: { host: string; port: number; registry: Registry; ready?: () => Promise<Readiness> }): Promise<MetricsServer> {
  const server: Server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'GET' && req.method !== 'HEAD') return void json(405, { error: 'GET only' });
    if (path === '/healthz') return void json(200, { status: 'ok' });
    if (path === '/readyz') {
      if (!options.ready) return void json(200, { status: 'ready', reasons: [] });
      options.ready().then(
        (r) => json(r.ready ? 200 : 503, { status: r.ready ? 'ready' : 'not_ready', reasons: r.reasons }),
        (err: unknown) => json(503, { status: 'not_ready', reasons: [String(err)] }),
      );
      return;
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${String(err)}`),
      );
      return;
    }
    json(404, { error: 'not found: /metrics, /healthz, /readyz' });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${addr.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
