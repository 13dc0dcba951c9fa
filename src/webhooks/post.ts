import type { Agent } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { http } from '../node-http.ts';
import { assertConnectedAddressAllowed, guardedLookup, normalizeHost, refuseLiteralHost, type Resolver, SsrfError } from './ssrf-guard.ts';

// One webhook HTTP attempt with node:http/https rather than fetch, for exact control of the DNS
// lookup (SSRF guard), the connected address, redirects (never followed) and one overall deadline.

export interface PostInput {
  url: string;
  headers: Record<string, string>;
  /** Sent byte for byte; the signature covers exactly these bytes. */
  body: Buffer;
  /** Deadline for the whole attempt: connect, response and body. */
  timeoutMs: number;
  /** Bytes of the response body kept. */
  responseBodyLimit: number;
  allowPrivateNetworks: boolean;
  /** Tests: a fake DNS. */
  resolver?: Resolver;
  /** Tests: an agent to observe connection attempts. Default: a fresh connection per attempt. */
  agent?: Agent;
  /** Ends the attempt at once (the sender is stopping): the result says `aborted`. */
  signal?: AbortSignal;
}

export interface PostResult {
  /** A 2xx answer: the only outcome that counts as delivered. */
  ok: boolean;
  statusCode: number | null;
  durationMs: number;
  responseBody: string | null;
  error: string | null;
  /** Cut off by `signal` before the receiver answered: not the receiver's failure, nothing to count. */
  aborted?: boolean;
}

function describeError(err: unknown): string {
  if (err instanceof SsrfError) return err.message;
  const e = err as NodeJS.ErrnoException;
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset by the receiver',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'DNS lookup failed temporarily',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    EPIPE: 'connection closed by the receiver',
  };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code && known[code]) return `${known[code]} (${code})`;
  const message = err instanceof Error ? err.message : String(err);
  return code && !message.includes(code) ? `${message} (${code})` : message;
}

export async function postWebhook(input: PostInput): Promise<PostResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const fail = (error: string, statusCode: number | null = null, responseBody: string | null = null): PostResult => ({
    ok: false,
    statusCode,
    durationMs: elapsed(),
    responseBody,
    error,
  });

  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    return fail(`webhook URL ${JSON.stringify(input.url)} is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail(`webhook URL scheme ${url.protocol} is not http(s)`);
  const host = normalizeHost(url.hostname);
  if (!input.allowPrivateNetworks) {
    // An IP literal never goes through `lookup`, so it is judged here, before any socket exists.
    const refused = refuseLiteralHost(host);
    if (refused) return fail(refused.message);
  }

  if (input.signal?.aborted) return { ...fail('aborted: the sender is stopping'), aborted: true };

  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<PostResult>((resolve) => {
    let settled = false;
    let status: number | null = null;
    const finish = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      input.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const req = transport.request({
      method: 'POST',
      host,
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      headers: { ...input.headers, 'Content-Length': String(input.body.length), Connection: 'close' },
      agent: input.agent ?? false,
      lookup: input.allowPrivateNetworks ? undefined : guardedLookup(input.resolver),
    });
    let partialBody = '';
    // A 2xx status that arrived in time is the receiver's answer, even if its body then stalls or breaks.
    const interrupted = (error: string): PostResult =>
      status !== null && status >= 200 && status < 300
        ? { ok: true, statusCode: status, durationMs: elapsed(), responseBody: partialBody, error: null }
        : fail(error, status, status === null ? null : partialBody);
    const timer = setTimeout(() => {
      finish(interrupted(`timed out after ${input.timeoutMs} ms`));
      req.destroy();
    }, input.timeoutMs);
    function onAbort() {
      const result = interrupted('aborted: the sender is stopping');
      finish(result.ok ? result : { ...result, aborted: true });
      req.destroy();
    }
    input.signal?.addEventListener('abort', onAbort, { once: true });

    req.once('socket', (socket: Socket) => {
      const connectedEvent = url.protocol === 'https:' ? 'secureConnect' : 'connect';
      const onConnected = () => {
        if (!input.allowPrivateNetworks) {
          try {
            assertConnectedAddressAllowed(host, socket.remoteAddress);
          } catch (err) {
            req.destroy(err as Error);
            return;
          }
        }
        // Nothing (not even headers) is written before the connected address is checked.
        req.end(input.body);
      };
      if (socket.connecting) socket.once(connectedEvent, onConnected);
      else onConnected();
    });

    req.once('response', (res) => {
      const code = res.statusCode ?? 0;
      status = code;
      const chunks: Buffer[] = [];
      let kept = 0;
      const bodySoFar = () => Buffer.concat(chunks).subarray(0, input.responseBodyLimit).toString('utf8');
      const done = () => {
        const body = bodySoFar();
        const ok = code >= 200 && code < 300;
        let error: string | null = null;
        if (code >= 300 && code < 400) {
          const location = res.headers.location;
          error = `redirect not followed (HTTP ${code}${location ? ` to ${String(location).slice(0, 200)}` : ''})`;
        } else if (!ok) {
          error = `HTTP ${code} is not a 2xx answer`;
        }
        finish({ ok, statusCode: code, durationMs: elapsed(), responseBody: body, error });
        res.destroy();
      };
      res.on('data', (chunk: Buffer) => {
        if (kept < input.responseBodyLimit) {
          chunks.push(chunk);
          kept += chunk.length;
          partialBody = bodySoFar();
        }
        // Enough kept: do not wait for (or download) the rest of a large answer.
        if (kept >= input.responseBodyLimit) done();
      });
      res.once('end', done);
      res.once('error', (err) => finish(interrupted(describeError(err))));
      res.once('aborted', () => finish(interrupted('the receiver aborted the response')));
    });

    req.once('error', (err) => finish(interrupted(describeError(err))));
    req.once('close', () => finish(interrupted('connection closed without a response')));
  });
}
