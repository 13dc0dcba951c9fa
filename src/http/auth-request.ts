import type { FastifyRequest } from 'fastify';
import type { AuthRequest } from '../domain/principal.ts';
import { rawBody } from './validation.ts';

/** The request as authentication (src/app/authenticate.ts) reads it: method, path, headers, exact body bytes. */
export function authRequestOf(req: FastifyRequest): AuthRequest {
  return {
    method: req.method,
    path: req.url.split('?')[0]!,
    header(name) {
      const v = req.headers[name];
      const s = Array.isArray(v) ? v[0] : v;
      return s === undefined || s === '' ? undefined : s;
    },
    body: rawBody(req),
    log: req.log,
  };
}
