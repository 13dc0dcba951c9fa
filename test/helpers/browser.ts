import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page, type Request } from 'playwright-core';

// Real Chromium (Debian's `chromium` package, installed by .ci/run) driven by playwright-core.
// Every context gets a fresh profile, records every request and every console error, and the
// tests assert that nothing went anywhere but the allowed local origins.

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

export interface TestBrowser {
  context: BrowserContext;
  page: Page;
  /** Every request the page made (URL), in order. */
  requests: string[];
  /** Console errors, page errors and CSP violations. */
  problems: string[];
  /** Requests whose origin is not in `allowedOrigins`; they are aborted. */
  blocked: string[];
  /** Saves test/artifacts/<name>.png (full page). */
  screenshot(name: string): Promise<string>;
}

/** `false` to run, or a skip reason when Chromium is missing (never under CI). */
export function skipWithoutChromium(): false | string {
  if (existsSync(CHROMIUM)) return false;
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing and CI=true: .ci/run installs chromium`);
  return `${CHROMIUM} is missing (apt-get install -y chromium)`;
}

export async function openBrowser(
  t: { after(fn: () => Promise<void>): void },
  options: { allowedOrigins: string[]; viewport?: { width: number; height: number }; isMobile?: boolean },
): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'chaingate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
    viewport: options.viewport ?? DESKTOP,
    isMobile: options.isMobile ?? false,
    hasTouch: options.isMobile ?? false,
    deviceScaleFactor: options.isMobile ? 2 : 1,
    locale: 'en-US',
  });
  t.after(async () => {
    await context.close().catch(() => undefined);
    rmSync(profile, { recursive: true, force: true });
  });

  const allowed = new Set(options.allowedOrigins.map((o) => new URL(o).origin));
  const requests: string[] = [];
  const problems: string[] = [];
  const blocked: string[] = [];
  await context.route('**/*', async (route) => {
    const url = route.request().url();
    if (url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    let origin: string;
    try {
      origin = new URL(url).origin;
    } catch {
      return route.abort();
    }
    if (allowed.has(origin)) return route.continue();
    blocked.push(url);
    return route.abort();
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('request', (req: Request) => requests.push(req.url()));
  page.on('console', (msg) => {
    if (msg.type() === 'error' || /Content Security Policy|Refused to/i.test(msg.text())) problems.push(`console: ${msg.text()} @ ${msg.location().url}`);
  });
  page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));

  return {
    context,
    page,
    requests,
    problems,
    blocked,
    async screenshot(name) {
      mkdirSync(ARTIFACTS, { recursive: true });
      const path = join(ARTIFACTS, `${name}.png`);
      await page.screenshot({ path, fullPage: true });
      return path;
    },
  };
}

/**
 * Runs `fn`; on failure saves test/artifacts/FAILED-<name>.png and rethrows. Closes the browser
 * either way, so that the daemon (stopped by an earlier t.after) has no open connections to wait for.
 */
export async function inBrowser<T>(browser: TestBrowser, name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const path = await browser.screenshot(`FAILED-${name}`).catch(() => null);
    if (path && err instanceof Error) err.message += `\n(screenshot: ${path})`;
    throw err;
  } finally {
    await browser.context.close().catch(() => undefined);
  }
}

export function removeArtifact(name: string): void {
  rmSync(join(ARTIFACTS, `${name}.png`), { force: true });
}
