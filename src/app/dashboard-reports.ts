import type { Common } from '../common.ts';
import { can, DashboardError, roleOn } from '../domain/dashboard-roles.ts';
import { GatewayError } from '../domain/errors.ts';
import { exportReport, type ReportFile } from '../report/report.ts';
import { insertAudit } from '../store/audit-log.ts';
import { listMerchants } from '../store/merchants.ts';
import type { DashboardPrincipal } from './dashboard-session.ts';
import type { Client } from './dashboard-tokens.ts';

// The accountant's export from the browser (docs/dashboard.md#reports): the same use case as
// `chaingate report` (src/report/report.ts exportReport), for one point or for every point, by a
// role that may export (accountant, manager, owner). A viewer is refused here, not only by the page.

/** What the user may export: the points (by name), and whether "every point" is theirs to export. */
export interface ReportChoices {
  points: { id: string; name: string }[];
  everyPoint: boolean;
}

/** Every point the user may export, or a 403 for a user who may export none (a viewer). */
export async function reportChoices(common: Pick<Common, 'db'>, principal: DashboardPrincipal): Promise<ReportChoices> {
  const merchants = await listMerchants(common.db);
  const points = merchants.filter((m) => {
    const role = roleOn(principal.grants, m.id);
    return role !== null && can(role, 'export');
  });
  // "Every point" holds the rows of points not yet made too: only for an export grant on `*` that no point's grant narrows.
  const star = roleOn(principal.grants.filter((g) => g.pointId === '*'), '*');
  const everyPoint = star !== null && can(star, 'export') && points.length === merchants.length;
  if (points.length === 0 && !everyPoint) throw new DashboardError('FORBIDDEN', 403, 'Your role does not allow exports (accountants, managers and owners export)');
  return { points: points.map((m) => ({ id: m.id, name: m.name })), everyPoint };
}

export interface ReportDownload extends ReportFile {
  /** `chaingate-report-<from>-<to>[-<point>].<csv|json>`: a name that needs no quoting. */
  filename: string;
  contentType: string;
}

/**
 * The report file for `pointId` (empty: every point), checked against the user's roles; the export
 * is written to the audit log (who took which range of which point's money records).
 */
export async function downloadReport(
  common: Pick<Common, 'db'>,
  principal: DashboardPrincipal,
  input: { from: string; to: string; format: string; pointId: string },
  client: Client,
): Promise<ReportDownload> {
  const choices = await reportChoices(common, principal);
  const pointId = input.pointId.trim();
  if (pointId === '') {
    if (!choices.everyPoint) throw new DashboardError('FORBIDDEN', 403, 'Choose a point: your role does not cover every point');
  } else if (!choices.points.some((p) => p.id === pointId)) {
    const role = roleOn(principal.grants, pointId);
    if (role === null || !(await listMerchants(common.db)).some((m) => m.id === pointId)) throw new GatewayError('NOT_FOUND', 'No such merchant point');
    throw new DashboardError('FORBIDDEN', 403, `A ${role} may not export`);
  }
  const file = await exportReport(common, { from: input.from, to: input.to, format: input.format, merchantId: pointId || null }, { from: 'from', to: 'to', format: 'format' });
  await common.db.write((x) =>
    insertAudit(x, {
      userId: principal.userId,
      actor: principal.email,
      ...client,
      action: 'report.export',
      pointId: pointId || null,
      details: { from: file.from.toISOString(), to: file.to.toISOString(), format: file.format, rows: file.rows },
    }),
  );
  const day = (d: Date) => d.toISOString().slice(0, 10);
  // `to` is exclusive: the file is named after the last day it covers.
  const lastDay = new Date(file.to.getTime() - 1);
  return {
    ...file,
    filename: `chaingate-report-${day(file.from)}-${day(lastDay)}${pointId ? `-${pointId}` : ''}.${file.format}`,
    contentType: file.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
  };
}
