import type { Logger } from 'pino';
import { endpointUrls, loadConfig } from '../config/load-config.ts';
import { findMasterKey, generateMasterKey, masterKeyFile, type MasterKey } from '../config/master-key.ts';
import type { Config } from '../config/schema.ts';
import type { Common } from '../common.ts';
import { migrate, migrationStatus } from '../store/migrate.ts';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { dialectOf, redactUrl, sqlitePath } from '../config/database-url.ts';
import { openDatabase, type Database } from '../store/orm.ts';
import { newestSealedSecrets } from '../store/sealed-secrets.ts';
import { UsageError } from '../domain/errors.ts';
import { createSecretBox, type SecretBox } from '../domain/secret-box.ts';
import { createLogger } from '../logger.ts';


export interface OpenOptions {
  /** `migrate` itself opens the database without the pending-migrations check. */
  skipMigrationCheck?: boolean;
  /** Commands that never read secrets need no master key (e.g. `migrate`). */
  needsSecrets?: boolean;
  /**
   * Commands that only read (status, the lists, `migrate --status`): a missing SQLite database or an
   * unmigrated one is refused with one line instead of being created or migrated, and a master key
   * is never generated.
   */
  readOnly?: boolean;
  /** `migrate --create`: a PostgreSQL database that does not exist is created instead of refused. */
  createDatabase?: boolean;
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
  const env = options.env ?? process.env;
  const { config, file } = loadConfig({ env: options.env, overrides: options.overrides });
  const urlFrom = env.CHAINGATE_DATABASE_URL ? 'CHAINGATE_DATABASE_URL' : file ? `database.url in ${file}` : 'the default database.url';
  assertSqliteDirectory(config.database.url);
  if (options.readOnly) assertSqliteFile(config.database.url, urlFrom);
  const log = createLogger(config.log.level, options.logBindings, config.log.format, endpointUrls(config));
  const keyFrom = env.CHAINGATE_MASTER_KEY ? 'environment variable CHAINGATE_MASTER_KEY' : file ? `security.masterKey in ${file}` : 'security.masterKey';
  // Before the database opens, so a PostgreSQL deployment without a key stops at once.
  let masterKey = options.needsSecrets === false ? null : findMasterKey(config, log, keyFrom);
  const db = await openDatabase(config.database.url, { createDatabase: options.createDatabase }).catch((err: unknown) => {
    throw unreachablePostgres(err, config.database.url, urlFrom) ?? err;
  });
  let box: SecretBox;
  try {
    if (db.dialect === 'postgresql') await assertPostgresDatabase(db, urlFrom, options.createDatabase === true);
    if (!options.skipMigrationCheck) await ensureMigrated(db, log, options.readOnly === true);
    if (options.needsSecrets === false) {
      box = createSecretBox('unused-master-key-for-migrations-only');
    } else {
      masterKey ??= await missingMasterKey(db, config, log, options.readOnly === true, !options.skipMigrationCheck);
      box = createSecretBox(masterKey.key);
      if (!options.skipMigrationCheck) await verifyMasterKey(db, box, log, masterKey.source);
    }
  } catch (err) {
    await db.close();
    throw err;
  }
  return { config, log, db, box, close: () => db.close() };
}

/**
 * No master key is configured and the embedded database has no key file. Secrets already stored
 * were sealed under a key this process does not have: a new one could never open them, so that is
 * refused. Otherwise a command that writes generates the key (the first run); one that only reads
 * needs none, since there is nothing to open, and leaves the folder as it found it.
 */
async function missingMasterKey(db: Database, config: Config, log: Logger, readOnly: boolean, migrated: boolean): Promise<MasterKey> {
  const [sealed] = migrated ? await newestSealedSecrets(db, 1) : [];
  if (sealed) {
    throw new UsageError(
      `no master key: CHAINGATE_MASTER_KEY is not set and ${masterKeyFile(config)} does not exist, but ${db.url} holds API secrets sealed under key id ${sealed.apiSecretEnc.split('.')[1]}: set CHAINGATE_MASTER_KEY to the key this database was created with`,
    );
  }
  if (readOnly) return { key: randomBytes(32).toString('hex'), source: 'none (nothing stored needs one)' };
  return generateMasterKey(config, log);
}

