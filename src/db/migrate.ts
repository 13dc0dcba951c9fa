import type { Database } from './orm.ts';

export interface MigrationStatus {
  executed: string[];
  pending: string[];
}

export async function migrationStatus(db: Database): Promise<MigrationStatus> {
  const migrator = db.orm.migrator;
  // Sequential: each call may create the migrations table on first use.
  const executed = await migrator.getExecuted();
  const pending = await migrator.getPending();
  return { executed: executed.map((m) => m.name), pending: pending.map((m) => m.name) };
}

/** Applies every pending migration in one transaction; returns the names applied. */
export async function migrate(db: Database): Promise<string[]> {
  const applied = await db.orm.migrator.up();
  return applied.map((m) => m.name);
}
