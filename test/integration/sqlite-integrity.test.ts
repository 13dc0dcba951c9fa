import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Sqlite from 'better-sqlite3';
import { BIN } from '../helpers/cli.ts';
import { trackChild } from '../helpers/children.ts';
import { spawnServe, type ServeProcess } from '../helpers/serve-process.ts';
import { createInvoice, newShop, type Shop } from '../helpers/serve-shop.ts';

// The embedded database under an operator's everyday tools (issue 27): an `sqlite3` shell, a
// `.backup`, a held write lock, a kill -9. Real `serve` processes on real files; the sqlite3 and
// strace binaries are Debian's (.ci/run installs them).

interface IntegrityShop extends Shop {
  /** The database file and the folder it is in (backups go beside it). */
  path: string;
  dir: string;
}

async function newSqliteShop(): Promise<IntegrityShop> {
  const shop = await newShop('sqlite', 'Integrity Shop');
  const path = shop.url.slice('sqlite:'.length);
  return { ...shop, path, dir: dirname(path) };
}

function sqlite3(path: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('sqlite3', [path, command], { timeout: 60_000 }, (err, stdout, stderr) => (err ? reject(new Error(`sqlite3 ${command}: ${stderr || err.message}`)) : resolve(stdout)));
  });
}

/** Files of the database that `pid` holds open although they were deleted (the lost-WAL symptom). */
function deletedDatabaseFiles(pid: number, path: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    if (target.startsWith(path) && target.endsWith('(deleted)')) out.push(target);
  }
  return out;
}

