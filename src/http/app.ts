import { randomBytes } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type HTTPMethods, type RouteHandlerMethod } from 'fastify';
import { databaseBusy, ERROR_STATUS, GatewayError, isLockConflict, type ErrorCode } from '../domain/errors.ts';
import type { Logger } from '../logger.ts';
import { http } from '../node-http.ts';
import { errorBody } from './envelope.ts';
import { requestLoggerFactory } from './request-logger.ts';
import { unsupportedCharset } from './validation.ts';

declare module 'fastify' {
  interface FastifyInstance {
    registeredRoutes: { method: string; url: string }[];
  }
}

export interface AppOptions {
  log: Logger;
  bodyLimit: number;
  trustProxy: boolean;
  requestTimeoutMs?: number;
  headersTimeoutMs?: number;
  /** Idle keep-alive connections are closed after this (Node's own default is 5 s). */
  keepAliveTimeoutMs?: number;
  /** Told of every answered request (the metrics): its route ('unmatched' when none), method, status and seconds. */
  observeRequest?: (route: string, method: string, status: number, seconds: number) => void;
}

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
/** Levels at which the per-request info line is written (the line is not even built otherwise). */
const INFO_ENABLED = new Set(['trace', 'debug', 'info']);

// Request ids from a pooled CSPRNG buffer: one randomBytes call per 512 ids instead of one per
// request (it was 4 % of serve's CPU under load, docs/performance.md). Same 96 random bits an id.
let idPool = Buffer.alloc(0);
let idOffset = 0;
function requestId(): string {
  if (idOffset + 12 > idPool.length) {
    idPool = randomBytes(12 * 512);
    idOffset = 0;
  }
  const id = `req_${idPool.toString('hex', idOffset, idOffset + 12)}`;
  idOffset += 12;
  return id;
}

/**
 * Fastify calls its log controller for every request whose answer finished (or whose connection
 * failed): the one per-request callback it makes anyway. The metrics and the per-request line are
 * taken there rather than in onResponse hooks, which cost each request a hook runner on top.
 * Fastify's own request lines stay off.
 */
class AnswerObserver extends LogController {
  constructor(
    private readonly observe: AppOptions['observeRequest'],
    private readonly writeLine: boolean,
  ) {
    super({ disableRequestLogging: true });
  }

  override incomingRequest(): void {}

  override requestCompleted(_error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const ms = reply.elapsedTime;
    if (this.observe) this.observe(req.is404 ? 'unmatched' : req.routeOptions.url!, req.method, reply.statusCode, ms / 1000);
    if (this.writeLine) req.log.info({ method: req.method, url: req.url.split('?')[0], status: reply.statusCode, ms: Math.round(ms) }, 'request');
  }
}

/** How long an idle keep-alive connection stays open once the server closes, for a request already on its way. */
export const IDLE_LINGER_MS = 1000;

/**
 * Node's HTTP server, whose close() ends every keep-alive connection without a reset:
 * - an answer still being written is the last on its connection (`Connection: close`);
 * - an idle connection is not destroyed at once: its client may have sent the next request already
 *   (a client reuses a connection as soon as its answer arrives, and under load Node reads the bytes
 *   late), and closing a socket with unread bytes makes the kernel answer with a TCP reset. It gets
 *   `idleLingerMs` for such a request, which the app answers 503 with `Connection: close`; then it
 *   is half-closed (FIN), so its client sends nothing more on it, and it closes when the client
 *   does. What is still open at the shutdown's grace is cut off (closeAllConnections).
 */
class DrainingServer extends http.Server {
  /** The latest response of each open connection (finished or not). */
  private readonly latest = new Map<Socket, ServerResponse>();
  private readonly sockets = new Set<Socket>();
  private readonly lingering = new WeakSet<Socket>();
  private draining = false;

  constructor(
    options: ServerOptions,
    handler: RequestListener,
    private readonly idleLingerMs = IDLE_LINGER_MS,
  ) {
    super(options);
    this.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => {
        this.latest.delete(socket);
        this.sockets.delete(socket);
      });
    });
    this.on('request', (req, res) => {
      this.latest.set(req.socket, res);
      if (this.draining) res.setHeader('Connection', 'close');
      handler(req, res);
    });
    // An Expect other than 100-continue: Node would answer a bare 417; the app answers it (transportRefusal).
    this.on('checkExpectation', (req, res) => this.emit('request', req, res));
  }

  override close(callback?: (err?: Error) => void): this {
    this.draining = true;
    for (const [socket, res] of this.latest) {
      if (res.writableFinished) continue;
      if (!res.headersSent) res.setHeader('Connection', 'close');
      // Too late to say so: the connection is idle once this answer is written.
      else res.once('finish', () => this.linger(socket));
    }
    // Node's close() calls closeIdleConnections(), which lingers (below) while draining.
    return super.close(callback);
  }

  override closeIdleConnections(): void {
    if (!this.draining) {
      super.closeIdleConnections();
      return;
    }
    for (const socket of this.sockets) if (!this.busy(socket)) this.linger(socket);
  }

  private busy(socket: Socket): boolean {
    const res = this.latest.get(socket);
    return res !== undefined && !res.writableFinished;
  }

  private linger(socket: Socket): void {
    if (this.lingering.has(socket)) return;
    this.lingering.add(socket);
    const timer = setTimeout(() => {
      // A request that arrived meanwhile ends the connection itself, with its Connection: close answer.
      if (!this.busy(socket) && !socket.destroyed) socket.end();
    }, this.idleLingerMs);
    socket.once('close', () => clearTimeout(timer));
  }
}

