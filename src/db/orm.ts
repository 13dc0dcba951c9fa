import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MikroORM } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import type { EntityManager } from '@mikro-orm/sql';
import { CompiledQuery } from 'kysely';
import { ENTITIES } from './entities/all.ts';
import { EsmMigrationGenerator } from './esm-migration-generator.ts';

export type Dialect = 'sqlite' | 'postgresql';

export interface Database {
  orm: MikroORM;
  dialect: Dialect;
  /** Display form of the URL (no password). */
  url: string;
  em(): EntityManager;
  close(): Promise<void>;
}

const MIGRATIONS_ROOT = fileURLToPath(new URL('../../migrations/', import.meta.url));

export function dialectOf(url: string): Dialect {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgresql';
  throw new Error(`unsupported database URL ${redactUrl(url)} (use sqlite:<path> or postgres://…)`);
}

export function sqlitePath(url: string): string {
  const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  return path === ':memory:' ? path : resolve(path);
}

export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

export function migrationsPath(dialect: Dialect): string {
  return resolve(MIGRATIONS_ROOT, dialect);
}

/**
 * Kysely prepares every SQLite statement anew; better-sqlite3 statements are reusable (and the API
 * is synchronous, so one is never run twice at once), so keep the most recent ones by SQL text.
 */
async function cachePreparedStatements(orm: MikroORM): Promise<void> {
  type Native = { prepare(sql: string): unknown };
  const native = (await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<Native> }).getNativeClient()) as Native;
  const prepare = native.prepare.bind(native);
  const cache = new Map<string, unknown>();
  native.prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (stmt === undefined) {
      stmt = prepare(sql);
      if (cache.size >= 500) cache.delete(cache.keys().next().value!);
      cache.set(sql, stmt);
    }
    return stmt;
  };
}

/** Opens MikroORM for a `sqlite:` or `postgres://` URL. Nothing is migrated here. */
export async function openDatabase(url: string, options: { debug?: boolean; poolMax?: number } = {}): Promise<Database> {
  const dialect = dialectOf(url);
  const common = {
    entities: ENTITIES,
    extensions: [Migrator],
    debug: options.debug ?? false,
    allowGlobalContext: false,
    migrations: {
      path: migrationsPath(dialect),
      glob: '*.js',
      emit: 'js' as const,
      generator: EsmMigrationGenerator,
      snapshot: false,
      snapshotOnMigrate: false,
      transactional: true,
      allOrNothing: true,
      silent: true,
    },
  };
  let orm: MikroORM;
  if (dialect === 'sqlite') {
    const path = sqlitePath(url);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const { MikroORM: SqliteORM } = await import('@mikro-orm/sqlite');
    orm = await SqliteORM.init({
      ...common,
      dbName: path,
      // WAL lets the daemon and the indexers read while one writes; busy_timeout makes writers queue.
      onCreateConnection: async (connection: unknown) => {
        const conn = connection as { executeQuery(q: CompiledQuery): Promise<unknown> };
        await conn.executeQuery(CompiledQuery.raw('pragma journal_mode = wal'));
        await conn.executeQuery(CompiledQuery.raw('pragma busy_timeout = 10000'));
        await conn.executeQuery(CompiledQuery.raw('pragma synchronous = normal'));
      },
    });
    await cachePreparedStatements(orm);
  } else {
    const { MikroORM: PgORM } = await import('@mikro-orm/postgresql');
    orm = await PgORM.init({ ...common, clientUrl: url, pool: { min: 0, max: options.poolMax ?? 10 } });
  }
  return {
    orm,
    dialect,
    url: redactUrl(url),
    em: () => orm.em.fork() as unknown as EntityManager,
    close: () => orm.close(true),
  };
}
