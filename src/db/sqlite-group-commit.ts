import { isLockConflict } from '../domain/errors.ts';
import type { NativeSqlite } from './native-sqlite.ts';

// Group commit for SQLite's synchronous writes. Each write of the hot paths (a signed creation, a
// checkout) runs synchronously inside one SQLite transaction, and the writes that arrive in the same
// turn of the event loop share it: each in its own savepoint, one COMMIT for all of them once the
// loop has nothing more to hand over (setImmediate), and only then is any of them answered. A commit
// writes every page it changed to the WAL, and most of a creation's pages (the tables' last leaves,
// the indexes on increasing keys, the day's reference counter) are the same for the next creation:
// so a batch writes those once instead of once a request, and SQLite checkpoints less often.
//
// The rules that keep it exactly one transaction a request, as far as anyone can tell:
// - nothing is answered before the COMMIT that holds it returns, so a crash leaves each request
//   absent (key free, nothing done) or committed (key completed, replayable), as before;
// - a request whose work throws is rolled back to its savepoint alone; the others commit;
// - an error that makes SQLite roll back the whole transaction (a full disk, an I/O error) fails
//   every request of the batch, none of them answered, and a failed COMMIT does the same;
// - the batch commits before the connection runs anything else (any statement the ORM or a read
//   prepares, see src/db/orm.ts), so no other work ever sees or joins a batch's uncommitted rows.

/** Writes committed together at most (then the batch commits at once). */
const MAX_BATCH = 64;

interface Member {
  resolve(): void;
  reject(err: unknown): void;
}

interface Batch {
  members: Member[];
  /** A member's work is running (its own statements must not commit the batch). */
  working: boolean;
}

const batches = new WeakMap<NativeSqlite, Batch>();

function run(native: NativeSqlite, sql: string): void {
  // Prepared (and cached, src/db/orm.ts) rather than exec'd: exec parses its text on every call.
  native.prepare(sql).run();
}

/**
 * Runs `fn` synchronously as part of the connection's current batch (opening one when there is
 * none) and returns the promise of its result, settled once the batch has committed. `undefined`
 * when the connection is inside another transaction right now (an ORM transaction awaiting between
 * statements) or another process holds the write lock: the caller then takes the asynchronous path.
 */
export function groupedSqliteTransaction<T>(native: NativeSqlite, fn: () => T): Promise<T> | undefined {
  let batch = batches.get(native);
  if (batch === undefined) {
    if (native.inTransaction) return undefined;
    try {
      run(native, 'begin immediate');
    } catch (err) {
      // Another process holds the write lock: the caller waits for it asynchronously instead.
      if (isLockConflict(err)) return undefined;
      throw err;
    }
    batch = { members: [], working: false };
    batches.set(native, batch);
    setImmediate(() => commitBatch(native));
  }
  batch.working = true;
  let out: T;
  try {
    run(native, 'savepoint cg_write');
    out = fn();
    run(native, 'release cg_write');
  } catch (err) {
    try {
      if (!native.inTransaction) throw err; // SQLite rolled the whole transaction back itself
      run(native, 'rollback to cg_write');
      run(native, 'release cg_write');
      batch.working = false;
    } catch {
      // The batch cannot be trusted past this write: none of it is kept, none of it answered.
      batches.delete(native);
      if (native.inTransaction) native.prepare('rollback').run();
      for (const m of batch.members) m.reject(err);
    }
    throw err;
  }
  batch.working = false;
  const done = new Promise<T>((resolve, reject) => batch.members.push({ resolve: () => resolve(out), reject }));
  if (batch.members.length >= MAX_BATCH) commitBatch(native);
  return done;
}

/** Commits the connection's open batch, if any (not from inside a member's own work). */
export function commitBatch(native: NativeSqlite): void {
  const batch = batches.get(native);
  if (batch === undefined || batch.working) return;
  batches.delete(native);
  try {
    run(native, 'commit');
  } catch (err) {
    if (native.inTransaction) run(native, 'rollback');
    for (const m of batch.members) m.reject(err);
    return;
  }
  for (const m of batch.members) m.resolve();
}
