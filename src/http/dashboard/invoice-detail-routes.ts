import type { FastifyRequest } from 'fastify';
import { dashboardOverview } from '../../app/dashboard-overview.ts';
import { invoiceDetail } from '../../app/invoice-timeline.ts';
import { GatewayError } from '../../domain/errors.ts';
import { sendData } from '../envelope.ts';
import { isIdShaped } from '../validation.ts';
import { isJson, sendPage, type DashboardKit } from './kit.ts';
import { invoicePage, overviewPage } from './pages-invoice.ts';

// The overview and the invoice detail with its timeline: pages, and the same as JSON under
// /dashboard/api/ (or any of them with Accept: application/json).

export function invoiceDetailRoutes(kit: DashboardKit): void {
  const { deps, routes, layout, principalOf } = kit;

  const invoiceId = (req: FastifyRequest): string => {
    const { id } = req.params as { id: string };
    // An id that cannot be one cannot exist: the same answer as an invoice of another point.
    if (!isIdShaped(id)) throw new GatewayError('INVOICE_NOT_FOUND', 'Invoice not found');
    return id;
  };

  const overview = async (req: FastifyRequest) => dashboardOverview(deps.common, deps.registry, await principalOf(req));
  routes.add('GET', '/overview', async (req, reply) => {
    const p = await principalOf(req);
    const o = await dashboardOverview(deps.common, deps.registry, p);
    if (isJson(req)) return sendData(req, reply, o);
    return sendPage(reply, 200, overviewPage(layout('Overview', p, p.csrfToken), o));
  });
  routes.add('GET', '/api/overview', async (req, reply) => sendData(req, reply, await overview(req)));

  routes.add('GET', '/invoices/:id', async (req, reply) => {
    const p = await principalOf(req);
    const d = await invoiceDetail(deps, p, invoiceId(req));
    if (isJson(req)) return sendData(req, reply, d);
    return sendPage(reply, 200, invoicePage(layout(`Invoice ${d.invoice.referenceId}`, p, p.csrfToken), d));
  });
  routes.add('GET', '/api/invoices/:id', async (req, reply) => {
    const p = await principalOf(req);
    return sendData(req, reply, await invoiceDetail(deps, p, invoiceId(req)));
  });
}