test('no source file opens a file descriptor of its own (closing one would drop SQLite’s locks on it)', () => {
  const src = new URL('../../src/', import.meta.url);
  const offending = (readdirSync(src, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .filter((f) => /\b(openSync|fs\.open|fsyncSync|fdatasync)\b|from 'node:fs\/promises'|['"`]-(wal|shm)['"`]/.test(readFileSync(new URL(f, src), 'utf8')));
  assert.deepEqual(offending, []);
});

describe('the SQLite database under operators’ tools', () => {
  test('an sqlite3 read and a .backup during a 16-connection load, then kill -9, 10 times: every 201 kept, integrity ok, WAL never deleted', async (t) => {
    const shop = await newSqliteShop();
    t.after(() => shop.drop());
    const answered = new Set<string>();
    for (let round = 0; round < 10; round++) {
      const serve = await spawnServe(shop.env);
      let alive = true;
      const workers = Array.from({ length: 16 }, async () => {
        while (alive) {
          const orderId = randomUUID();
          try {
            const res = await createInvoice(serve.url, shop.creds, orderId);
            if (res.status === 201) answered.add(orderId);
            else assert.fail(`creation answered ${res.status}: ${await res.text()}`);
          } catch (err) {
            if (alive) throw err;
            return; // the connection died with the process
          }
        }
      });
      await new Promise((r) => setTimeout(r, 200));
      await sqlite3(shop.path, 'select count(*) from invoice');
      await sqlite3(shop.path, `.backup '${join(shop.dir, `backup-${round}.db`)}'`);
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(deletedDatabaseFiles(serve.child.pid!, shop.path), [], `round ${round}: serve lost its WAL or SHM`);
      alive = false;
      await serve.stop('SIGKILL');
      await Promise.all(workers);
      assert.equal((await sqlite3(join(shop.dir, `backup-${round}.db`), 'pragma integrity_check')).trim(), 'ok', `round ${round}: the backup`);

      const db = new Sqlite(shop.path, { readonly: true });
      try {
        assert.equal((db.prepare('pragma integrity_check').get() as { integrity_check: string }).integrity_check, 'ok', `round ${round}`);
        const stored = new Set((db.prepare('select order_id from invoice').all() as { order_id: string }[]).map((r) => r.order_id));
        const lost = [...answered].filter((o) => !stored.has(o));
        assert.deepEqual(lost, [], `round ${round}: ${lost.length} invoices answered 201 are gone`);
      } finally {
        db.close();
      }
    }
    assert.ok(answered.size > 100, `the load was served (${answered.size} creations)`);
  });

  test('a write lock held by another process past the 5 s lock wait: /healthz answers within 1 s, writes get 201 or 503 DATABASE_BUSY, every 201 readable after', async (t) => {
    const shop = await newSqliteShop();
    t.after(() => shop.drop());
    const serve = await spawnServe(shop.env);
    t.after(() => serve.stop());
    assert.equal((await createInvoice(serve.url, shop.creds, randomUUID())).status, 201);

    // The lock holder: an sqlite3 shell inside BEGIN IMMEDIATE until told to commit.
    const holder = spawn('sqlite3', [shop.path], { stdio: ['pipe', 'pipe', 'inherit'] });
    trackChild(holder);
    let said = '';
    holder.stdout.on('data', (b: Buffer) => (said += b.toString()));
    holder.stdin.write("begin immediate;\nselect 'locked';\n");
    while (!said.includes('locked')) await new Promise((r) => setTimeout(r, 20));
    const lockedAt = Date.now();

    const created: string[] = [];
    const refused: { status: number; code: string; retryAfter: string | null }[] = [];
    let holding = true;
    const writers = Array.from({ length: 4 }, async () => {
      while (holding) {
        const orderId = randomUUID();
        const res = await createInvoice(serve.url, shop.creds, orderId);
        const body = (await res.json()) as { error?: { code: string } };
        if (res.status === 201) created.push(orderId);
        else refused.push({ status: res.status, code: body.error?.code ?? '', retryAfter: res.headers.get('retry-after') });
      }
    });
    const health: number[] = [];
    // Held until every writer has waited out the lock wait (LOCK_WAIT_MS, 5 s) and been refused, and
    // /healthz has been asked 40 times meanwhile; at most 20 s.
    while ((refused.length < writers.length || health.length < 40) && Date.now() - lockedAt < 20_000) {
      const started = Date.now();
      const res = await fetch(`${serve.url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      assert.equal(res.status, 200);
      health.push(Date.now() - started);
      await new Promise((r) => setTimeout(r, 100));
    }
    holder.stdin.end('commit;\n');
    holding = false;
    await Promise.all(writers);
    await new Promise<void>((resolve) => (holder.exitCode !== null ? resolve() : holder.once('exit', () => resolve())));

    assert.ok(health.length >= 40, `polled /healthz ${health.length} times`);
    assert.ok(Math.max(...health) < 1000, `the slowest /healthz took ${Math.max(...health)} ms`);
    assert.ok(refused.length > 0, 'writes met the held lock');
    for (const r of refused) assert.deepEqual(r, { status: 503, code: 'DATABASE_BUSY', retryAfter: '1' });

    // After the release: new writes succeed and every 201 is there.
    for (let i = 0; i < 3; i++) {
      const orderId = randomUUID();
      assert.equal((await createInvoice(serve.url, shop.creds, orderId)).status, 201);
      created.push(orderId);
    }
    const db = new Sqlite(shop.path, { readonly: true });
    t.after(() => db.close());
    const stored = new Set((db.prepare('select order_id from invoice').all() as { order_id: string }[]).map((r) => r.order_id));
    assert.deepEqual(created.filter((o) => !stored.has(o)), []);
  });

  test('every acknowledged creation was synced to disk first (strace counts the WAL syncs)', async (t) => {
    const shop = await newSqliteShop();
    t.after(() => shop.drop());
    const trace = join(shop.dir, 'strace.txt');
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('CHAINGATE_')) base[k] = v;
    const child = spawn('strace', ['-f', '-y', '-qq', '-e', 'trace=fsync,fdatasync', '-o', trace, process.execPath, BIN, 'serve'], {
      env: { ...base, CHAINGATE_PORT: '0', CHAINGATE_METRICS_PORT: '0', CHAINGATE_LOG_LEVEL: 'warn', ...shop.env },
      stdio: ['ignore', 'pipe', 'ignore'],
      detached: true, // its own process group: strace and the serve it traces are killed together
    });
    trackChild(child);
    t.after(() => process.kill(-child.pid!, 'SIGKILL'));
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /\{"listening":"([^"]+)"\}/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`serve under strace exited ${code}: ${out}`)));
    });
    const walSyncs = () => readFileSync(trace, 'utf8').split('\n').filter((l) => l.includes(`${shop.path}-wal>`) && /= 0$/.test(l)).length;
    const before = walSyncs();
    const N = 20;
    for (let i = 0; i < N; i++) assert.equal((await createInvoice(url, shop.creds, randomUUID())).status, 201);
    const after = walSyncs();
    assert.ok(after - before >= N, `${N} acknowledged creations, ${after - before} syncs of the WAL`);
  });

  test('the database, its WAL and its SHM are created private (0600)', async (t) => {
    const shop = await newSqliteShop();
    t.after(() => shop.drop());
    const serve: ServeProcess = await spawnServe(shop.env);
    t.after(() => serve.stop());
    assert.equal((await createInvoice(serve.url, shop.creds, randomUUID())).status, 201);
    for (const file of [shop.path, `${shop.path}-wal`, `${shop.path}-shm`]) {
      assert.ok(existsSync(file), file);
      assert.equal((statSync(file).mode & 0o777).toString(8), '600', file);
    }
  });
});
