import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The dashboard's two static files, held in memory under a fixed table (no request path reaches the
// file system), each with a content hash for ETag and cache-busting URLs.

export interface DashboardAsset {
  body: Buffer;
  type: string;
  version: string;
}

function assetsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, 'assets'), join(here, '..', '..', '..', 'src', 'http', 'dashboard', 'assets')]) {
    if (existsSync(join(dir, 'dashboard.js'))) return dir;
  }
  throw new Error(`dashboard assets not found beside ${here}`);
}

let cached: Map<string, DashboardAsset> | null = null;

export function dashboardAssets(): Map<string, DashboardAsset> {
  if (cached) return cached;
  const dir = assetsDir();
  const table = new Map<string, DashboardAsset>();
  for (const [name, type] of [['dashboard.css', 'text/css; charset=utf-8'], ['dashboard.js', 'text/javascript; charset=utf-8']] as const) {
    const body = readFileSync(join(dir, name));
    table.set(name, { body, type, version: createHash('sha256').update(body).digest('hex').slice(0, 16) });
  }
  cached = table;
  return table;
}
