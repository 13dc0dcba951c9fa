import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { openDatabase, type Database } from '../../src/db/orm.ts';
import { nativeSqlite, type NativeSqlite } from '../../src/db/native-sqlite.ts';
import { rawQuery } from '../../src/db/raw-sql.ts';
import { groupedSqliteTransaction } from '../../src/db/sqlite-group-commit.ts';
import { inTransaction } from '../../src/db/transaction.ts';

// Group commit on SQLite (src/db/sqlite-group-commit.ts), on a real database file: the daemon's
// connection as openDatabase makes it, and a second connection (another process would see the
// same) that only sees what was committed.

interface Setup {
  db: Database;
  native: NativeSqlite;
  /** Rows of table t as a separate connection sees them (committed only). */
  committed(): string[];
}

async function setup(t: TestContext): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-group-'));
  const path = join(dir, 'g.db');
  const db = await openDatabase(`sqlite:${path}`);
  const native = await nativeSqlite(db.em());
  native.exec(`create table t (v text primary key);
    create table parent (id integer primary key);
    create table child (id integer primary key, parent_id integer references parent (id) deferrable initially deferred);`);
  const observer = new Sqlite(path);
  t.after(async () => {
    observer.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const committed = () => (observer.prepare('select v from t order by v').all() as { v: string }[]).map((r) => r.v);
  return { db, native, committed };
}

const insert = (native: NativeSqlite, v: string) => () => {
  native.prepare('insert into t (v) values (?)').run(v);
  return v;
};

/** Whether a promise has settled by now (after the microtasks already queued). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

test('writes of one turn of the event loop commit together, and none is answered before that commit', async (t) => {
  const { native, committed } = await setup(t);
  const a = groupedSqliteTransaction(native, insert(native, 'a'))!;
  const b = groupedSqliteTransaction(native, insert(native, 'b'))!;
  assert.ok(a instanceof Promise && b instanceof Promise);
  assert.equal(native.inTransaction, true);
  assert.deepEqual(committed(), [], 'nothing is committed within the turn');
  assert.equal(await settled(a), false, 'no answer before the commit');
  assert.deepEqual(await Promise.all([a, b]), ['a', 'b']);
  assert.deepEqual(committed(), ['a', 'b']);
  assert.equal(native.inTransaction, false);
});

test('a write that throws is rolled back alone (its savepoint); the others of its batch commit', async (t) => {
  const { native, committed } = await setup(t);
  const a = groupedSqliteTransaction(native, insert(native, 'a'))!;
  assert.throws(
    () =>
      groupedSqliteTransaction(native, () => {
        native.prepare('insert into t (v) values (?)').run('x');
        throw new Error('refused after writing');
      }),
    /refused after writing/,
  );
  // A unique violation inside a write (an Idempotency-Key that exists) is rolled back the same way.
  assert.throws(() => groupedSqliteTransaction(native, insert(native, 'a')), /UNIQUE/);
  const c = groupedSqliteTransaction(native, insert(native, 'c'))!;
  assert.deepEqual(await Promise.all([a, c]), ['a', 'c']);
  assert.deepEqual(committed(), ['a', 'c']);
});

test('a failed COMMIT fails every write of the batch and keeps none of them', async (t) => {
  const { native, committed } = await setup(t);
  native.prepare('pragma foreign_keys = on').run();
  const a = groupedSqliteTransaction(native, insert(native, 'a'))!;
  // A deferred foreign key is checked at COMMIT: the whole batch's COMMIT fails.
  const orphan = groupedSqliteTransaction(native, () => native.prepare('insert into child (id, parent_id) values (1, 999)').run())!;
  const results = await Promise.allSettled([a, orphan]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.match(String((results[0] as PromiseRejectedResult).reason), /FOREIGN KEY/);
  assert.deepEqual(committed(), []);
  assert.equal(native.inTransaction, false);
  // The connection is usable again, and the next batch commits.
  assert.equal(await groupedSqliteTransaction(native, insert(native, 'b')), 'b');
  assert.deepEqual(committed(), ['b']);
});

test('anything else on the connection runs after the open batch has committed, never inside it', async (t) => {
  const { db, native, committed } = await setup(t);
  // A read through the native handle (the buyer's synchronous reads take this path).
  const a = groupedSqliteTransaction(native, insert(native, 'a'))!;
  assert.deepEqual(committed(), []);
  assert.deepEqual(native.prepare('select count(*) as n from t').get(), { n: 1 });
  assert.deepEqual(committed(), ['a'], 'committed before the other statement ran');
  assert.equal(await a, 'a');
  // An ORM transaction begun while a batch is open (the ORM's BEGIN goes through the same handle).
  const b = groupedSqliteTransaction(native, insert(native, 'b'))!;
  const n = await inTransaction(db, async (em) => {
    await rawQuery(em, 'sqlite', 'insert into t (v) values (?)', ['orm']);
    return (await rawQuery<{ n: number }>(em, 'sqlite', 'select count(*) as n from t')).rows[0]!.n;
  });
  assert.equal(n, 3);
  assert.equal(await b, 'b');
  assert.deepEqual(committed(), ['a', 'b', 'orm']);
});

test('while an ORM transaction holds the connection, a grouped write declines (the caller goes the asynchronous way)', async (t) => {
  const { db, native, committed } = await setup(t);
  await inTransaction(db, async (em) => {
    await rawQuery(em, 'sqlite', 'insert into t (v) values (?)', ['orm']);
    assert.equal(
      groupedSqliteTransaction(native, insert(native, 'never')),
      undefined,
    );
  });
  assert.deepEqual(committed(), ['orm']);
});

test('a batch commits at once when it is full (64 writes), and the next write opens another', async (t) => {
  const { native, committed } = await setup(t);
  const writes = Array.from({ length: 65 }, (_, i) => groupedSqliteTransaction(native, insert(native, `w${String(i).padStart(2, '0')}`))!);
  assert.equal(committed().length, 64, 'the first 64 committed when the 64th joined');
  assert.equal(native.inTransaction, true, 'the 65th is in a batch of its own');
  assert.equal((await Promise.all(writes)).length, 65);
  assert.equal(committed().length, 65);
});
