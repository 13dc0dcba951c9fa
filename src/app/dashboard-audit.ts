import type { Common } from '../common.ts';
import { ALL_POINTS, DashboardError, isAdmin } from '../domain/dashboard-roles.ts';
import { listAudit, type AuditRecord } from '../store/audit-log.ts';
import type { DashboardPrincipal } from './dashboard-session.ts';

export type AuditRow = AuditRecord;

/** The operator's view (`chaingate audit list`): every row, newest first. */
export function auditForOperator(common: Common, limit: number): Promise<AuditRecord[]> {
  return listAudit(common.db, { limit });
}

/** An owner of every point sees every row; an owner of some points, the rows of those points. */
export async function auditForDashboard(common: Common, principal: DashboardPrincipal, limit = 200): Promise<AuditRecord[]> {
  if (isAdmin(principal.grants)) return listAudit(common.db, { limit });
  const owned = principal.grants.filter((g) => g.role === 'owner' && g.pointId !== ALL_POINTS).map((g) => g.pointId);
  if (owned.length === 0) throw new DashboardError('FORBIDDEN', 403, 'Only owners see the audit log');
  return listAudit(common.db, { limit, pointIds: owned });
}
