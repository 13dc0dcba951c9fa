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

/** Newest first; `pointIds` limits to rows of those points (and rows of no point when `withoutPoint`). */
export async function listAudit(db: Database, options: { limit: number; pointIds?: readonly string[] | null }): Promise<AuditRecord[]> {
  const rows = await poolReader(db).all<AuditRow>('select id, user_id, actor, action, point_id, ip, user_agent, details, created_at from audit_entry order by created_at desc, id desc limit ?', [
    options.pointIds ? options.limit * 4 : options.limit,
  ]);
  const allowed = options.pointIds ? new Set(options.pointIds) : null;
  return rows
    .filter((r) => !allowed || (r.point_id !== null && allowed.has(r.point_id)))
    .slice(0, options.limit)
    .map((r) => ({
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
