import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { ConfigError } from './load-config.ts';
import type { Config } from './schema.ts';
import { dialectOf, sqlitePath } from './database-url.ts';

/** A master key and where it came from, for messages that must say which key was used. */
export interface MasterKey {
  key: string;
  /** e.g. "environment variable CHAINGATE_MASTER_KEY", "/srv/data/master.key". */
  source: string;
}

/** Where the embedded SQLite database keeps its generated master key: beside the database file. */
export function masterKeyFile(config: Config): string | null {
  const url = config.database.url;
  if (dialectOf(url) !== 'sqlite') return null;
  const dbPath = sqlitePath(url);
  return dbPath === ':memory:' ? null : join(dirname(dbPath), 'master.key');
}

/**
 * The configured master key (`configuredFrom` names where security.masterKey was set), or on the
 * embedded SQLite database the key file beside it; null when neither exists. PostgreSQL deployments
 * must set one explicitly.
 */
export function findMasterKey(config: Config, log: Logger, configuredFrom = 'security.masterKey'): MasterKey | null {
  if (config.security.masterKey) return { key: config.security.masterKey, source: configuredFrom };
  const url = config.database.url;
  if (dialectOf(url) === 'postgresql') {
    throw new ConfigError(
      'config error: security.masterKey: required with PostgreSQL — set CHAINGATE_MASTER_KEY (e.g. `openssl rand -hex 32`)',
    );
  }
  const file = masterKeyFile(config);
  if (file === null) return { key: 'in-memory-database-ephemeral-master-key!', source: 'the in-memory database' };
  if (!existsSync(file)) return null;
  const mode = statSync(file).mode & 0o777;
  if (mode & 0o077) log.warn({ file, mode: mode.toString(8) }, 'master key file is readable by others; chmod 600 it');
  const key = readFileSync(file, 'utf8').trim();
  if (key.length < 32) throw new ConfigError(`config error: ${file}: master key file is shorter than 32 characters`);
  return { key, source: file };
}

/** A new master key for the embedded database, written once into the data folder (0600). */
export function generateMasterKey(config: Config, log: Logger): MasterKey {
  const file = masterKeyFile(config);
  if (file === null) throw new ConfigError('config error: security.masterKey: required — set CHAINGATE_MASTER_KEY (e.g. `openssl rand -hex 32`)');
  const key = randomBytes(32).toString('hex');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  log.warn({ file }, 'generated a new master key for the embedded database; back it up with the database file');
  return { key, source: `${file} (generated now)` };
}
