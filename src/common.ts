import type { Logger } from 'pino';
import type { Config } from './config/schema.ts';
import type { Database } from './store/orm.ts';
import type { SecretBox } from './domain/secret-box.ts';

/** The small bag every command, the daemon and the indexers share (no DI container). Opened by src/cli/context.ts. */
export interface Common {
  config: Config;
  log: Logger;
  db: Database;
  box: SecretBox;
  close(): Promise<void>;
}