/**
 * The Fastify instance both surfaces hang off: request ids, raw JSON bodies (kept as bytes for HMAC
 * checks and parsed by the routes), and the one place where errors become HTTP responses.
 */
export function createHttpApp(options: AppOptions): FastifyInstance {
  const app: FastifyInstance = Fastify({
    // Fastify's own timeout options never reach a server made here, so they are all set here.
    // Node checks request and header timeouts every connectionsCheckingInterval (30 s by default):
    // checked every second, a slow client is cut off close to the configured time.
    serverFactory: (handler) =>
      new DrainingServer(
        {
          connectionsCheckingInterval: 1000,
          requestTimeout: options.requestTimeoutMs ?? 70_000,
          headersTimeout: options.headersTimeoutMs ?? 66_000,
          keepAliveTimeout: options.keepAliveTimeoutMs ?? 65_000,
          // Node would answer a missing Host with a bare 400; the app answers it (transportRefusal).
          requireHostHeader: false,
        },
        handler,
      ),
    loggerInstance: options.log.child({ component: 'http' }) as FastifyBaseLogger,
    // req.log is made on the first line written (most requests write none).
    childLoggerFactory: requestLoggerFactory,
    // The per-request line when the level writes it (the level is set at start and never changed).
    logController: new AnswerObserver(options.observeRequest, INFO_ENABLED.has(options.log.level)),
    bodyLimit: options.bodyLimit,
    trustProxy: options.trustProxy,
    requestIdHeader: false,
    genReqId: requestId,
    // While closing, new requests get an enveloped 503 from the onRequest hook below instead.
    return503OnClosing: false,
    // Idle connections are closed by DrainingServer, without resets; what is left at the grace by serve.
    forceCloseConnections: false,
    // Errors below the HTTP parser (bad header bytes, oversized headers, a timeout) get the envelope too.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket) => {
      if (!socket.writable) return socket.destroy();
      const { code, message } = clientErrorCode(err.code ?? '');
      const status = ERROR_STATUS[code];
      const id = requestId();
      const body = JSON.stringify(errorBody(id, code, message));
      socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${id}\r\nConnection: close\r\n\r\n${body}`);
    },
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Malformed URLs and the like never reach the error handler; give them the envelope too.
    frameworkErrors: (err, req, reply) => {
      void (reply as unknown as FastifyReply).code(400).header('X-Request-Id', req.id).send(errorBody(req.id, 'VALIDATION_ERROR', `Malformed request: ${err.message}`));
    },
  });

  // Every route as registered, for the OpenAPI coverage test (the 405 and CORS preflight handlers are marked and left out).
  const registered: { method: string; url: string }[] = [];
  app.addHook('onRoute', (route) => {
    const config = route.config as { methodNotAllowed?: boolean; preflight?: boolean } | undefined;
    if (config?.methodNotAllowed || config?.preflight) return;
    for (const method of [route.method].flat()) if (method !== 'HEAD') registered.push({ method, url: route.url });
  });
  app.decorate('registeredRoutes', registered);

  app.removeAllContentTypeParsers();
  // Kept as bytes for the signature; parsed by jsonBody. A charset other than UTF-8 is a 415 here, before authentication.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const refused = unsupportedCharset(req.headers['content-type']);
    if (refused) done(refused, undefined);
    else done(null, body);
  });

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback-style hooks on every request: no promise and no extra microtask each (docs/performance.md).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('X-Request-Id', req.id);
    if (closing) {
      // Answered here: done() is not called.
      reply.code(503).header('Connection', 'close').header('Retry-After', '5').send(errorBody(req.id, 'SERVICE_UNAVAILABLE', 'The server is shutting down; retry shortly'));
      return;
    }
    const refused = transportRefusal(req.raw);
    if (refused) {
      // Its body, if any, is never read: the connection closes after the answer.
      reply.code(ERROR_STATUS[refused.code]).header('Connection', 'close').send(errorBody(req.id, refused.code, refused.message));
      return;
    }
    done();
  });

  app.setErrorHandler((err: FastifyError | GatewayError, req, reply) => {
    // A lost lock that escaped the store's retries (a read, a statement outside a transaction).
    if (!(err instanceof GatewayError) && isLockConflict(err)) err = databaseBusy(err);
    if (err instanceof GatewayError) {
      if (err.headers) reply.headers(err.headers);
      return reply.code(err.status).send(errorBody(req.id, err.code, err.message, err.details));
    }
    const mapped = mapFastifyError(err);
    if (mapped) return reply.code(mapped.status).send(errorBody(req.id, mapped.code, mapped.message));
    req.log.error({ err }, 'unhandled error');
    return reply.code(500).send(errorBody(req.id, 'INTERNAL_ERROR', 'Internal error; the request id identifies it in the logs'));
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(errorBody(req.id, 'NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}`));
  });
  return app;
}

