import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

// Every storage test runs on SQLite and on PostgreSQL, each with a database of its own.
// PostgreSQL comes from CHAINGATE_TEST_DATABASE_URL (default: the local server). When it is
// unreachable the PostgreSQL cases are skipped locally, but fail under CI=true.

export type DialectName = 'sqlite' | 'postgresql';

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

const PG_BASE = process.env.CHAINGATE_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

let pgReachable: Promise<string | null> | undefined;

/** null when PostgreSQL answers, or why not. A busy machine gets three tries of 10 s each. */
function postgresProblem(): Promise<string | null> {
  pgReachable ??= (async () => {
    let last = '';
    for (let attempt = 0; attempt < 3; attempt++) {
      const client = new pg.Client({ connectionString: PG_BASE, connectionTimeoutMillis: 10_000 });
      try {
        await client.connect();
        await client.end();
        return null;
      } catch (err) {
        last = (err as Error).message;
        await client.end().catch(() => {});
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    return last || 'no answer';
  })();
  return pgReachable;
}

/** `false` to run, or a skip reason; throws under CI when PostgreSQL is missing. */
export async function skipUnless(dialect: DialectName): Promise<false | string> {
  if (dialect === 'sqlite') return false;
  const problem = await postgresProblem();
  if (problem === null) return false;
  if (process.env.CI === 'true') throw new Error(`PostgreSQL at ${PG_BASE} is unreachable (${problem}) and CI=true: PostgreSQL tests must run in CI`);
  return `PostgreSQL at ${PG_BASE} is unreachable (${problem})`;
}

/** Runs one statement on the server's maintenance connection (create and drop database). */
async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: PG_BASE });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

function pgUrl(name: string): string {
  const url = new URL(PG_BASE);
  url.pathname = `/${name}`;
  return url.toString();
}

let migratedTemplate: Promise<string> | undefined;

/**
 * A PostgreSQL database migrated once per test process, never connected to again: tests that need a
 * migrated database get a copy of it (`create database … template`), which costs a fraction of
 * running every migration again. Dropped when the process is done.
 */
function pgMigratedTemplate(): Promise<string> {
  migratedTemplate ??= (async () => {
    const { openDatabase } = await import('../../src/store/orm.ts');
    const { migrate } = await import('../../src/store/migrate.ts');
    const name = `chaingate_tpl_${randomBytes(6).toString('hex')}`;
    await admin(`create database ${name}`);
    let dropped = false;
    process.on('beforeExit', () => {
      if (dropped) return;
      dropped = true;
      void admin(`drop database if exists ${name} with (force)`).catch(() => undefined);
    });
    const db = await openDatabase(pgUrl(name));
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    return name;
  })();
  return migratedTemplate;
}

/**
 * A database of its own. `migrated: true` is for tests that only need the schema in place (it is the
 * same schema `migrate` makes: on PostgreSQL a copy of a database migrated once per process).
 */
export async function createTestDatabase(dialect: DialectName, options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'chaingate-test-'));
    const url = `sqlite:${join(dir, 'test.db')}`;
    if (options.migrated) {
      const { openDatabase } = await import('../../src/store/orm.ts');
      const { migrate } = await import('../../src/store/migrate.ts');
      const db = await openDatabase(url);
      await migrate(db);
      await db.close();
    }
    return { url, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const name = `chaingate_t_${randomBytes(6).toString('hex')}`;
  await admin(options.migrated ? `create database ${name} template ${await pgMigratedTemplate()}` : `create database ${name}`);
  return { url: pgUrl(name), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

export const DIALECTS: DialectName[] = ['sqlite', 'postgresql'];

/** A migrated database of the dialect, opened, and dropped again by t.after. */
export async function openMigratedTestDatabase(t: { after(fn: () => Promise<void>): void }, dialect: DialectName) {
  const { openDatabase } = await import('../../src/store/orm.ts');
  const { migrate } = await import('../../src/store/migrate.ts');
  const tdb = await createTestDatabase(dialect, { migrated: dialect === 'postgresql' });
  const db = await openDatabase(tdb.url);
  t.after(async () => {
    await db.close();
    await tdb.drop();
  });
  await migrate(db);
  return db;
}
