import { Command } from 'commander';
import { auditForOperator } from '../../app/dashboard-audit.ts';
import { UsageError } from '../../domain/errors.ts';
import { withCommon } from '../context.ts';
import { emit, table } from '../output.ts';

export function auditCommand(): Command {
  const cmd = new Command('audit').description("the dashboard's audit log (who changed what, when, from where)");
  cmd
    .command('list')
    .description('newest first')
    .option('--limit <n>', 'at most this many rows', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
      return n;
    }, 100)
    .option('--json', 'machine-readable output')
    .action(async (opts: { limit: number; json?: boolean }) => {
      await withCommon(async (common) => {
        const rows = await auditForOperator(common, opts.limit);
        emit(opts.json, rows, () => table(rows.map((r) => ({ ...r, pointId: r.pointId ?? '-', ip: r.ip ?? '-' })), ['at', 'actor', 'action', 'pointId', 'ip']));
      }, { readOnly: true });
    });
  return cmd;
}
