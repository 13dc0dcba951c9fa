import { readdirSync } from 'node:fs';
import { migrationsPath, type Database } from './orm.ts';

export interface MigrationStatus {
  executed: string[];
  pending: string[];
}

/** MikroORM's bookkeeping table of executed migrations. */
const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/**
 * Executed and pending migrations. Reads only: on a database no migration has touched (no
 * bookkeeping table yet) every migration file is pending, and nothing is created — the migrator
 * would create its table (and, on PostgreSQL, the database) on first use.
 */
export async function migrationStatus(db: Database): Promise<MigrationStatus> {
  if (!(await hasMigrationsTable(db))) {
    const pending = readdirSync(migrationsPath(db.dialect)).filter((f) => f.endsWith('.js')).map((f) => f.slice(0, -'.js'.length)).sort();
    return { executed: [], pending };
  }
  const migrator = db.orm.migrator;
  const executed = await migrator.getExecuted();
  const pending = await migrator.getPending();
  return { executed: executed.map((m) => m.name), pending: pending.map((m) => m.name) };
}

async function hasMigrationsTable(db: Database): Promise<boolean> {
  const sql =
    db.dialect === 'sqlite'
      ? `select count(*) as n from sqlite_master where type = 'table' and name = '${MIGRATIONS_TABLE}'`
      : `select count(*) as n from pg_catalog.pg_tables where tablename = '${MIGRATIONS_TABLE}' and schemaname = any (current_schemas(false))`;
  const rows = await db.em().execute<{ n: number | string }[]>(sql);
  return Number(rows[0]?.n ?? 0) > 0;
}

/** Applies every pending migration in one transaction; returns the names applied. */
export async function migrate(db: Database): Promise<string[]> {
  const applied = await db.orm.migrator.up();
  return applied.map((m) => m.name);
}
