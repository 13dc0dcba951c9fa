import type { Config } from '../config/schema.ts';
import type { RateLimitCounters } from '../domain/rate-limits.ts';
import type { Logger } from '../logger.ts';
import type { Database } from './orm.ts';
import { type FailOpenReason, SharedRateLimitStore } from './rate-limit-counters.ts';
import { memoryCounters } from './rate-limit-memory.ts';

/**
 * The rate-limit counters for this database (docs/rate-limits.md), or null when the limits are off:
 * on PostgreSQL the counters every serve process shares (a store that fails lets requests through,
 * counted by `onFailOpen`); on SQLite, one process, its memory.
 */
export function openRateLimitCounters(
  db: Database,
  config: Config['rateLimit'],
  options: { log: Logger; onFailOpen?: (reason: FailOpenReason, requests: number) => void },
): RateLimitCounters | null {
  if (!config.enabled) return null;
  if (db.dialect !== 'postgresql') return memoryCounters(config);
  return new SharedRateLimitStore({
    db,
    serviceWide: [config.serviceWide.burst, config.serviceWide.sustained],
    log: options.log,
    ...(options.onFailOpen ? { onFailOpen: options.onFailOpen } : {}),
  });
}
