import { databaseBusy, isLockConflict } from '../domain/errors.ts';

/**
 * How long a write keeps trying to take the database's lock before it is answered DATABASE_BUSY.
 * The daemon's SQLite connection never sleeps on a lock itself (busy_timeout 0, src/store/orm.ts):
 * the waits happen here, between attempts, with the event loop free.
 */
export const LOCK_WAIT_MS = 5_000;

function backoffMs(attempt: number): number {
  return Math.min(5 * 2 ** attempt, 100) + Math.random() * 20;
}

/** Runs `attempt` again while it fails on a lost lock, for at most LOCK_WAIT_MS. */
export async function retryOnLockConflict<T>(attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isLockConflict(err)) throw err;
      const wait = backoffMs(n);
      if (Date.now() + wait > deadline) throw databaseBusy(err);
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
