import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config/schema.ts';

const ALLOW_HEADERS = 'Accept, Content-Type, Authorization';
const EXPOSE_HEADERS = 'Retry-After, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';
const MAX_AGE = '600';

/**
 * CORS for the buyer API (docs/checkout.md): reads (GET, HEAD) from any origin; writes (POST) only from the payment
 * page's origin and `server.checkoutAllowedOrigins` (without a page URL, the daemon's own origin).
 * Preflights are answered in the hook, before rate limits and routes: 204 with the allowed methods
 * and headers, or 400 when Origin or Access-Control-Request-Method is missing. Every answer varies
 * by Origin and exposes the headers a page needs (Retry-After, X-Request-Id, the rate-limit ones).
 *
 * Hand-written instead of @fastify/cors, which rebuilt its options for every request: a fifth of
 * the CPU of a status poll (docs/performance.md). The headers are the ones it sent.
 *
 * Returns the step for the scope's onRequest hook (one hook a request): it sets the headers and
 * returns true when it answered the request itself (a preflight).
 */
export function checkoutCors(app: FastifyInstance, config: Config): (req: FastifyRequest, reply: FastifyReply) => boolean {
  const pageOrigin = config.server.checkoutPageUrl ? new URL(config.server.checkoutPageUrl).origin : null;
  const writeOrigins = new Set(config.server.checkoutAllowedOrigins.map((o) => (o === '*' ? o : o.replace(/\/+$/, ''))));
  if (pageOrigin) writeOrigins.add(pageOrigin);
  const anyWriter = writeOrigins.has('*');

  /** The Access-Control-Allow-Origin of a write, or null: the origin is not allowed to write. */
  const writeOrigin = (req: FastifyRequest, origin: string | undefined): string | null => {
    if (anyWriter) return '*';
    if (origin === undefined) return null;
    if (writeOrigins.has(origin)) return origin;
    return !pageOrigin && origin === `${req.protocol}://${req.host}` ? origin : null;
  };

  const step = (req: FastifyRequest, reply: FastifyReply): boolean => {
    const origin = req.headers.origin;
    const preflight = req.method === 'OPTIONS';
    const requested = preflight ? String(req.headers['access-control-request-method'] ?? '').toUpperCase() : req.method;
    const read = requested === 'GET' || requested === 'HEAD';
    const allowOrigin = read ? '*' : writeOrigin(req, origin);
    reply.header('Vary', 'Origin');
    if (allowOrigin) reply.header('Access-Control-Allow-Origin', allowOrigin);
    reply.header('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    if (!preflight) return false;
    if (!origin || !req.headers['access-control-request-method']) {
      reply.code(400).type('text/plain').send('Invalid Preflight Request');
      return true;
    }
    reply
      .header('Access-Control-Allow-Methods', read ? 'GET, HEAD' : 'POST')
      .header('Access-Control-Allow-Headers', ALLOW_HEADERS)
      .header('Access-Control-Max-Age', MAX_AGE)
      .code(204)
      .header('Content-Length', '0')
      .send();
    return true;
  };
  // A route for every preflight, so it reaches the hook (which answers it) rather than a 404.
  app.route({ method: 'OPTIONS', url: '*', config: { preflight: true }, handler: (_req, reply) => reply.callNotFound() });
  return step;
}
