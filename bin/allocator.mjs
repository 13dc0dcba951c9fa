// The allocator of the long-running commands (serve, index), chosen by bin/chaingate before anything
// loads; also used by the bench to start its bare server on the same allocator.
import { existsSync } from 'node:fs';

// The long-running commands keep their memory small by the allocator they run on: jemalloc when the
// system has it (Debian and Ubuntu: the libjemalloc2 package), returning freed pages within a second;
// otherwise glibc's malloc limited to two arenas (instead of one per V8 worker thread that keeps what
// those threads freed), with fixed thresholds: blocks from 32 KiB up are mapped on their own and
// unmapped when freed, and the heap's top is trimmed past 64 KiB free (glibc otherwise raises both
// as the process runs, up to 32 MiB, and keeps what it freed). Both must be in the environment before
// the process starts, so bin/chaingate starts itself again once (process.execve: the same pid,
// arguments and stdio) with them set. An operator's own LD_PRELOAD, MALLOC_CONF, MALLOC_ARENA_MAX or
// GLIBC_TUNABLES is kept (empty counts as unset); CHAINGATE_MALLOC=glibc picks glibc's even when
// jemalloc is there, CHAINGATE_MALLOC=system turns this off (docs/performance.md#memory).
export const JEMALLOC_PATHS = ['/usr/lib/x86_64-linux-gnu/libjemalloc.so.2', '/usr/lib/aarch64-linux-gnu/libjemalloc.so.2', '/usr/lib64/libjemalloc.so.2', '/usr/lib/libjemalloc.so.2', '/usr/local/lib/libjemalloc.so.2'];
const JEMALLOC_CONF = 'background_thread:true,narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0';
export const GLIBC_TUNABLES = 'glibc.malloc.mmap_threshold=32768:glibc.malloc.trim_threshold=65536';

export function allocatorEnv(env) {
  const choice = env.CHAINGATE_MALLOC ?? 'auto';
  if (choice === 'system' || env.CHAINGATE_MALLOC_SET) return null;
  if (choice !== 'auto' && choice !== 'jemalloc' && choice !== 'glibc') {
    throw new Error(`CHAINGATE_MALLOC must be auto, jemalloc, glibc or system, not "${choice}"`);
  }
  const jemalloc = env.LD_PRELOAD || choice === 'glibc' ? null : JEMALLOC_PATHS.find((p) => existsSync(p));
  if (choice === 'jemalloc' && !jemalloc && !/jemalloc/.test(env.LD_PRELOAD ?? '')) {
    throw new Error(`CHAINGATE_MALLOC=jemalloc but no libjemalloc.so.2 in ${JEMALLOC_PATHS.join(', ')} (Debian and Ubuntu: apt install libjemalloc2)`);
  }
  if (jemalloc) return { ...env, CHAINGATE_MALLOC_SET: 'jemalloc', LD_PRELOAD: jemalloc, MALLOC_CONF: env.MALLOC_CONF || JEMALLOC_CONF };
  if (env.LD_PRELOAD || (env.MALLOC_ARENA_MAX && env.GLIBC_TUNABLES)) return null;
  return { ...env, CHAINGATE_MALLOC_SET: 'glibc', MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX || '2', GLIBC_TUNABLES: env.GLIBC_TUNABLES || GLIBC_TUNABLES };
}

