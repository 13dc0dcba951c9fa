import type { FastifyRequest } from 'fastify';
import { sendTestEvent } from '../../app/dashboard-points.ts';
import { redeliverFromDashboard, webhookLogFor } from '../../app/dashboard-webhooks.ts';
import { GatewayError } from '../../domain/errors.ts';
import { isIdShaped } from '../validation.ts';
import { bodyOf, client, field, isJson, redirect, sendPage, type DashboardKit } from './kit.ts';
import { webhooksPage } from './pages-webhooks.ts';

// A point's webhooks: the delivery log, Redeliver, and the test event (docs/dashboard.md#webhooks).

export function webhookRoutes(kit: DashboardKit): void {
  const { deps, routes, layout, principalOf, acting } = kit;
  const common = deps.common;

  const pointId = (req: FastifyRequest): string => {
    const { id } = req.params as { id: string };
    if (!isIdShaped(id)) throw new GatewayError('NOT_FOUND', 'No such merchant point');
    return id;
  };
  const query = (req: FastifyRequest) => {
    const q = req.query as { before?: unknown; event?: unknown; redelivered?: unknown };
    const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
    return { cursor: text(q.before), eventId: text(q.event), redelivered: text(q.redelivered) };
  };

  routes.add('GET', '/points/:id/webhooks', async (req, reply) => {
    const p = await principalOf(req);
    const q = query(req);
    const log = await webhookLogFor(common, p, pointId(req), q);
    if (isJson(req)) return reply.send({ data: log });
    const redelivered = q.redelivered && isIdShaped(q.redelivered) ? q.redelivered : null;
    return sendPage(reply, 200, webhooksPage(layout(`Webhooks of ${log.point.name}`, p, p.csrfToken), log, { redelivered, olderPage: q.cursor !== undefined }));
  });

  routes.add('POST', '/api/points/:id/webhooks/redeliver', async (req, reply) => {
    const p = await acting(req);
    const id = pointId(req);
    const replayed = await redeliverFromDashboard(common, p, id, field(bodyOf(req), 'delivery'), client(req));
    if (isJson(req)) return reply.code(201).send({ data: replayed });
    return redirect(reply, `/dashboard/points/${id}/webhooks?event=${replayed.eventId}&redelivered=${replayed.deliveryId}`);
  });

  routes.add('POST', '/api/points/:id/webhooks/test-event', async (req, reply) => {
    const p = await acting(req);
    const id = pointId(req);
    const test = await sendTestEvent(common, p, id, client(req));
    if (isJson(req)) return reply.send({ data: test });
    const log = await webhookLogFor(common, p, id, {});
    return sendPage(reply, 200, webhooksPage(layout(`Webhooks of ${log.point.name}`, p, p.csrfToken), log, { test }));
  });
}
