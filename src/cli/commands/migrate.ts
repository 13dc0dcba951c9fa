import { Command } from 'commander';
import { migrate, migrationStatus } from '../../store/migrate.ts';
import { UsageError } from '../../domain/errors.ts';
import { withCommon } from '../context.ts';
import { emit } from '../output.ts';

export function migrateCommand(): Command {
  return new Command('migrate')
    .description('apply pending database migrations (sqlite: or postgres:// from CHAINGATE_DATABASE_URL)')
    .option('--status', 'only list executed and pending migrations (creates and changes nothing)')
    .option('--create', 'create the PostgreSQL database if it does not exist (otherwise refused: a mistyped URL would start an empty gateway)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { status?: boolean; create?: boolean; json?: boolean }) => {
      if (opts.status && opts.create) throw new UsageError('--status lists migrations and creates nothing; leave out --create');
      await withCommon(async (common) => {
        if (opts.status) {
          const status = await migrationStatus(common.db);
          emit(opts.json, { database: common.db.url, ...status }, () =>
            `database ${common.db.url}\nexecuted: ${status.executed.length}\npending: ${status.pending.join(', ') || 'none'}`,
          );
          return;
        }
        const applied = await migrate(common.db);
        emit(opts.json, { database: common.db.url, applied }, () =>
          applied.length ? `applied ${applied.length} migration(s) to ${common.db.url}:\n  ${applied.join('\n  ')}` : `${common.db.url} is up to date`,
        );
      }, { skipMigrationCheck: true, needsSecrets: false, readOnly: opts.status, createDatabase: opts.create });
    });
}
