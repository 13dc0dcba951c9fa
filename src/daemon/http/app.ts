import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type HTTPMethods, type RouteHandlerMethod } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import type { Logger } from '../../logger.ts';
import { errorBody } from './envelope.ts';

export interface AppOptions {
  log: Logger;
  bodyLimit: number;
  trustProxy: boolean;
}

const METHODS: HTTPMethods[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/**
 * The Fastify instance both surfaces hang off: request ids, raw JSON bodies (kept as bytes for HMAC
 * checks and parsed by the routes), and the one place where errors become HTTP responses.
 */
export function createHttpApp(options: AppOptions): FastifyInstance {
  const app: FastifyInstance = Fastify({
    loggerInstance: options.log.child({ component: 'http' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit,
    trustProxy: options.trustProxy,
    requestIdHeader: false,
    genReqId: () => `req_${randomBytes(12).toString('hex')}`,
    // While closing, new requests get an enveloped 503 from the onRequest hook below instead.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Malformed URLs and the like never reach the error handler; give them the envelope too.
    frameworkErrors: (err, req, reply) => {
      void (reply as unknown as FastifyReply).code(400).header('X-Request-Id', req.id).send(errorBody(req.id, 'VALIDATION_ERROR', `Malformed request: ${err.message}`));
    },
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Request-Id', req.id);
    if (closing) {
      return reply.code(503).header('Connection', 'close').header('Retry-After', '5').send(errorBody(req.id, 'SERVICE_UNAVAILABLE', 'The server is shutting down; retry shortly'));
    }
  });
  app.addHook('onResponse', async (req, reply) => {
    req.log.info({ method: req.method, url: req.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  app.setErrorHandler((err: FastifyError | GatewayError, req, reply) => {
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

function mapFastifyError(err: FastifyError): { status: number; code: string; message: string } | null {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { status: 413, code: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json' };
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { status: 400, code: 'VALIDATION_ERROR', message: err.message };
  }
  if (err.statusCode === 429) return { status: 429, code: 'RATE_LIMITED', message: err.message };
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
    return { status: err.statusCode, code: 'VALIDATION_ERROR', message: err.message };
  }
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
        handler: async (req, reply) =>
          reply.code(405).header('Allow', allow).send(errorBody(req.id, 'METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allow}`)),
      });
    }
  }
}
