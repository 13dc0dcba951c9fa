// Generates the next migration for both dialects from the same entities:
//   npm run migrations:create -- [name]
// Each dialect gets a scratch database with the existing migrations applied; the diff against the
// entities becomes the new migration file. Needs CHAINGATE_TEST_DATABASE_URL (or a local PostgreSQL).
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { migrate } from '../src/store/migrate.ts';
import { openDatabase } from '../src/store/orm.ts';

const name = process.argv[2];
const sqliteFile = join(tmpdir(), `chaingate-migration-${process.pid}.db`);
const pgBase = process.env.CHAINGATE_TEST_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const scratch = `chaingate_migration_${process.pid}`;

async function createFor(url: string): Promise<void> {
  const db = await openDatabase(url);
  try {
    await migrate(db);
    const result = await db.orm.migrator.create(undefined, false, false, name);
    console.log(result.fileName ? `${db.dialect}: wrote ${result.fileName}` : `${db.dialect}: schema is up to date`);
  } finally {
    await db.close();
  }
}

const admin = new pg.Client({ connectionString: pgBase });
await admin.connect();
await admin.query(`create database ${scratch}`);
try {
  await createFor(`sqlite:${sqliteFile}`);
  const url = new URL(pgBase);
  url.pathname = `/${scratch}`;
  await createFor(url.toString());
} finally {
  await admin.query(`drop database if exists ${scratch}`);
  await admin.end();
  rmSync(sqliteFile, { force: true });
  rmSync(`${sqliteFile}-wal`, { force: true });
  rmSync(`${sqliteFile}-shm`, { force: true });
}
