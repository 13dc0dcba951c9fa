import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import type { Executor } from '../../src/store/executor.ts';
import { openDatabase, type Database } from '../../src/store/orm.ts';
import { rawQuery } from '../../src/store/raw-sql.ts';
import { inTransaction } from '../../src/store/transaction.ts';

// The store's SQLite writes (src/store/sqlite-writer.ts), on a real database file: Database.write as
// openDatabase makes it, the ORM's own connection beside it, and a separate connection (another
// process would see the same) that only sees what was committed.

interface Setup {
  db: Database;
  /** Rows of table t as a separate connection sees them (committed only). */
  committed(): string[];
}

async function setup(t: TestContext): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-writer-'));
  const path = join(dir, 'g.db');
  const observer = new Sqlite(path);
  observer.exec(`pragma journal_mode = wal;
    create table t (v text primary key);
    create table parent (id integer primary key);
    create table child (id integer primary key, parent_id integer references parent (id) deferrable initially deferred);`);
  const db = await openDatabase(`sqlite:${path}`);
  t.after(async () => {
    observer.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const committed = () => (observer.prepare('select v from t order by v').all() as { v: string }[]).map((r) => r.v);
  return { db, committed };
}

const insert = (v: string) => async (x: Executor) => {
  await x.run('insert into t (v) values (?)', [v]);
  return v;
};

/** Whether a promise has settled by now (after the microtasks already queued). */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 10; i++) await Promise.resolve();
  return done;
}

test('writes of one turn of the event loop commit together, and none is answered before that commit', async (t) => {
  const { db, committed } = await setup(t);
  const a = db.write(insert('a'));
  const b = db.write(insert('b'));
  assert.equal(await settled(a), false, 'no answer before the commit');
  assert.deepEqual(committed(), [], 'nothing is committed within the turn');
  assert.deepEqual(await Promise.all([a, b]), ['a', 'b']);
  assert.deepEqual(committed(), ['a', 'b']);
});

test("the ORM's connection never sees a batch's uncommitted rows", async (t) => {
  const { db, committed } = await setup(t);
  const a = db.write(insert('a'));
  await settled(a);
  const seen = (await rawQuery<{ n: number }>(db.em(), 'sqlite', 'select count(*) as n from t')).rows[0]!.n;
  assert.equal(seen, 0, 'a read on the ORM connection sees only what was committed');
  assert.equal(await a, 'a');
  assert.deepEqual(committed(), ['a']);
});

test('a write that throws is rolled back alone (its savepoint); the others of its batch commit', async (t) => {
  const { db, committed } = await setup(t);
  const a = db.write(insert('a'));
  const failing = db.write(async (x) => {
    await x.run('insert into t (v) values (?)', ['x']);
    throw new Error('refused after writing');
  });
  // A unique violation inside a write (an Idempotency-Key that exists) is rolled back the same way.
  const duplicate = db.write(insert('a'));
  const c = db.write(insert('c'));
  await assert.rejects(failing, /refused after writing/);
  await assert.rejects(duplicate, /UNIQUE/);
  assert.deepEqual(await Promise.all([a, c]), ['a', 'c']);
  assert.deepEqual(committed(), ['a', 'c']);
});

test("a write that throws is answered only after its batch's COMMIT: what its caller reads next includes the batch", async (t) => {
  const { db, committed } = await setup(t);
  const a = db.write(insert('a'));
  // The same key again in the same batch: a unique violation, as an Idempotency-Key's second claim meets.
  const duplicate = db.write(insert('a'));
  assert.equal(await settled(duplicate), false, 'not answered before the commit');
  const seenAfterRefusal = await duplicate.then(
    () => assert.fail('the duplicate must be refused'),
    async (err: unknown) => {
      assert.match(String(err), /UNIQUE/);
      return { committed: committed(), orm: (await rawQuery<{ v: string }>(db.em(), 'sqlite', 'select v from t')).rows.map((r) => r.v) };
    },
  );
  assert.deepEqual(seenAfterRefusal, { committed: ['a'], orm: ['a'] }, "the batch's row is committed and visible when the refusal arrives");
  assert.equal(await a, 'a');
});

test('a failed COMMIT fails every write of the batch and keeps none of them; the next batch commits', async (t) => {
  const { db, committed } = await setup(t);
  const a = db.write(insert('a'));
  // A deferred foreign key is checked at COMMIT: the whole batch's COMMIT fails.
  const orphan = db.write((x) => x.run('insert into child (id, parent_id) values (1, 999)'));
  const results = await Promise.allSettled([a, orphan]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.match(String((results[0] as PromiseRejectedResult).reason), /FOREIGN KEY/);
  assert.deepEqual(committed(), []);
  assert.equal(await db.write(insert('b')), 'b');
  assert.deepEqual(committed(), ['b']);
});

test('an ORM transaction and the writer take turns on the lock: both commit, neither waits in SQLite', async (t) => {
  const { db, committed } = await setup(t);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const orm = inTransaction(db, async (em) => {
    await rawQuery(em, 'sqlite', 'insert into t (v) values (?)', ['orm']);
    await held;
  });
  await new Promise((r) => setTimeout(r, 20));
  const w = db.write(insert('w'));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(await settled(w), false, 'the write waits (between attempts) while the ORM transaction holds the lock');
  release();
  await orm;
  assert.equal(await w, 'w');
  assert.deepEqual(committed(), ['orm', 'w']);
});

test('a batch commits at once when it is full (64 writes), and the rest go in the next', async (t) => {
  const { db, committed } = await setup(t);
  const writes = Array.from({ length: 65 }, (_, i) => db.write(insert(`w${String(i).padStart(2, '0')}`)));
  assert.equal((await Promise.all(writes)).length, 65);
  assert.equal(committed().length, 65);
});

test('a write queued as the previous batch is answered is committed too (no write is left waiting)', async (t) => {
  const { db, committed } = await setup(t);
  for (let i = 0; i < 20; i++) await db.write(insert(`s${String(i).padStart(2, '0')}`));
  assert.equal(committed().length, 20);
});
