import { existsSync } from 'node:fs';

// How deploy/systemd and deploy/Dockerfile start the long-running commands (docs/operations.md):
// the bench starts both of its servers the same way, so its ratios compare code, not memory settings.

/** Node's flags in the units' ExecStart and the image's ENTRYPOINT (test/integration/deploy-files.test.ts keeps them equal). */
export const DEPLOYMENT_NODE_FLAGS = ['--max-semi-space-size=1', '--heap-growing-percent=30'];

const JEMALLOC_PATHS = ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2', '/usr/local/lib/libjemalloc.so.2'];
const MALLOC_CONF = 'background_thread:true,narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0';

/** The units' jemalloc lines, when this machine has jemalloc and BENCH_MALLOC is not `system`. */
export function deploymentMemoryEnv(): Record<string, string> {
  if (process.env.BENCH_MALLOC === 'system' || process.env.LD_PRELOAD) return {};
  const jemalloc = JEMALLOC_PATHS.find((p) => existsSync(p));
  return jemalloc ? { LD_PRELOAD: jemalloc, MALLOC_CONF: process.env.MALLOC_CONF ?? MALLOC_CONF } : {};
}
