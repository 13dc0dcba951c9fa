import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { openDatabase } from '../../src/db/orm.ts';
import { nativeSqlite } from '../../src/db/raw-sql.ts';
import { SAFETY_PAGES, startCheckpointer } from '../../src/db/sqlite-checkpointer.ts';
import { createLogger } from '../../src/logger.ts';

// The daemon's background checkpoints (src/db/sqlite-checkpointer.ts) on a real database file:
// SQLite's own checkpoint is pushed back to SAFETY_PAGES on the daemon's connection, so a WAL that
// stays small through many bursts of writes, and a database file that grows to hold them, show that
// the background cycles copied the pages and that the WAL was started over between bursts.

async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const BURSTS = 12;
const ROWS = 200; // rows of 2 KiB: about 100 pages a burst
const BURST_BYTES = ROWS * 2048;

/** Writes BURSTS bursts, pausing after each (until a background checkpoint, with one); the WAL's largest size. */
async function bursts(t: TestContext, withCheckpointer: boolean): Promise<{ largestWal: number; dbBytes: number; rows: unknown }> {
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-ckpt-'));
  const path = join(dir, 'c.db');
  const db = await openDatabase(`sqlite:${path}`);
  const native = await nativeSqlite(db.em());
  native.exec('create table blob (id integer primary key, body text not null)');
  const checkpointer = withCheckpointer ? startCheckpointer(path, native, createLogger('silent')) : null;
  if (!checkpointer) native.prepare(`pragma wal_autocheckpoint = ${SAFETY_PAGES}`).get();
  t.after(async () => {
    await checkpointer?.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.deepEqual(native.prepare('pragma wal_autocheckpoint').get(), { wal_autocheckpoint: SAFETY_PAGES });
  const body = 'x'.repeat(2048);
  const insert = native.prepare('insert into blob (body) values (?)');
  let largestWal = 0;
  for (let burst = 0; burst < BURSTS; burst++) {
    native.prepare('begin immediate').run();
    for (let i = 0; i < ROWS; i++) insert.run(body);
    native.prepare('commit').run();
    if (checkpointer) {
      const before = checkpointer.cycles;
      await until(() => checkpointer.cycles > before, `a checkpoint after burst ${burst}`);
    } else {
      await new Promise((r) => setTimeout(r, 150));
    }
    largestWal = Math.max(largestWal, statSync(`${path}-wal`).size);
  }
  const reader = new Sqlite(path, { readonly: true });
  const rows = reader.prepare('select count(*) as n from blob').get();
  reader.close();
  return { largestWal, dbBytes: statSync(path).size, rows };
}

test('the WAL is checkpointed in the background and started over between bursts of writes', async (t) => {
  const { largestWal, dbBytes, rows } = await bursts(t, true);
  // SQLite's own checkpoint waits for SAFETY_PAGES: the WAL stays small only through the cycles.
  assert.ok(largestWal < 3 * BURST_BYTES, `WAL grew to ${largestWal} bytes (a burst is ~${BURST_BYTES})`);
  // The pages are in the database file itself, and another connection reads every row.
  assert.ok(dbBytes >= (BURSTS - 1) * BURST_BYTES, `database file ${dbBytes} bytes`);
  assert.deepEqual(rows, { n: BURSTS * ROWS });
});

test('without the background cycles (the control), the same bursts pile up in the WAL', async (t) => {
  const { largestWal, rows } = await bursts(t, false);
  assert.ok(largestWal > (BURSTS - 1) * BURST_BYTES, `WAL ${largestWal} bytes`);
  assert.deepEqual(rows, { n: BURSTS * ROWS });
});

test('stop() lets a running cycle finish, then nothing more is checkpointed', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'chaingate-ckpt-'));
  const path = join(dir, 'c.db');
  const db = await openDatabase(`sqlite:${path}`);
  const native = await nativeSqlite(db.em());
  t.after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  native.exec('create table blob (id integer primary key, body text not null)');
  const checkpointer = startCheckpointer(path, native, createLogger('silent'));
  native.prepare('insert into blob (body) values (?)').run('first');
  await until(() => checkpointer.cycles > 0, 'the first checkpoint');
  await checkpointer.stop();
  const cycles = checkpointer.cycles;
  native.prepare('insert into blob (body) values (?)').run('after stop');
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(checkpointer.cycles, cycles);
});
