import type { Config } from '../config/schema.ts';

export interface RetryPolicy {
  /** Attempts per delivery in all; 1 means no retry (the spec's single attempt). */
  maxAttempts: number;
  /** Wait before retry n (index n-1); the last entry repeats when maxAttempts outruns the list. */
  scheduleSeconds: readonly number[];
  /** Each wait is multiplied by a random factor in [1 - jitter, 1 + jitter]. */
  jitter: number;
}

export function retryPolicyFromConfig(webhooks: Config['webhooks']): RetryPolicy {
  return { maxAttempts: webhooks.maxAttempts, scheduleSeconds: webhooks.retryScheduleSeconds, jitter: webhooks.retryJitter };
}

/**
 * Milliseconds to wait after attempt `attemptsMade` (1-based) failed, or null when that was the
 * last one. Jitter spreads the retries of many deliveries that failed together (a receiver outage).
 */
export function retryDelayMs(policy: RetryPolicy, attemptsMade: number, random: () => number = Math.random): number | null {
  if (attemptsMade >= policy.maxAttempts) return null;
  const schedule = policy.scheduleSeconds;
  const base = schedule[Math.min(attemptsMade, schedule.length) - 1] ?? schedule.at(-1) ?? 0;
  const factor = 1 + policy.jitter * (2 * random() - 1);
  return Math.max(0, Math.round(base * 1000 * factor));
}