/**
 * What HTTP/1.1 itself refuses, with the envelope (Node's own answers have none): a missing Host
 * (HTTP/1.1) or more than one (RFC 9112 §3.2), an expectation other than 100-continue (RFC 9110
 * §10.1.1), and a body in a content coding (gzip, …): bodies are read, hashed for the signature and
 * stored as sent, so only an identity body is taken (415, RFC 9110 §8.4.1), before authentication.
 */
export function transportRefusal(req: IncomingMessage): { code: ErrorCode; message: string } | null {
  let hosts = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) return { code: 'VALIDATION_ERROR', message: 'A request must have one Host header; this one has several' };
  if (hosts === 0 && req.httpVersion === '1.1') return { code: 'VALIDATION_ERROR', message: 'An HTTP/1.1 request must have a Host header' };
  const expect = req.headers.expect;
  if (expect !== undefined && expect.trim().toLowerCase() !== '100-continue') {
    return { code: 'VALIDATION_ERROR', message: `Expect: ${JSON.stringify(expect.slice(0, 64))} cannot be met; only 100-continue is supported` };
  }
  const coding = req.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    return { code: 'UNSUPPORTED_MEDIA_TYPE', message: `Content-Encoding ${JSON.stringify(coding.slice(0, 64))} is not supported; send the body uncompressed` };
  }
  return null;
}

/**
 * Errors below the HTTP parser, answered on the raw socket: each code's status is the fixed one of
 * ERROR_STATUS (431 HEADERS_TOO_LARGE, 408 REQUEST_TIMEOUT, else 400 VALIDATION_ERROR).
 */
export function clientErrorCode(nodeCode: string): { code: ErrorCode; message: string } {
  switch (nodeCode) {
    case 'HPE_HEADER_OVERFLOW':
      return { code: 'HEADERS_TOO_LARGE', message: 'Request headers are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { code: 'REQUEST_TIMEOUT', message: 'The request was not received in time' };
    default:
      return { code: 'VALIDATION_ERROR', message: `Malformed HTTP request (${nodeCode || 'parse error'})` };
  }
}

/** Fastify's own 4xx errors as coded answers; the status is always the code's fixed one. */
function mapFastifyError(err: FastifyError): { status: number; code: ErrorCode; message: string } | null {
  const coded = (code: ErrorCode, message: string) => ({ status: ERROR_STATUS[code], code, message });
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return coded('PAYLOAD_TOO_LARGE', 'Request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return coded('UNSUPPORTED_MEDIA_TYPE', 'Content-Type must be application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return coded('VALIDATION_ERROR', err.message);
  }
  switch (err.statusCode) {
    case 408:
      return coded('REQUEST_TIMEOUT', err.message);
    case 413:
      return coded('PAYLOAD_TOO_LARGE', err.message);
    case 415:
      return coded('UNSUPPORTED_MEDIA_TYPE', err.message);
    case 429:
      return coded('RATE_LIMITED', err.message);
    case 431:
      return coded('HEADERS_TOO_LARGE', err.message);
  }
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return coded('VALIDATION_ERROR', err.message);
  return null;
}

/**
 * Registers a route, and for its path a 405 METHOD_NOT_ALLOWED (with Allow) for the other methods,
 * once all routes are known (call `finishRoutes`).
 */
export class RouteTable {
  private readonly byPath = new Map<string, Set<HTTPMethods>>();

  constructor(private readonly app: FastifyInstance) {}

  add(method: HTTPMethods, url: string, handler: RouteHandlerMethod, config: Record<string, unknown> = {}): void {
    this.app.route({ method, url, handler, config });
    const set = this.byPath.get(url) ?? new Set<HTTPMethods>();
    set.add(method);
    if (method === 'GET') set.add('HEAD');
    this.byPath.set(url, set);
  }

  finish(): void {
    for (const [url, allowed] of this.byPath) {
      const others = METHODS.filter((m) => !allowed.has(m));
      if (others.length === 0) continue;
      const allow = [...allowed].join(', ');
      this.app.route({
        method: others,
        url,
        config: { methodNotAllowed: true },
        handler: async (req, reply) =>
          reply.code(405).header('Allow', allow).send(errorBody(req.id, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allow}`)),
      });
    }
  }
}
