import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The hosted page's static files, held in memory: a fixed table (no path from the request ever
// reaches the file system), each with a content hash for ETag and for cache-busting URLs.

export interface Asset {
  body: Buffer;
  type: string;
  /** First 16 hex digits of the SHA-256 of the body. */
  version: string;
}

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * The assets folder sits beside this module in the source tree; the TypeScript build does not copy
 * it into dist/, so a compiled daemon reads it from the package's src/ folder.
 */
function assetsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const dir of [join(here, 'assets'), join(here, '..', '..', '..', 'src', 'http', 'page', 'assets')]) {
    if (existsSync(join(dir, 'page.js'))) return dir;
  }
  throw new Error(`hosted page assets not found beside ${here}`);
}

/** ethers' self-contained ES module bundle, for the "pay with browser wallet" button. */
function ethersBundle(): string {
  const entry = createRequire(import.meta.url).resolve('ethers'); // <root>/lib.commonjs/index.js
  return join(dirname(dirname(entry)), 'dist', 'ethers.min.js');
}

let cached: Map<string, Asset> | null = null;

export function loadAssets(): Map<string, Asset> {
  if (cached) return cached;
  const dir = assetsDir();
  const files: [string, string][] = [
    ['page.css', join(dir, 'page.css')],
    ['page.js', join(dir, 'page.js')],
    ['icon.svg', join(dir, 'icon.svg')],
    ['ethers.min.js', ethersBundle()],
  ];
  const table = new Map<string, Asset>();
  for (const [name, path] of files) {
    const body = readFileSync(path);
    const ext = name.slice(name.lastIndexOf('.'));
    table.set(name, { body, type: TYPES[ext]!, version: createHash('sha256').update(body).digest('hex').slice(0, 16) });
  }
  cached = table;
  return table;
}
