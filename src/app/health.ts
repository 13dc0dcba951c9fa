import type { Database } from '../store/orm.ts';
import { migrationStatus } from '../store/migrate.ts';

export interface Readiness {
  ready: boolean;
  reasons: string[];
}

/** Ready to serve: the database answers and every migration is applied (docs/operations.md#metrics-and-health). */
export async function readiness(db: Database): Promise<Readiness> {
  const reasons: string[] = [];
  try {
    const { pending } = await migrationStatus(db);
    if (pending.length) reasons.push(`${pending.length} migration(s) pending: run \`chaingate migrate\``);
  } catch (err) {
    reasons.push(`database unreachable: ${(err instanceof Error ? err.message : String(err)).slice(0, 200)}`);
  }
  return { ready: reasons.length === 0, reasons };
}
