import { Command } from 'commander';

// `chaingate report` (docs/report.md): every payment received, late funds, sweeps and refunds
// between two dates, as CSV (for a spreadsheet) or JSON, on stdout or into --out. The dashboard's
// Reports page runs the same use case (exportReport), so both give the same file.

export function reportCommand(): Command {
  return new Command('report')
    .description("the accountant's export: payments received at fiat value, late funds, sweeps and refunds with fees, one row each")
    .requiredOption('--from <date>', 'first day (YYYY-MM-DD, UTC) or an ISO 8601 time, inclusive')
    .requiredOption('--to <date>', 'last day (YYYY-MM-DD, UTC: the whole day is included) or an ISO 8601 time, exclusive')
    .option('--format <format>', 'csv or json', 'csv')
    .option('--json', 'the same as --format json')
    .option('--merchant <id>', "only this merchant point's payments, late funds and refunds (sweeps empty a shared pool: left out)")
    .option('--out <path>', 'write to this file instead of stdout')
    .action(async (opts: { from: string; to: string; format: string; json?: boolean; merchant?: string; out?: string }) => {
      if (opts.json) opts.format = 'json';
      const { withCommon } = await import('../context.ts');
      const { exportReport } = await import('../../report/report.ts');
      const { writeFileSync } = await import('node:fs');
      await withCommon(
        async (common) => {
          const file = await exportReport(common, { from: opts.from, to: opts.to, format: opts.format, merchantId: opts.merchant ?? null });
          if (opts.out) {
            writeFileSync(opts.out, file.text);
            process.stderr.write(`wrote ${file.rows} row${file.rows === 1 ? '' : 's'} to ${opts.out}\n`);
          } else process.stdout.write(file.text);
        },
        { readOnly: true },
      );
    });
}
