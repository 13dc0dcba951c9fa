import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

// axe-core in a page whose CSP allows only its own scripts: the source is evaluated through the
// DevTools protocol (page.evaluate), which the page's CSP does not govern, so nothing is loosened
// for the test. (A shared helper for this is being written for the hosted page; this one is the
// dashboard's until it lands.)

let source: string | null = null;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** The serious and critical violations of the page as it is now. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  source ??= readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  const loaded = await page.evaluate('typeof window.axe === "object"');
  if (!loaded) await page.evaluate(`${source}\n;0`);
  const result = (await page.evaluate('window.axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: { id: string; impact: string | null; help: string; nodes: { target: string[] }[] }[];
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}