/** A command that only reads never creates the SQLite file (opening it would). */
function assertSqliteFile(url: string, from: string): void {
  if (dialectOf(url) !== 'sqlite') return;
  const path = sqlitePath(url);
  if (path === ':memory:' || existsSync(path)) return;
  throw new UsageError(`no database at ${path} (${url}, from ${from}); this command only reads and creates none: point CHAINGATE_DATABASE_URL at the gateway's database, or create one with \`chaingate migrate\``);
}

/**
 * A PostgreSQL that does not answer is refused with its URL; a database that does not exist is
 * refused before anything (MikroORM's migrator would create it), so a mistyped URL never starts an
 * empty gateway. Only `migrate --create` creates one.
 */
async function assertPostgresDatabase(db: Database, from: string, create: boolean): Promise<void> {
  try {
    await db.em().execute('select 1');
  } catch (err) {
    const unreachable = unreachablePostgres(err, db.url, from);
    if (unreachable) throw unreachable;
    // 3D000: invalid_catalog_name, "database … does not exist" (`migrate --create` makes it).
    if ((err as { code?: string }).code !== '3D000') throw err;
    if (create) return;
    const name = new URL(db.url).pathname.slice(1);
    throw new UsageError(`database ${JSON.stringify(name)} does not exist (${db.url}, from ${from}): create it, or run \`chaingate migrate --create\``);
  }
}

// Socket errors that mean nothing answers at the URL's host and port, and PostgreSQL's refusals of
// the URL's user (28P01: wrong password, 28000: no such role or no pg_hba.conf line).
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);
const REFUSED_LOGIN = new Set(['28P01', '28000']);

/**
 * A PostgreSQL that does not answer at start-up is a setting or a service to fix, not a crash:
 * exit 2 (which systemd does not restart in a loop) with the URL, password hidden, and a hint.
 */
function unreachablePostgres(err: unknown, url: string, from: string): UsageError | null {
  if (dialectOf(url) !== 'postgresql' || !(err instanceof Error)) return null;
  const code = (err as { code?: string }).code ?? '';
  // A host with several addresses (localhost: ::1 and 127.0.0.1) fails with an AggregateError whose message is empty.
  const reason = err.message || (err instanceof AggregateError ? err.errors.map((e: Error) => e.message).join('; ') : code);
  const shown = redactUrl(url);
  if (UNREACHABLE.has(code)) {
    return new UsageError(`cannot connect to PostgreSQL at ${shown} (from ${from}): ${reason}; is PostgreSQL running? (pg_ctlcluster <version> main start, or systemctl start postgresql) and are the host and port right?`);
  }
  if (REFUSED_LOGIN.has(code)) return new UsageError(`PostgreSQL at ${shown} (from ${from}) refused the login: ${reason}; check the user and password in the URL`);
  return null;
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
async function verifyMasterKey(db: Database, box: SecretBox, log: Logger, source: string): Promise<void> {
  const sample = await newestSealedSecrets(db, 5);
  for (const m of sample) {
    // The stored form names its key: v1.<key id>.<ciphertext>.
    const storedKeyId = m.apiSecretEnc.split('.')[1];
    if (storedKeyId && storedKeyId !== box.keyId) {
      throw new UsageError(
        `stored secrets were encrypted under another master key (key id ${storedKeyId}; the key from ${source} has id ${box.keyId}): set the master key this database was created with`,
      );
    }
    try {
      box.open(m.apiSecretEnc, m.merchantId);
      return;
    } catch (err) {
      log.error({ merchantId: m.merchantId, err: (err as Error).message }, "a merchant point's stored API secret cannot be decrypted; rotate it with `chaingate secrets rotate`");
    }
  }
}

async function ensureMigrated(db: Database, log: Logger, readOnly: boolean): Promise<void> {
  const { pending } = await migrationStatus(db);
  if (pending.length === 0) return;
  if (db.dialect === 'sqlite' && !readOnly) {
    const applied = await migrate(db);
    log.info({ applied }, 'migrated the embedded SQLite database');
    return;
  }
  throw new UsageError(
    `database ${db.url} is not migrated (${pending.length} pending migration${pending.length === 1 ? '' : 's'}): run \`chaingate migrate\` first${readOnly ? ' (this command only reads and migrates nothing)' : ''}`,
  );
}
