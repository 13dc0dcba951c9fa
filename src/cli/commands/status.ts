import { Command } from 'commander';
import { statusReport, type StatusReport } from '../../app/status-report.ts';
import { UsageError } from '../../domain/errors.ts';
import type { Common } from '../../common.ts';
import { createDeps } from '../../app/deps.ts';
import { withCommon } from '../context.ts';
import { emit, table } from '../output.ts';
import type { ResolvedRegistry } from '../../chains/registry.ts';
import { isChainSlug } from '../../chains/slugs.ts';
import { endpointOrigin } from '../../families/rpc-metrics.ts';

function counts(obj: Record<string, number>): string {
  const entries = Object.entries(obj);
  return entries.length ? entries.map(([k, v]) => `${k} ${v}`).join(' · ') : 'none';
}

/** One line per network: offered with its coins, or not offered and why. */
export function renderOffers(r: StatusReport): string {
  if (r.offers.length === 0) return '(no enabled chain)';
  const width = Math.max(...r.offers.map((o) => `${o.chain} ${o.network}`.length));
  return r.offers
    .map((o) => {
      const name = `${o.chain} ${o.network}`.padEnd(width);
      if (!o.offered) return `${name}  NOT OFFERED: ${o.reasons.map((x) => x.message).join('; ')}`;
      const unpriced = o.unpriced.length ? ` (no price for ${o.unpriced.join(', ')} in ${o.fiats.join(', ')})` : '';
      return `${name}  offered: ${o.coins.join(', ')}${unpriced}`;
    })
    .join('\n');
}

/** The indexers table; a failing one says since when, where and why, under its row. */
export function renderIndexers(r: StatusReport, ago: (iso: string) => string): string {
  const rows = r.indexers.map((i) => ({ ...i, state: i.failing ? 'FAILING' : i.running ? 'running' : 'STOPPED', updated: i.updatedAt ? ago(i.updatedAt) : null }));
  const lines = table(rows, ['chain', 'network', 'state', 'block', 'head', 'updated', 'endpoint']).split('\n');
  const out = lines.slice(0, 1);
  r.indexers.forEach((i, n) => {
    out.push(lines[n + 1]!);
    if (i.failing) out.push(`  failing since ${i.failingSince ?? '?'}${i.failingSince ? ` (${ago(i.failingSince)})` : ''}: ${i.lastError}`);
    else if (!i.running && i.lastError) out.push(`  stopped; its last error (${i.lastErrorAt ? ago(i.lastErrorAt) : '?'}): ${i.lastError}`);
  });
  return out.join('\n');
}

/** Coin units with the symbol; a coin the registry does not know is said in atomic units, named so. */
function sweptText(coins: string | null, atomic: string, symbol: string): string {
  return coins === null ? `${atomic} atomic units of ${symbol}` : `${coins} ${symbol}`;
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
    renderIndexers(r, ago),
    '',
    'offered to buyers',
    renderOffers(r),
    '',
    'wallet pools',
    table(r.pools.map((p) => ({ ...p })), ['chain', 'network', 'free', 'leased', 'total']),
    ...(r.sweeps.length === 0
      ? []
      : ['', 'swept to cold storage', table(r.sweeps.map((s) => ({ ...s, coin: s.symbol, swept: sweptText(s.swept, s.sweptAtomic, s.symbol), pending: sweptText(s.pending, s.pendingAtomic, s.symbol) })), ['chain', 'network', 'coin', 'swept', 'pending'])]),
  ].join('\n');
}

function offerContext(common: Common) {
  const deps = createDeps(common);
  return { registry: deps.registry, config: common.config, rates: deps.rates };
}

/** Where this config points each chain and network's indexer, as logs may show it (no path, no key). */
function endpoints(registry: ResolvedRegistry): (chain: string, network: string) => string | null {
  return (chain, network) => {
    if (!isChainSlug(chain)) return null;
    const n = [registry.chains[chain].mainnet, registry.chains[chain].testnet].find((x) => x.network === network);
    return n ? endpointOrigin(n.rpcUrl) : null;
  };
}

export function statusCommand(): Command {
  return new Command('status')
    .description('what the gateway is doing: payments, pools, indexers (running, block, last write), webhook backlog, and which chains buyers are offered (and why not)')
    .option('--watch [seconds]', 'redraw every few seconds until interrupted (default: 5)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { watch?: boolean | string; json?: boolean }) => {
      const every = opts.watch === undefined ? 0 : opts.watch === true ? 5 : Number(opts.watch);
      if (!Number.isFinite(every) || every < 0 || (opts.watch !== undefined && every < 1)) throw new UsageError('--watch takes a number of seconds (at least 1)');
      await withCommon(async (common) => {
        const offers = offerContext(common);
        const endpointOf = endpoints(offers.registry);
        if (!every) {
          const report = await statusReport(common.db, new Date(), 15, offers, endpointOf);
          emit(opts.json, report, () => renderStatus(report));
          return;
        }
        if (!opts.json && process.stdout.isTTY && process.stdin.isTTY) {
          // The full-screen view; loaded only here, so plain `status` stays quick to start.
          const { runStatusScreen } = await import('../tui/status-screen.ts');
          await runStatusScreen({
            load: () => statusReport(common.db, new Date(), 15, offers, endpointOf),
            everySeconds: every,
            lowWaterMark: common.config.pools.lowWaterMark,
            staleSeconds: Math.max(60, every * 3),
          });
          return;
        }
        // Not a terminal (a pipe, a log): the same report as text, redrawn.
        let stop = false;
        process.once('SIGINT', () => (stop = true));
        process.once('SIGTERM', () => (stop = true));
        while (!stop) {
          const report = await statusReport(common.db, new Date(), 15, offers, endpointOf);
          if (opts.json) process.stdout.write(`${JSON.stringify(report)}\n`);
          else process.stdout.write(`\x1b[2J\x1b[H${renderStatus(report)}\n`);
          for (let waited = 0; waited < every * 1000 && !stop; waited += 200) await new Promise((r) => setTimeout(r, 200));
        }
      }, { readOnly: true });
    });
}
