import { Command } from 'commander';
import { statusReport, type StatusReport } from '../../db/status-report.ts';
import { UsageError } from '../../domain/errors.ts';
import { withCommon } from '../context.ts';
import { emit, table } from '../output.ts';

function counts(obj: Record<string, number>): string {
  const entries = Object.entries(obj);
  return entries.length ? entries.map(([k, v]) => `${k} ${v}`).join(' · ') : 'none';
}

export function renderStatus(r: StatusReport): string {
  const ago = (iso: string) => `${Math.max(0, Math.round((Date.parse(r.generatedAt) - Date.parse(iso)) / 1000))} s ago`;
  return [
    `chaingate status — ${r.generatedAt}`,
    `database   ${r.database.url} (${r.database.dialect})${r.database.pendingMigrations ? `  ${r.database.pendingMigrations} PENDING MIGRATION(S)` : ''}`,
    `merchants  ${r.merchants.active} active of ${r.merchants.total}`,
    `invoices   ${counts(r.invoices)}`,
    `payments   ${counts(r.payments)}`,
    `webhooks   pending ${r.webhooks.pending} · failed ${r.webhooks.failed} · delivered ${r.webhooks.delivered}${r.webhooks.oldestPendingAt ? ` · oldest due ${ago(r.webhooks.oldestPendingAt)}` : ''}`,
    '',
    'indexers',
    table(r.indexers.map((i) => ({ ...i, state: i.running ? 'running' : 'stopped', updated: ago(i.updatedAt) })), ['chain', 'network', 'state', 'block', 'updated']),
    '',
    'wallet pools',
    table(r.pools.map((p) => ({ ...p, network: p.isTestnet ? 'testnet' : 'mainnet' })), ['chain', 'network', 'free', 'leased', 'total']),
  ].join('\n');
}

export function statusCommand(): Command {
  return new Command('status')
    .description('what the gateway is doing: payments, pools, indexers (running, block, last write) and webhook backlog')
    .option('--watch [seconds]', 'redraw every few seconds (default 5) until interrupted')
    .option('--json', 'machine-readable output')
    .action(async (opts: { watch?: boolean | string; json?: boolean }) => {
      const every = opts.watch === undefined ? 0 : opts.watch === true ? 5 : Number(opts.watch);
      if (!Number.isFinite(every) || every < 0 || (opts.watch !== undefined && every < 1)) throw new UsageError('--watch takes a number of seconds (at least 1)');
      await withCommon(async (common) => {
        if (!every) {
          const report = await statusReport(common.db);
          emit(opts.json, report, () => renderStatus(report));
          return;
        }
        let stop = false;
        process.once('SIGINT', () => (stop = true));
        process.once('SIGTERM', () => (stop = true));
        while (!stop) {
          const report = await statusReport(common.db);
          if (opts.json) process.stdout.write(`${JSON.stringify(report)}\n`);
          else process.stdout.write(`\x1b[2J\x1b[H${renderStatus(report)}\n`);
          for (let waited = 0; waited < every * 1000 && !stop; waited += 200) await new Promise((r) => setTimeout(r, 200));
        }
      });
    });
}
