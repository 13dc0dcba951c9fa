import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { ConfigError } from './load-config.ts';
import type { Config } from './schema.ts';
import { dialectOf, sqlitePath } from '../db/orm.ts';

/**
 * The master key: from config/env, or on the embedded SQLite default generated once into the data
 * folder (0600). PostgreSQL deployments must set one explicitly.
 */
export function resolveMasterKey(config: Config, log: Logger): string {
  if (config.security.masterKey) return config.security.masterKey;
  const url = config.database.url;
  if (dialectOf(url) === 'postgresql') {
    throw new ConfigError(
      'config error: security.masterKey: required with PostgreSQL — set CHAINGATE_MASTER_KEY (e.g. `openssl rand -hex 32`)',
    );
  }
  const dbPath = sqlitePath(url);
  if (dbPath === ':memory:') return 'in-memory-database-ephemeral-master-key!';
  const file = join(dirname(dbPath), 'master.key');
  if (existsSync(file)) {
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077) log.warn({ file, mode: mode.toString(8) }, 'master key file is readable by others; chmod 600 it');
    const key = readFileSync(file, 'utf8').trim();
    if (key.length < 32) throw new ConfigError(`config error: ${file}: master key file is shorter than 32 characters`);
    return key;
  }
  const key = randomBytes(32).toString('hex');
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  log.warn({ file }, 'generated a new master key for the embedded database; back it up with the database file');
  return key;
}
