import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MikroORM } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import type { EntityManager } from '@mikro-orm/sql';
import { CompiledQuery } from 'kysely';
import { ENTITIES } from './entities/all.ts';
import { EsmMigrationGenerator } from './esm-migration-generator.ts';
import { nativeSqlite } from './native-sqlite.ts';
import type { Executor } from './executor.ts';
import { retryOnLockConflict } from './lock-retry.ts';
import { pgTransaction, type PgPool } from './pg-transaction.ts';
import { SqliteWriter } from './sqlite-writer.ts';
import { cachePrepared } from './statement-cache.ts';
import { dialectOf, redactUrl, sqlitePath, type Dialect } from '../config/database-url.ts';

export interface Database {
  orm: MikroORM;
  dialect: Dialect;
  /** Display form of the URL (no password). */
  url: string;
  em(): EntityManager;
  /**
   * The store's one way to write: `fn` in one transaction (SQLite: committed in groups on a
   * connection of its own, src/store/sqlite-writer.ts; PostgreSQL: on a pooled connection), run again
   * from the start while it loses a lock, for at most LOCK_WAIT_MS, then DATABASE_BUSY.
   */
  write<T>(fn: (x: Executor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

const MIGRATIONS_ROOT = fileURLToPath(new URL('../../migrations/', import.meta.url));

export function migrationsPath(dialect: Dialect): string {
  return resolve(MIGRATIONS_ROOT, dialect);
}

/** How long a PostgreSQL statement waits for a lock another session holds (lock_timeout). */
export const PG_LOCK_TIMEOUT_MS = 5_000;

/** Prepared SQLite statements kept per connection (least recently used dropped first). */
const STATEMENT_CACHE_SIZE = 100;
/**
 * SQLite's page cache per connection, in KiB (negative: a size, not a page count). SQLite's own
 * default; better-sqlite3 builds with 16 MB, which a daemon filled within minutes and kept
 * (docs/performance.md#memory). The operating system's page cache still holds the file.
 */
const PAGE_CACHE_KIB = 2000;

/**
 * Every SQLite connection: WAL so the daemon and the indexers read while one writes; synchronous
 * FULL so a commit is on disk before it is answered (in WAL mode NORMAL defers the fsync to the next
 * checkpoint, and a power cut could roll back acknowledged writes); SQLite checkpoints on its own
 * (wal_autocheckpoint, its default of 1,000 pages). Writers queue on busy_timeout, except the
 * daemon's, which never sleeps on a lock (neverSleepOnLocks). Savepoint journals (one per write of a
 * group commit) stay in memory rather than in a temporary file each.
 */
const SQLITE_PRAGMAS = ['journal_mode = wal', 'synchronous = full', 'busy_timeout = 10000', `cache_size = -${PAGE_CACHE_KIB}`, 'temp_store = memory'];

/**
 * The daemon's SQLite connection never sleeps on another process's lock (busy_timeout 0): a
 * sleeping better-sqlite3 call would hold its event loop (and /healthz) for the whole wait; its
 * writes wait between attempts instead (src/store/transaction.ts).
 */
export async function neverSleepOnLocks(db: Database): Promise<void> {
  if (db.dialect !== 'sqlite') return;
  (await nativeSqlite(db.orm.em as unknown as EntityManager)).prepare('pragma busy_timeout = 0').get();
}

/**
 * Kysely prepares every SQLite statement anew; better-sqlite3 statements are reusable (and the API
 * is synchronous, so one is never run twice at once), so keep the recently used ones by SQL text
 * (src/store/statement-cache.ts). MikroORM inlines parameters, so its statements rarely repeat; the
 * hand-written hot paths bind theirs and stay.
 */
async function cachePreparedStatements(orm: MikroORM): Promise<void> {
  type Native = { prepare(sql: string): unknown };
  const native = (await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<Native> }).getNativeClient()) as Native;
  const cached = cachePrepared(native.prepare.bind(native), STATEMENT_CACHE_SIZE);
  native.prepare = cached;
}

/**
 * Opens MikroORM for a `sqlite:` or `postgres://` URL. Nothing is migrated here. A PostgreSQL
 * database that does not exist is created only with `createDatabase` (`migrate --create`):
 * MikroORM would otherwise create it on connecting, and a mistyped URL would start an empty gateway.
 */
export async function openDatabase(url: string, options: { debug?: boolean; poolMax?: number; createDatabase?: boolean } = {}): Promise<Database> {
  const dialect = dialectOf(url);
  const common = {
    entities: ENTITIES,
    extensions: [Migrator],
    debug: options.debug ?? false,
    allowGlobalContext: false,
    // The shared rate-limit counters have no entity (migrations/postgresql/…_rate_limits.js, raw
    // SQL in src/store/rate-limit-counters.ts): the schema diff must not drop them.
    schemaGenerator: { skipTables: ['rate_limit_log', 'rate_limit_window'] },
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
  let writeOnce: <T>(fn: (x: Executor) => Promise<T>) => Promise<T>;
  let closeWriter = async (): Promise<void> => {};
  if (dialect === 'sqlite') {
    const path = sqlitePath(url);
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const { MikroORM: SqliteORM } = await import('@mikro-orm/sqlite');
    // SQLite creates its WAL and SHM with the database file's permissions: created private, all three are.
    const umask = process.umask(0o077);
    try {
      orm = await SqliteORM.init({
        ...common,
        dbName: path,
        onCreateConnection: async (connection: unknown) => {
          const conn = connection as { executeQuery(q: CompiledQuery): Promise<unknown> };
          for (const pragma of SQLITE_PRAGMAS) await conn.executeQuery(CompiledQuery.raw(`pragma ${pragma}`));
        },
      });
      await cachePreparedStatements(orm);
      // The native handle is known from the start, so readRow never waits for it; this also
      // opens the connection, and so creates the files, while the umask holds.
      const native = await nativeSqlite(orm.em as unknown as EntityManager);
      let writer: SqliteWriter | undefined;
      const writerOf = () =>
        (writer ??= path === ':memory:' ? new SqliteWriter(native as unknown as ConstructorParameters<typeof SqliteWriter>[0], false) : SqliteWriter.open(path, SQLITE_PRAGMAS));
      writeOnce = (fn) => writerOf().write(fn);
      closeWriter = async () => writer?.close();
    } finally {
      process.umask(umask);
    }
  } else {
    const { MikroORM: PgORM } = await import('@mikro-orm/postgresql');
    orm = await PgORM.init({
      ...common,
      clientUrl: url,
      pool: { min: 0, max: options.poolMax ?? 10 },
      ensureDatabase: options.createDatabase === true,
      // Every pooled connection (MikroORM's and the raw statements') gives up on a lock after this,
      // so another session's LOCK TABLE makes a write a retried 55P03 (then DATABASE_BUSY), not a hang.
      driverOptions: { options: `-c lock_timeout=${PG_LOCK_TIMEOUT_MS}` },
    });
    const pg = orm;
    let pool: PgPool | undefined;
    writeOnce = async (fn) => {
      pool ??= await (pg.em.getConnection() as unknown as { getNativeClient(): Promise<PgPool> }).getNativeClient();
      return pgTransaction(pool, fn);
    };
  }
  return {
    orm,
    dialect,
    url: redactUrl(url),
    em: () => orm.em.fork() as unknown as EntityManager,
    write: (fn) => retryOnLockConflict(() => writeOnce(fn)),
    close: async () => {
      await closeWriter();
      await orm.close(true);
    },
  };
}
