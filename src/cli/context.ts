import type { Logger } from 'pino';
import { loadConfig } from '../config/load-config.ts';
import { resolveMasterKey } from '../config/master-key.ts';
import type { Config } from '../config/schema.ts';
import { MerchantPoint } from '../db/entities/merchant-point.entity.ts';
import { migrate, migrationStatus } from '../db/migrate.ts';
import { openDatabase, type Database } from '../db/orm.ts';
import { UsageError } from '../domain/errors.ts';
import { createSecretBox, type SecretBox } from '../domain/secret-box.ts';
import { createLogger } from '../logger.ts';

/** The small bag every command and the daemon share (no DI container). */
export interface Common {
  config: Config;
  log: Logger;
  db: Database;
  box: SecretBox;
  close(): Promise<void>;
}

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
  const log = createLogger(config.log.level, options.logBindings);
  const box = createSecretBox(options.needsSecrets === false ? 'unused-master-key-for-migrations-only' : resolveMasterKey(config, log));
  const db = await openDatabase(config.database.url);
  try {
    if (!options.skipMigrationCheck) await ensureMigrated(db, log);
    if (!options.skipMigrationCheck && options.needsSecrets !== false) await verifyMasterKey(db, box);
  } catch (err) {
    await db.close();
    throw err;
  }
  return { config, log, db, box, close: () => db.close() };
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

async function verifyMasterKey(db: Database, box: SecretBox): Promise<void> {
  const [sample] = await db.em().find(MerchantPoint, {}, { orderBy: { createdAt: 'desc' }, limit: 1 });
  if (sample) box.open(sample.apiSecretEnc, sample.id);
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
