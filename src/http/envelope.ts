import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorDetail } from '../domain/errors.ts';

/** `{success: true, data, timestamp, requestId}` (spec "Errors" envelope). */
export function sendData(req: FastifyRequest, reply: FastifyReply, data: unknown, status = 200): FastifyReply {
  return reply.code(status).send({ success: true, data, timestamp: new Date().toISOString(), requestId: req.id });
}

export function errorBody(requestId: string, code: string, message: string, details?: ErrorDetail[]) {
  return {
    success: false as const,
    error: details?.length ? { code, message, details } : { code, message },
    timestamp: new Date().toISOString(),
    requestId,
  };
}
