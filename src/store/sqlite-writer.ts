import { createRequire } from 'node:module';
import { type Executor, type SqliteStatements, sqliteExecutor } from './executor.ts';
import { cachePrepared } from './statement-cache.ts';

// The daemon's SQLite writes, committed in groups on a connection of their own. SQLite's commit in
// WAL mode with synchronous FULL costs an fsync, and most of a write's pages (the tables' last
// leaves, the indexes on increasing keys, the day's reference counter) are the same for the next
// write; so the writes that arrive together share one transaction, each in its own savepoint, and
// one COMMIT once the event loop has handed over what it had (setImmediate). Nobody can tell:
// - nothing is answered before the COMMIT that holds it returns, so a crash leaves each write
//   absent or committed, as with a transaction of its own;
// - a write whose work throws is rolled back to its savepoint alone; the others commit; its error
//   too is delivered only after the COMMIT, so what its caller reads next includes the batch (an
//   Idempotency-Key claim that met a key claimed earlier in the same batch then finds that key
//   completed and replays it, as on PostgreSQL, where the unique index waits for the commit);
// - an error that makes SQLite roll back the whole transaction (a full disk, an I/O error), or a
//   failed COMMIT, fails every write of the batch, none of them answered;
// - the batch is on its own connection, so the daemon's reads and its other transactions (on the
//   ORM's connection) never see or join uncommitted rows; they meet the batch only as a lock,
//   which they wait for like any other writer's (src/store/transaction.ts).
// Writes run one after another: a write's work awaits only its executor, so it never holds the
// batch open while waiting on anything else.

/** Writes committed together at most (then the batch commits at once). */
const MAX_BATCH = 64;
const STATEMENT_CACHE_SIZE = 100;

interface Unit {
  fn(x: Executor): Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Connection extends SqliteStatements {
  readonly inTransaction: boolean;
  pragma(text: string): unknown;
  close(): void;
}

const require = createRequire(import.meta.url);

export class SqliteWriter {
  private readonly queue: Unit[] = [];
  private draining: Promise<void> | null = null;
  private readonly conn: Connection;
  private readonly x: Executor;
  private readonly prepare: (sql: string) => ReturnType<SqliteStatements['prepare']>;

  /** `connection`: a connection of its own to the database file (the ORM's only for `:memory:`). */
  constructor(connection: Connection, private readonly ownsConnection: boolean) {
    this.conn = connection;
    this.prepare = cachePrepared((sql) => connection.prepare(sql), STATEMENT_CACHE_SIZE);
    this.x = sqliteExecutor({ prepare: this.prepare });
  }

  /** Opens the writer's own connection to `path` with the daemon's pragmas; it never sleeps on a lock. */
  static open(path: string, pragmas: readonly string[]): SqliteWriter {
    const Database = require('better-sqlite3') as new (file: string) => Connection;
    const conn = new Database(path);
    for (const pragma of pragmas) conn.pragma(pragma);
    conn.pragma('busy_timeout = 0');
    return new SqliteWriter(conn, true);
  }

  /** Runs `fn` in the current batch; settles once the batch has committed (or failed). */
  write<T>(fn: (x: Executor) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.kick();
    });
  }

  /** Starts draining unless it runs; a write queued while the last drain was ending starts the next. */
  private kick(): void {
    if (this.draining !== null || this.queue.length === 0) return;
    this.draining = this.drain().finally(() => {
      this.draining = null;
      this.kick();
    });
  }

  async close(): Promise<void> {
    await this.draining;
    if (this.ownsConnection) this.conn.close();
  }

  private exec(sql: string): void {
    this.prepare(sql).run();
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      try {
        this.exec('begin immediate');
      } catch (err) {
        // Another connection holds the write lock: every waiting write fails with the lock conflict
        // and is tried again by its caller after a pause (retryOnLockConflict).
        for (const unit of this.queue.splice(0)) unit.reject(err);
        return;
      }
      await this.batch();
    }
  }

  private async batch(): Promise<void> {
    const done: { unit: Unit; out: unknown }[] = [];
    const failed: { unit: Unit; err: unknown }[] = [];
    const settleFailed = () => {
      for (const f of failed) f.unit.reject(f.err);
    };
    for (let count = 0; count < MAX_BATCH; ) {
      const unit = this.queue.shift();
      if (unit === undefined) {
        // Let the writes of this turn of the event loop join before the commit.
        await new Promise((r) => setImmediate(r));
        if (this.queue.length === 0) break;
        continue;
      }
      count++;
      this.exec('savepoint cg_write');
      try {
        const out = await unit.fn(this.x);
        this.exec('release cg_write');
        done.push({ unit, out });
      } catch (err) {
        failed.push({ unit, err });
        if (!this.rollBackTo()) {
          settleFailed();
          for (const d of done) d.unit.reject(err);
          return;
        }
      }
    }
    try {
      this.exec('commit');
    } catch (err) {
      if (this.conn.inTransaction) this.exec('rollback');
      settleFailed();
      for (const d of done) d.unit.reject(err);
      return;
    }
    settleFailed();
    for (const d of done) d.unit.resolve(d.out);
  }

  /** Undoes one write's work; false when the whole transaction is gone (SQLite rolled it back, or it cannot be trusted). */
  private rollBackTo(): boolean {
    try {
      if (!this.conn.inTransaction) return false;
      this.exec('rollback to cg_write');
      this.exec('release cg_write');
      return true;
    } catch {
      if (this.conn.inTransaction) this.exec('rollback');
      return false;
    }
  }
}
