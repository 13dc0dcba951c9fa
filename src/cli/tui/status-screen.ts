import { createElement as h, useEffect, useState, type ReactNode } from 'react';
import { Box, render, Text, useApp, useInput } from 'ink';
import type { StatusReport } from '../../app/status-report.ts';

// `chaingate status --watch`: a full-screen terminal view (ink), refreshed every few seconds.
// Keys: 1-4 or Tab switch views, r refreshes now, q or Ctrl-C quits. Written with createElement
// (no JSX) so it compiles with the rest of the CLI.

export interface ScreenOptions {
  load(): Promise<StatusReport>;
  everySeconds: number;
  /** Pools under this many free addresses are flagged (pools.lowWaterMark). */
  lowWaterMark: number;
  /** An indexer that has not polled for this long is flagged stale. */
  staleSeconds: number;
}

const VIEWS = ['overview', 'indexers', 'pools', 'errors'] as const;
type View = (typeof VIEWS)[number];

const pad = (s: string | number, n: number) => String(s).padEnd(n).slice(0, n);
const counts = (obj: Record<string, number>) => (Object.keys(obj).length ? Object.entries(obj).map(([k, v]) => `${k} ${v}`).join('  ') : 'none');
const ago = (iso: string | null, now: string) => (iso ? `${Math.max(0, Math.round((Date.parse(now) - Date.parse(iso)) / 1000))} s ago` : '-');

function isStale(i: StatusReport['indexers'][number], staleSeconds: number): boolean {
  return !i.running || i.lastPollAgeSeconds === null || i.lastPollAgeSeconds > staleSeconds;
}

function Header(props: { view: View; report: StatusReport | null; error: string | null }): ReactNode {
  return h(
    Box,
    { flexDirection: 'column', marginBottom: 1 },
    h(Text, { bold: true }, `chaingate status — ${props.report?.generatedAt ?? 'loading…'}`),
    h(
      Text,
      null,
      ...VIEWS.map((v, i) => h(Text, { key: v, inverse: v === props.view }, ` ${i + 1} ${v} `)),
      h(Text, { dimColor: true }, '   Tab: next view  r: refresh  q: quit'),
    ),
    props.error ? h(Text, { color: 'red' }, `cannot read the database: ${props.error}`) : null,
  );
}

function Overview(props: { r: StatusReport; o: ScreenOptions }): ReactNode {
  const { r, o } = props;
  const failing = r.indexers.filter((i) => i.failing);
  const stale = r.indexers.filter((i) => !i.failing && isStale(i, o.staleSeconds));
  const low = r.pools.filter((p) => p.free < o.lowWaterMark);
  const names = (list: StatusReport['indexers']) => list.map((i) => `${i.chain} ${i.network}`).join(', ');
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, null, `database   ${r.database.url} (${r.database.dialect})${r.database.pendingMigrations ? `  ${r.database.pendingMigrations} PENDING MIGRATION(S)` : ''}`),
    h(Text, null, `merchants  ${r.merchants.active} active of ${r.merchants.total}`),
    h(Text, null, `invoices   ${counts(r.invoices)}`),
    h(Text, null, `payments   ${counts(r.payments)}`),
    h(Text, null, `webhooks   pending ${r.webhooks.pending}  failed ${r.webhooks.failed}  delivered ${r.webhooks.delivered}${r.webhooks.oldestPendingAt ? `  oldest due ${ago(r.webhooks.oldestPendingAt, r.generatedAt)}` : ''}`),
    h(
      Text,
      { color: failing.length ? 'red' : stale.length ? 'yellow' : 'green' },
      `indexers   ${r.indexers.length} known, ${failing.length ? `${failing.length} FAILING: ${names(failing)}; ` : ''}${stale.length} stale${stale.length ? `: ${names(stale)}` : ''}`,
    ),
    h(Text, { color: low.length ? 'yellow' : 'green' }, `pools      ${r.pools.length} pools, ${low.length} low${low.length ? `: ${low.map((p) => `${p.chain}${p.isTestnet ? ` ${p.network}` : ''} ${p.free} free`).join(', ')}` : ''}`),
    h(Text, { color: r.recentErrors.length ? 'red' : 'green' }, `errors     ${r.recentErrors.length} in the last 15 minutes`),
  );
}

