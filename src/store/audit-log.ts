import { newId } from '../domain/ids.ts';
import type { Executor } from './executor.ts';
import type { Database } from './orm.ts';
import { dateOf, jsonOf, poolReader } from './raw-sql.ts';

// The dashboard's audit log: one row per action that changed something, written in the same
// transaction as the change it records (docs/dashboard.md#audit-log). Details never hold a secret.

export interface AuditInput {
  userId: string | null;
  actor: string;
  action: string;
  pointId?: string | null;
  ip?: string | null;
  userAgent?: string | null;
  details?: Record<string, unknown> | null;
}

export interface AuditRecord {
  id: string;
  at: string;
  userId: string | null;
  actor: string;
  action: string;
  pointId: string | null;
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown> | null;
}

export async function insertAudit(x: Executor, entry: AuditInput): Promise<void> {
  await x.run('insert into audit_entry (id, user_id, actor, action, point_id, ip, user_agent, details, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
    newId(),
    entry.userId,
    entry.actor.slice(0, 320),
    entry.action,
    entry.pointId ?? null,
    entry.ip?.slice(0, 64) ?? null,
    entry.userAgent?.slice(0, 512) ?? null,
    entry.details ? JSON.stringify(entry.details) : null,
    new Date(),
  ]);
}

/** An audit row on its own (a failed sign-in, which changes nothing else). */
export function recordAudit(db: Database, entry: AuditInput): Promise<void> {
  return db.write((x) => insertAudit(x, entry));
}

interface AuditRow {
  id: string;
  user_id: string | null;
  actor: string;
  action: string;
  point_id: string | null;
  ip: string | null;
  user_agent: string | null;
  details: unknown;
  created_at: unknown;
}

/** Newest first; `pointIds` keeps only the rows of those points. */
export async function listAudit(db: Database, options: { limit: number; pointIds?: readonly string[] | null }): Promise<AuditRecord[]> {
  const ids = options.pointIds ?? null;
  if (ids && ids.length === 0) return [];
  const where = ids ? `where point_id in (${ids.map(() => '?').join(', ')}) ` : '';
  const rows = await poolReader(db).all<AuditRow>(`select id, user_id, actor, action, point_id, ip, user_agent, details, created_at from audit_entry ${where}order by created_at desc, id desc limit ?`, [
    ...(ids ?? []),
    options.limit,
  ]);
  return rows.map((r) => ({
    id: r.id,
    at: dateOf(r.created_at).toISOString(),
    userId: r.user_id,
    actor: r.actor,
    action: r.action,
    pointId: r.point_id,
    ip: r.ip,
    userAgent: r.user_agent,
    details: jsonOf<Record<string, unknown>>(r.details),
  }));
}
