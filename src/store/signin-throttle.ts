import type { Database } from './orm.ts';
import { dateOf, poolReader } from './raw-sql.ts';

// Failed sign-ins per key (an account's or an IP's hash), in the database so that every serve
// process counts the same attempts. The delay policy is the caller's (src/app/dashboard-signin.ts).

export interface ThrottleState {
  failures: number;
  blockedUntil: Date;
}

export async function throttleOf(db: Database, key: string): Promise<ThrottleState | null> {
  const row = await poolReader(db).get<{ failures: unknown; blocked_until: unknown }>('select failures, blocked_until from signin_throttle where key = ?', [key]);
  return row ? { failures: Number(row.failures), blockedUntil: dateOf(row.blocked_until) } : null;
}

/** One more failure; `delayMs(failures)` says how long the key then waits. */
export async function recordFailure(db: Database, key: string, now: Date, delayMs: (failures: number) => number): Promise<ThrottleState> {
  return db.write(async (x) => {
    const row = await x.get<{ failures: unknown }>('select failures from signin_throttle where key = ?', [key]);
    const failures = Number(row?.failures ?? 0) + 1;
    const blockedUntil = new Date(now.getTime() + delayMs(failures));
    if (row) await x.run('update signin_throttle set failures = ?, blocked_until = ?, updated_at = ? where key = ?', [failures, blockedUntil, now, key]);
    else await x.run('insert into signin_throttle (key, failures, blocked_until, updated_at) values (?, ?, ?, ?)', [key, failures, blockedUntil, now]);
    return { failures, blockedUntil };
  });
}

export async function clearFailures(db: Database, key: string): Promise<void> {
  await db.write(async (x) => {
    await x.run('delete from signin_throttle where key = ?', [key]);
  });
}
