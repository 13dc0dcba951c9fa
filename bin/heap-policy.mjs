// V8's heap policy of chaingate's processes, set by bin/chaingate before anything else loads (and by
// the bench's bare server, so the side-by-side ratios compare code, not heap settings).
import v8 from 'node:v8';

/**
 * A young generation that stays at its first size (1 MB semi-spaces): V8 otherwise grows it to
 * 64 MB under load and keeps that memory. An old generation that grows by 30 % of what survived the
 * last full collection, instead of V8's own factor (up to 4x), which let a serve on PostgreSQL,
 * whose slower requests promote more, keep 230 MB for 40 MB of live objects: a growth policy, not a
 * limit, so the heap still grows as far as the live data needs (docs/performance.md#memory). V8
 * reads it after every full collection. Each is left alone when the operator set it (or the limit
 * that replaces it) in `nodeFlags` (NODE_OPTIONS and the command line).
 */
export function applyHeapPolicy(nodeFlags) {
  if (!/--max-semi-space-size|--semi-space-growth-factor/.test(nodeFlags)) v8.setFlagsFromString('--semi-space-growth-factor=1');
  if (!/--heap-growing-percent|--max-old-space-size/.test(nodeFlags)) v8.setFlagsFromString('--heap-growing-percent=30');
}
