import { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { exportInvoicesCsv, invoiceChangesForDashboard, invoiceListForDashboard, pageJson, rowJson } from '../../app/dashboard-invoices.ts';
import { offeredChains } from '../../app/dashboard-points.ts';
import { GatewayError } from '../../domain/errors.ts';
import { parseInvoiceQuery } from '../../domain/invoice-list.ts';
import { htmlText } from './html.ts';
import { client, isJson, sendPage, type DashboardKit } from './kit.ts';
import { invoiceListPage, invoiceRow } from './pages-invoices.ts';

// Invoices and payments: the list page, its JSON, the live poll and the CSV export
// (docs/dashboard.md#invoices-and-payments).

function queryOf(req: FastifyRequest): Record<string, unknown> {
  const q = req.query;
  return q && typeof q === 'object' ? { ...(q as Record<string, unknown>) } : {};
}

export function invoiceListRoutes(kit: DashboardKit): void {
  const { deps, routes, layout, principalOf } = kit;
  const common = deps.common;

  routes.add('GET', '/invoices', async (req, reply) => {
    const p = await principalOf(req);
    const query = parseInvoiceQuery(queryOf(req));
    const list = await invoiceListForDashboard(common, p, query);
    if (isJson(req)) return reply.send(pageJson(list));
    const chains = offeredChains(deps.registry).map((c) => ({ slug: c.slug, name: c.name }));
    return sendPage(reply, 200, invoiceListPage(layout('Invoices and payments', p, p.csrfToken), { query, page: list.page, points: list.points, chains, canExport: list.canExport, cursor: String(Date.now()) }));
  });

  // The list for scripts: always JSON, the page's parameters.
  routes.add('GET', '/api/invoices', async (req, reply) => {
    const p = await principalOf(req);
    return reply.send(pageJson(await invoiceListForDashboard(common, p, parseInvoiceQuery(queryOf(req)))));
  });

  // The live list's poll: `since` is the cursor of the page or of the previous poll.
  routes.add('GET', '/api/invoices/changes', async (req, reply) => {
    const p = await principalOf(req);
    const raw = queryOf(req);
    const since = raw.since;
    delete raw.since;
    if (since !== undefined && typeof since !== 'string') throw new GatewayError('VALIDATION_ERROR', 'since must be given once');
    const filter = parseInvoiceQuery(raw);
    const changes = await invoiceChangesForDashboard(common, p, filter, since ?? null);
    const names = new Map(changes.points.map((pt) => [pt.id, pt.name]));
    const withColumn = changes.points.length > 1 && filter.point === null;
    return reply.send({
      cursor: changes.cursor,
      rows: changes.rows.map((r) => ({ ...rowJson(r, names.get(r.pointId) ?? null), matches: r.matches, html: htmlText(invoiceRow(r, names.get(r.pointId) ?? null, withColumn)) })),
    });
  });

  // The filtered list as CSV, streamed a batch at a time (never held whole).
  routes.add('GET', '/api/invoices.csv', async (req, reply) => {
    const p = await principalOf(req);
    const query = parseInvoiceQuery(queryOf(req), { allowPaging: false });
    const chunks = await exportInvoicesCsv(common, p, query, query.sort, client(req));
    const day = new Date().toISOString().slice(0, 10);
    return reply
      .header('Content-Type', 'text/csv; charset=utf-8')
      .header('Content-Disposition', `attachment; filename="invoices-${day}.csv"`)
      .send(Readable.from(chunks));
  });
}
