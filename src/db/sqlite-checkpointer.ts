import Sqlite from 'better-sqlite3';
import { open } from 'node:fs/promises';
import type { Logger } from '../logger.ts';
import type { NativeSqlite } from './raw-sql.ts';

// Background checkpoints for the daemon's SQLite database. SQLite checkpoints the WAL from the
// writer itself, after the commit that takes the WAL past 1,000 pages: it fsyncs the WAL, copies
// the pages into the database file and fsyncs that, all on the event loop's thread, and the
// requests of that turn wait for both fsyncs (docs/performance.md, "Sixth round"). Here the daemon's
// connection leaves that to this module, which does the same work with the two fsyncs on libuv's
// thread pool, so the loop only copies pages:
//
//   1. a second connection (the holder) opens a read transaction: its snapshot ends at WAL frame M;
//   2. fsync the WAL file (thread pool): frames up to M are durable;
//   3. a third connection with synchronous=off runs `wal_checkpoint(passive)`: SQLite copies the
//      frames no reader still needs, at most up to M, into the database file, without fsync;
//   4. fsync the database file (thread pool);
//   5. the holder ends its transaction.
//
// What makes this as safe against a power cut as SQLite's own checkpoint (synchronous=normal):
// SQLite's checkpoint fsyncs the WAL before it copies (step 2 does, and the copy never goes past M,
// which the holder's snapshot pins) and fsyncs the database before the WAL can be written over from
// its start. A writer starts the WAL over only when it can lock every reader slot exclusively
// (wal.c, walRestartLog); the holder keeps one slot for the whole cycle, so no writer, in this
// process or in an indexer, starts the WAL over before step 4 is done. Until then a copied page
// that did not reach the disk is still in the WAL, which recovery reads first.
//
// SQLite's own checkpoint stays on as a safety net at SAFETY_PAGES (a WAL that the cycles here did
// not keep small, e.g. under writes that never pause, is still started over: that checkpoint finds
// most pages copied and only fsyncs). The indexers' connections keep SQLite's default.

/** WAL pages after which SQLite's own (synchronous) checkpoint still runs on the daemon's connection. */
export const SAFETY_PAGES = 10_000;
/** Pause between two cycles. */
const INTERVAL_MS = 100;

export interface Checkpointer {
  /** Cycles that checkpointed something (for tests and the log). */
  readonly cycles: number;
  stop(): Promise<void>;
}

interface CheckpointResult {
  busy: number;
  log: number;
  checkpointed: number;
}

async function fsyncFile(path: string): Promise<boolean> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  try {
    await fh.sync();
    return true;
  } finally {
    await fh.close();
  }
}

/** Starts checkpointing `path` in the background; `main` is the daemon's own connection. */
export function startCheckpointer(path: string, main: NativeSqlite, log: Logger): Checkpointer {
  // No busy waits (they would sleep on the event loop): a cycle that meets a lock is skipped.
  const holder = new Sqlite(path, { fileMustExist: true, timeout: 0 });
  const copier = new Sqlite(path, { fileMustExist: true, timeout: 0 });
  copier.pragma('synchronous = off');
  for (const c of [holder, copier]) c.pragma('cache_size = -64');
  main.prepare(`pragma wal_autocheckpoint = ${SAFETY_PAGES}`).get();
  const snapshot = holder.prepare('select 1 from sqlite_master limit 1');
  const dataVersion = holder.prepare('pragma data_version');

  let lastVersion: unknown = null;
  let caughtUp = false;
  let cycles = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();

  async function cycle(): Promise<void> {
    // Another connection committed since the last cycle, or that one left pages behind.
    const version = (dataVersion.get() as { data_version: number }).data_version;
    if (version === lastVersion && caughtUp) return;
    holder.exec('begin');
    try {
      snapshot.get();
      if (!(await fsyncFile(`${path}-wal`))) return;
      const r = copier.pragma('wal_checkpoint(passive)') as CheckpointResult[];
      await fsyncFile(path);
      caughtUp = r[0]!.busy === 0 && r[0]!.checkpointed >= r[0]!.log;
      lastVersion = version;
      cycles++;
    } finally {
      holder.exec('commit');
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = cycle()
        .catch((err: unknown) => {
          if ((err as { code?: string }).code !== 'SQLITE_BUSY') log.warn({ err }, 'background checkpoint failed; SQLite checkpoints on its own meanwhile');
        })
        .finally(schedule);
    }, INTERVAL_MS);
    timer.unref();
  }
  schedule();

  return {
    get cycles() {
      return cycles;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      holder.close();
      copier.close();
    },
  };
}