function Indexers(props: { r: StatusReport; o: ScreenOptions }): ReactNode {
  const { r, o } = props;
  if (!r.indexers.length) return h(Text, null, 'No indexer has run yet: start `chaingate index <chain>`.');
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true }, `${pad('CHAIN', 11)}${pad('NETWORK', 10)}${pad('STATE', 9)}${pad('HEIGHT', 12)}${pad('HEAD', 12)}${pad('LAG', 7)}${pad('POLLED', 10)}LAST ERROR`),
    ...r.indexers.flatMap((i) => {
      const stale = isStale(i, o.staleSeconds);
      const row = h(
        Text,
        { key: `${i.chain}-${i.network}`, color: i.failing ? 'red' : stale ? 'yellow' : undefined },
        `${pad(i.chain, 11)}${pad(i.network, 10)}${pad(i.failing ? 'FAILING' : stale ? 'STALE' : 'running', 9)}${pad(i.block ?? '-', 12)}${pad(i.head ?? '-', 12)}${pad(i.lagBlocks ?? '-', 7)}${pad(i.lastPollAgeSeconds === null ? '-' : `${i.lastPollAgeSeconds} s`, 10)}${i.lastError ? i.lastError.slice(0, 50) : ''}`,
      );
      if (!i.failing) return [row];
      // The whole error under the row: it names the method, the endpoint and the cause.
      const since = `  failing since ${i.failingSince ? `${i.failingSince.slice(0, 19).replace('T', ' ')} (${ago(i.failingSince, r.generatedAt)})` : '?'}${i.endpoint ? `  endpoint ${i.endpoint}` : ''}`;
      return [row, h(Text, { key: `${i.chain}-${i.network}-since`, color: 'red' }, since), h(Text, { key: `${i.chain}-${i.network}-error`, color: 'red', wrap: 'truncate-end' }, `  ${i.lastError ?? ''}`)];
    }),
  );
}

function Pools(props: { r: StatusReport; o: ScreenOptions }): ReactNode {
  const { r, o } = props;
  if (!r.pools.length) return h(Text, null, 'No deposit addresses yet: `chaingate wallets seed`.');
  return h(
    Box,
    { flexDirection: 'column' },
    h(Text, { bold: true }, `${pad('CHAIN', 11)}${pad('NETWORK', 10)}${pad('FREE', 8)}${pad('LEASED', 8)}${pad('TOTAL', 8)}`),
    ...r.pools.map((p) => {
      const low = p.free < o.lowWaterMark;
      return h(
        Text,
        { key: `${p.chain}-${p.isTestnet}`, color: low ? 'yellow' : undefined },
        `${pad(p.chain, 11)}${pad(p.network, 10)}${pad(p.free, 8)}${pad(p.leased, 8)}${pad(p.total, 8)}${low ? `LOW (under ${o.lowWaterMark})` : ''}`,
      );
    }),
  );
}

function Errors(props: { r: StatusReport }): ReactNode {
  if (!props.r.recentErrors.length) return h(Text, { color: 'green' }, 'No errors in the last 15 minutes.');
  return h(Box, { flexDirection: 'column' }, ...props.r.recentErrors.map((e, i) => h(Text, { key: String(i) }, `${e.at.slice(11, 19)}  ${pad(e.source, 24)}${e.message}`)));
}

function Screen(props: { o: ScreenOptions }): ReactNode {
  const { exit } = useApp();
  const [view, setView] = useState<View>('overview');
  const [report, setReport] = useState<StatusReport | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the effect reloads on each tick by design; its options never change
  useEffect(() => {
    let alive = true;
    props.o.load().then(
      (r) => {
        if (!alive) return;
        setReport(r);
        setError(null);
      },
      (err: unknown) => alive && setError(err instanceof Error ? err.message : String(err)),
    );
    const timer = setTimeout(() => setTick((n) => n + 1), props.o.everySeconds * 1000);
    return () => {
      alive = false;
      clearTimeout(timer);
    };
  }, [tick]);

  useInput((input, key) => {
    if (input === 'q' || (key.ctrl && input === 'c')) exit();
    else if (input === 'r') setTick((n) => n + 1);
    else if (key.tab) setView((v) => VIEWS[(VIEWS.indexOf(v) + 1) % VIEWS.length]!);
    else if (/^[1-4]$/.test(input)) setView(VIEWS[Number(input) - 1]!);
  });

  const body = !report ? h(Text, null, 'loading…') : view === 'overview' ? h(Overview, { r: report, o: props.o }) : view === 'indexers' ? h(Indexers, { r: report, o: props.o }) : view === 'pools' ? h(Pools, { r: report, o: props.o }) : h(Errors, { r: report });
  return h(Box, { flexDirection: 'column' }, h(Header, { view, report, error }), body);
}

/** Runs the screen until q / Ctrl-C, in the terminal's alternate screen so the shell is left as it was. */
export async function runStatusScreen(options: ScreenOptions): Promise<void> {
  process.stdout.write('\x1b[?1049h\x1b[H');
  // Interactive whenever the terminal is one: ink's CI detection (a CI variable in the environment)
  // would otherwise hold every frame back until exit, leaving a watched screen blank.
  const app = render(h(Screen, { o: options }), { exitOnCtrlC: false, interactive: Boolean(process.stdout.isTTY) });
  try {
    await app.waitUntilExit();
  } finally {
    app.cleanup();
    process.stdout.write('\x1b[?1049l');
  }
}
