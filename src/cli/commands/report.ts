import { Command } from 'commander';

// `chaingate report` (docs/report.md): every payment received, late funds, sweeps and refunds
// between two dates, as CSV (for a spreadsheet) or JSON, on stdout or into --out.

export function reportCommand(): Command {
  return new Command('report')
    .description("the accountant's export: payments received at fiat value, late funds, sweeps and refunds with fees, one row each")
    .requiredOption('--from <date>', 'first day (YYYY-MM-DD, UTC) or an ISO 8601 time, inclusive')
    .requiredOption('--to <date>', 'last day (YYYY-MM-DD, UTC: the whole day is included) or an ISO 8601 time, exclusive')
    .option('--format <format>', 'csv or json', 'csv')
    .option('--json', 'the same as --format json')
    .option('--out <path>', 'write to this file instead of stdout')
    .action(async (opts: { from: string; to: string; format: string; json?: boolean; out?: string }) => {
      if (opts.json) opts.format = 'json';
      const { withCommon } = await import('../context.ts');
      const { UsageError } = await import('../../domain/errors.ts');
      const { buildReport, parseReportDate, reportCsv, reportTotals } = await import('../../report/report.ts');
      const { writeFileSync } = await import('node:fs');
      if (opts.format !== 'csv' && opts.format !== 'json') throw new UsageError(`--format ${opts.format}: csv or json`);
      const from = parseReportDate(opts.from, '--from');
      let to = parseReportDate(opts.to, '--to');
      // A bare date names a whole day: up to the next midnight.
      if (/^\d{4}-\d{2}-\d{2}$/.test(opts.to)) to = new Date(to.getTime() + 86_400_000);
      await withCommon(
        async (common) => {
          const rows = await buildReport(common, from, to);
          const totals = reportTotals(rows);
          const text = opts.format === 'csv' ? reportCsv(rows, totals) : `${JSON.stringify({ rows, totals }, null, 2)}\n`;
          if (opts.out) {
            writeFileSync(opts.out, text);
            process.stderr.write(`wrote ${rows.length} row${rows.length === 1 ? '' : 's'} to ${opts.out}\n`);
          } else process.stdout.write(text);
        },
        { readOnly: true },
      );
    });
}
