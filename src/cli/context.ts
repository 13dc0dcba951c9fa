import type { Logger } from 'pino';
import { loadConfig } from '../config/load-config.ts';
import { resolveMasterKey } from '../config/master-key.ts';
import type { Config } from '../config/schema.ts';
import type { Common } from '../common.ts';
import { MerchantPoint } from '../db/entities/merchant-point.entity.ts';
import { migrate, migrationStatus } from '../db/migrate.ts';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { dialectOf, openDatabase, sqlitePath, type Database } from '../db/orm.ts';
import { UsageError } from '../domain/errors.ts';
import { createSecretBox, SecretBoxError, type SecretBox } from '../domain/secret-box.ts';
import { createLogger } from '../logger.ts';


export interface OpenOptions {
  /** `migrate` itself opens the database without the pending-migrations check. */
  skipMigrationCheck?: boolean;
  /** Commands that never read secrets need no master key (e.g. `migrate`). */
  needsSecrets?: boolean;
  logBindings?: Record<string, unknown>;
  /** Tests and embedders: config layers instead of the process environment. */
  env?: NodeJS.ProcessEnv;
  overrides?: Record<string, unknown>;
}

/**
 * Loads config, opens the database and checks its schema. The embedded SQLite database is migrated
 * automatically; PostgreSQL must be migrated explicitly with `chaingate migrate` (docs/operations.md).
 */
export async function openCommon(options: OpenOptions = {}): Promise<Common> {
  const { config } = loadConfig({ env: options.env, overrides: options.overrides });
  assertSqliteDirectory(config.database.url);
  const log = createLogger(config.log.level, options.logBindings);
  const box = createSecretBox(options.needsSecrets === false ? 'unused-master-key-for-migrations-only' : resolveMasterKey(config, log));
  const db = await openDatabase(config.database.url);
  try {
    if (!options.skipMigrationCheck) await ensureMigrated(db, log);
    if (!options.skipMigrationCheck && options.needsSecrets !== false) await verifyMasterKey(db, box, log);
  } catch (err) {
    await db.close();
    throw err;
  }
  return { config, log, db, box, close: () => db.close() };
}

/**
 * A sqlite: URL in a directory that does not exist is refused: a mistyped path would otherwise start
 * a fresh, empty database without a word. The project's own ./data folder (the default) is created.
 */
function assertSqliteDirectory(url: string): void {
  if (dialectOf(url) !== 'sqlite') return;
  const path = sqlitePath(url);
  if (path === ':memory:') return;
  const dir = resolve(dirname(path));
  if (existsSync(dir) || dir === resolve('data')) return;
  throw new UsageError(`database.url ${url}: the directory ${dir} does not exist; create it first (a mistyped path would otherwise start a fresh, empty database)`);
}

/** A wrong master key is caught at start-up, not at the first signed request. */
/** Opens the common bag for one command and always closes it. */
export async function withCommon<T>(fn: (common: Common) => Promise<T>, options: OpenOptions = {}): Promise<T> {
  const common = await openCommon(options);
  try {
    return await fn(common);
  } finally {
    await common.close();
  }
}

/**
 * A wrong master key is refused at start-up: the stored secrets name the key they were sealed
 * under. A secret that names this key but does not decrypt is one merchant's tampered or corrupted
 * ciphertext, not a wrong key: the daemon starts anyway, logs it, and that point's requests get a
 * coded error until its secret is rotated.
 */
async function verifyMasterKey(db: Database, box: SecretBox, log: Logger): Promise<void> {
  const sample = await db.em().find(MerchantPoint, {}, { orderBy: { createdAt: 'desc' }, limit: 5 });
  for (const m of sample) {
    try {
      box.open(m.apiSecretEnc, m.id);
      return;
    } catch (err) {
      if (err instanceof SecretBoxError && /another master key/.test(err.message)) throw err;
      log.error({ merchantId: m.id, err: (err as Error).message }, "a merchant point's stored API secret cannot be decrypted; rotate it with `chaingate secrets rotate`");
    }
  }
}

async function ensureMigrated(db: Database, log: Logger): Promise<void> {
  const { pending } = await migrationStatus(db);
  if (pending.length === 0) return;
  if (db.dialect === 'sqlite') {
    const applied = await migrate(db);
    log.info({ applied }, 'migrated the embedded SQLite database');
    return;
  }
  throw new UsageError(
    `database ${db.url} is not migrated (${pending.length} pending migration${pending.length === 1 ? '' : 's'}): run \`chaingate migrate\` first`,
  );
}
