import { downloadReport, reportChoices } from '../../app/dashboard-reports.ts';
import { UsageError } from '../../domain/errors.ts';
import { bodyOf, client, field, isJson, sendPage, type DashboardKit } from './kit.ts';
import { reportsPage, type ReportForm } from './pages-reports.ts';

// Reports: the accountant's export as a download (docs/dashboard.md#reports).

export function reportRoutes(kit: DashboardKit): void {
  const { deps, routes, layout, principalOf, acting } = kit;
  const common = deps.common;

  routes.add('GET', '/reports', async (req, reply) => {
    const p = await principalOf(req);
    const choices = await reportChoices(common, p);
    const today = new Date().toISOString().slice(0, 10);
    const values: ReportForm = { from: `${today.slice(0, 8)}01`, to: today, format: 'csv', pointId: choices.everyPoint ? '' : (choices.points[0]?.id ?? '') };
    return sendPage(reply, 200, reportsPage(layout('Reports', p, p.csrfToken), choices, values, null));
  });

  routes.add('POST', '/api/reports', async (req, reply) => {
    const p = await acting(req);
    const body = bodyOf(req);
    const values: ReportForm = { from: field(body, 'from'), to: field(body, 'to'), format: field(body, 'format') || 'csv', pointId: field(body, 'point') };
    try {
      const file = await downloadReport(common, p, { from: values.from, to: values.to, format: values.format, pointId: values.pointId }, client(req));
      return reply
        .code(200)
        .header('Content-Type', file.contentType)
        .header('Content-Disposition', `attachment; filename="${file.filename}"`)
        .header('X-Report-Rows', String(file.rows))
        .send(file.text);
    } catch (err) {
      // A browser's form gets the form back with the reason; a JSON caller the coded error.
      if (!(err instanceof UsageError) || isJson(req)) throw err;
      return sendPage(reply, 400, reportsPage(layout('Reports', p, p.csrfToken), await reportChoices(common, p), values, err.message.charAt(0).toUpperCase() + err.message.slice(1)));
    }
  });
}
