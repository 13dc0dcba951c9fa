import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

// axe-core (Deque's accessibility engine) run inside a page in real Chromium. The hosted page and
// the dashboard forbid inline and injected script (CSP `script-src 'self'`, Trusted Types), so axe
// is not added as a <script> element: its source is evaluated through the DevTools protocol
// (playwright's page.evaluate), which the page's CSP does not govern. The page itself runs exactly
// as a buyer's browser runs it; nothing about its policy is relaxed.

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The impacts that fail a page: axe's "serious" and "critical". */
export const BLOCKING_IMPACTS: readonly string[] = ['serious', 'critical'];

export interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  /** CSS selectors of the offending nodes, with axe's summary of each. */
  nodes: string[];
}

/** Runs axe on what the page shows now (hidden views are skipped by axe itself); every violation, any impact. */
export async function axeViolations(page: Page): Promise<AxeFinding[]> {
  const loaded = await page.evaluate('typeof window.axe === "object"');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const json = (await page.evaluate(`(async () => {
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return JSON.stringify(result.violations.map((v) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ') + ': ' + (n.failureSummary ?? '').replace(/\\s+/g, ' ')),
    })));
  })()`)) as string;
  return JSON.parse(json) as AxeFinding[];
}

/** The serious and critical violations, one line each, for an assertion message. */
export function blocking(findings: readonly AxeFinding[]): string[] {
  return findings.filter((f) => f.impact !== null && BLOCKING_IMPACTS.includes(f.impact)).map((f) => `${f.impact} ${f.id} (${f.help}): ${f.nodes.join(' | ')}`);
}

/** Fails with every serious or critical violation on the page, labelled with what was being checked. */
export async function assertAccessible(page: Page, label: string): Promise<AxeFinding[]> {
  const findings = await axeViolations(page);
  const bad = blocking(findings);
  if (bad.length > 0) throw new Error(`axe: ${bad.length} serious or critical violation(s) on ${label}:\n  ${bad.join('\n  ')}`);
  return findings;
}
