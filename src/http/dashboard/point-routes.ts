import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  createPointFromDashboard,
  offeredChains,
  pointFor,
  pointsFor,
  rotateSecretFromDashboard,
  sendTestEvent,
  setPointActiveFromDashboard,
  updatePointFromDashboard,
  type TestEventResult,
} from '../../app/dashboard-points.ts';
import type { DashboardPrincipal } from '../../app/dashboard-session.ts';
import { GatewayError } from '../../domain/errors.ts';
import { isIdShaped } from '../validation.ts';
import { bodyOf, client, field, fields, flag, redirect, sendPage, type DashboardKit } from './kit.ts';
import * as pages from './pages.ts';

// Merchant points: list, create, settings, the signing secret, test events.

export function pointRoutes(kit: DashboardKit): void {
  const { deps, routes, layout, principalOf, acting } = kit;
  const common = deps.common;

  const pointId = (req: FastifyRequest): string => {
    const { id } = req.params as { id: string };
    if (!isIdShaped(id)) throw new GatewayError('NOT_FOUND', 'No such merchant point');
    return id;
  };
  const pointPage = async (reply: FastifyReply, p: DashboardPrincipal, id: string, extra: { saved?: boolean; test?: TestEventResult | null }) => {
    const point = await pointFor(common, p, id);
    return sendPage(reply, 200, pages.pointPage(layout(point.name, p, p.csrfToken), point, offeredChains(deps.registry), extra));
  };

  routes.add('GET', '/points', async (req, reply) => {
    const p = await principalOf(req);
    return sendPage(reply, 200, pages.pointsPage(layout('Merchant points', p, p.csrfToken), await pointsFor(common, p), offeredChains(deps.registry)));
  });

  routes.add('POST', '/api/points', async (req, reply) => {
    const p = await acting(req);
    const body = bodyOf(req);
    const { point, apiSecret } = await createPointFromDashboard(common, deps.registry, p, { name: field(body, 'name'), webhookUrl: field(body, 'webhookUrl'), accepted: fields(body, 'accepted') }, client(req));
    return sendPage(reply, 201, pages.secretShownPage(layout('Point created', p, p.csrfToken), point, apiSecret, false));
  });

  routes.add('GET', '/points/:id', async (req, reply) => {
    const p = await principalOf(req);
    return pointPage(reply, p, pointId(req), { saved: (req.query as { saved?: string }).saved === '1' });
  });

  routes.add('POST', '/api/points/:id', async (req, reply) => {
    const p = await acting(req);
    const id = pointId(req);
    const body = bodyOf(req);
    await updatePointFromDashboard(common, deps.registry, p, id, { name: field(body, 'name'), webhookUrl: field(body, 'webhookUrl'), accepted: fields(body, 'accepted') }, client(req));
    return redirect(reply, `/dashboard/points/${id}?saved=1`);
  });

  routes.add('POST', '/api/points/:id/test-event', async (req, reply) => {
    const p = await acting(req);
    const id = pointId(req);
    const test = await sendTestEvent(common, p, id, client(req));
    return pointPage(reply, p, id, { test });
  });

  routes.add('POST', '/api/points/:id/rotate', async (req, reply) => {
    const p = await acting(req);
    const { point, apiSecret } = await rotateSecretFromDashboard(common, p, pointId(req), field(bodyOf(req), 'confirm'), client(req));
    return sendPage(reply, 200, pages.secretShownPage(layout('New API secret', p, p.csrfToken), point, apiSecret, true));
  });

  routes.add('POST', '/api/points/:id/active', async (req, reply) => {
    const p = await acting(req);
    const id = pointId(req);
    await setPointActiveFromDashboard(common, p, id, flag(bodyOf(req), 'active'), client(req));
    return redirect(reply, `/dashboard/points/${id}?saved=1`);
  });
}
