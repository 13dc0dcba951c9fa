// npm run build: compile src/ to dist/ and stamp the time, so bin/chaingate can tell a stale build.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const started = new Date();
rmSync(join(root, 'dist'), { recursive: true, force: true });
const res = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
  cwd: root,
});
if (res.status !== 0) process.exit(res.status ?? 1);
mkdirSync(join(root, 'dist'), { recursive: true });
// The stamp carries the start time: a source edited during the build still counts as newer.
writeFileSync(join(root, 'dist', '.build-stamp'), started.toISOString());
const { utimesSync } = await import('node:fs');
utimesSync(join(root, 'dist', '.build-stamp'), started, started);
