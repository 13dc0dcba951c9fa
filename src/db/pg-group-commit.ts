import { newTimeOrderedId } from '../domain/ids.ts';
import { claimAndInsertPg, KeyTakenError, StaleMerchantError, type ClaimInput, type InsertAfterClaim } from './idempotency.ts';
import type { Database } from './orm.ts';
import { pgStatement, type SqlValue } from './raw-sql.ts';

// Group commit for PostgreSQL's signed writes (claimAndInsertPg). One write is one statement, and a
// statement costs PostgreSQL far more than its rows: a wake-up, parse and bind, executor start-up,
// its own commit and WAL flush. So the writes that wait
// while the batch statement before them runs leave together, as one statement over their rows (one
// JSON parameter read by json_to_recordset): each row claims its key `on conflict do nothing`, the work's rows are inserted only for the claims that
// were made, and one row per write says what became of it. One statement is one transaction.
//
// What each request sees is what claimAndInsertPg gives it alone:
// - nothing is answered before the statement (and so its commit) returns;
// - a key that exists (in the table or earlier in the same batch) writes nothing for that request:
//   KeyTakenError, and the caller replays the key; a merchant point that changed: StaleMerchantError;
// - the claims are inserted in (merchant, key) order, so two batches never wait on each other in
//   opposite orders; and if the batch statement fails at all (a deadlock nonetheless, a constraint),
//   none of it was written and each write runs again alone, so one bad row fails only itself.

/** Writes in one statement at most. */
const MAX_BATCH = 64;
/**
 * Batch statements running at once (of the pool's ten connections); the rest wait and grow the next
 * batch (one measured best of 1, 2, 4 and 8).
 */
const MAX_IN_FLIGHT = 1;

interface Pending {
  input: ClaimInput;
  statusCode: number;
  body: string;
  insert: InsertAfterClaim;
  now: Date;
  resolve(): void;
  reject(err: unknown): void;
}

interface Queue {
  waiting: Pending[];
  inFlight: number;
  scheduled: boolean;
}

const queues = new WeakMap<object, Map<string, Queue>>();

/** claimAndInsertPg, committed with the other writes of the same insert that wait for the running batch. */
export function claimAndInsertPgGrouped(db: Database, input: ClaimInput, statusCode: number, body: string, insert: InsertAfterClaim, now = new Date()): Promise<void> {
  if (!insert.types) return claimAndInsertPg(db, input, statusCode, body, insert, now);
  let byInsert = queues.get(db.orm);
  if (!byInsert) queues.set(db.orm, (byInsert = new Map()));
  let queue = byInsert.get(insert.sql);
  if (!queue) byInsert.set(insert.sql, (queue = { waiting: [], inFlight: 0, scheduled: false }));
  const q = queue;
  return new Promise<void>((resolve, reject) => {
    q.waiting.push({ input, statusCode, body, insert, now, resolve, reject });
    if (!q.scheduled) {
      // The writes of this turn of the event loop join before the first batch leaves.
      q.scheduled = true;
      setImmediate(() => {
        q.scheduled = false;
        drain(db, q);
      });
    }
  });
}

function drain(db: Database, q: Queue): void {
  while (q.waiting.length > 0 && q.inFlight < MAX_IN_FLIGHT) {
    const batch = q.waiting.splice(0, MAX_BATCH);
    q.inFlight++;
    void runBatch(db, batch).finally(() => {
      q.inFlight--;
      drain(db, q);
    });
  }
}

async function runBatch(db: Database, batch: Pending[]): Promise<void> {
  if (batch.length === 1) return settleAlone(db, batch[0]!);
  let rows: { n: number; written: boolean; fresh: boolean }[];
  try {
    const { sql, params } = batchStatement(batch);
    rows = (await pgStatement(db, sql, params)).rows as typeof rows;
  } catch {
    // Nothing of the batch was written (one statement): each write again on its own.
    await Promise.all(batch.map((p) => settleAlone(db, p)));
    return;
  }
  for (const row of rows) {
    const p = batch[row.n - 1]!;
    if (row.written) p.resolve();
    else if (!row.fresh) p.reject(new StaleMerchantError('merchant point changed since it was cached'));
    else p.reject(new KeyTakenError('Idempotency-Key exists'));
  }
}

async function settleAlone(db: Database, p: Pending): Promise<void> {
  try {
    await claimAndInsertPg(db, p.input, p.statusCode, p.body, p.insert, p.now);
    p.resolve();
  } catch (err) {
    p.reject(err);
  }
}

const CLAIM_COLUMNS = [
  ['claim_id', 'varchar'],
  ['merchant_id', 'varchar'],
  ['key', 'varchar'],
  ['fingerprint', 'varchar'],
  ['status_code', 'int'],
  ['response_body', 'text'],
  ['created_at', 'timestamptz'],
  ['expires_at', 'timestamptz'],
  ['merchant_version', 'int'],
] as const;

const statements = new Map<string, string>();

/** The type of a column of the batch's rows as json_to_recordset reads them (jsonb arrives as its text). */
const recordType = (t: string): string => (t === 'jsonb' ? 'text' : t);

/** The batch form of an insert after the claim: its `?`s read the write's own row of `input`. */
function batchSql(insert: InsertAfterClaim, types: readonly string[]): string {
  const cached = statements.get(insert.sql);
  if (cached) return cached;
  let k = 0;
  const write = insert.sql
    .replace(/\?/g, () => {
      k++;
      return types[k - 1] === 'jsonb' ? `input.v${k}::jsonb` : `input.v${k}`;
    })
    .replace(/from claim\s*$/, 'from input join claim on claim.id = input.claim_id');
  if (k !== types.length || !write.endsWith('claim.id = input.claim_id')) throw new Error('insert after claim: one type per parameter, rows `from claim`');
  const columns = [...CLAIM_COLUMNS, ...types.map((t, i) => [`v${i + 1}`, recordType(t)] as const), ['n', 'int'] as const];
  const fresh = 'exists (select 1 from merchant_point m where m.id = input.merchant_id and m.version = input.merchant_version and m.active = true)';
  const sql = `with input as (select * from json_to_recordset(?::json) as t(${columns.map(([c, t]) => `${c} ${t}`).join(', ')})),
    claim as (insert into idempotency_record (id, merchant_id, key, fingerprint, state, status_code, response_body, created_at, expires_at)
      select claim_id, merchant_id, key, fingerprint, 'COMPLETED', status_code, response_body, created_at, expires_at from input
      where ${fresh} order by merchant_id, key
      on conflict (merchant_id, key) do nothing returning id),
    written as (${write} returning 1)
    select input.n, exists (select 1 from claim where claim.id = input.claim_id) as written, ${fresh} as fresh from input order by input.n`;
  statements.set(insert.sql, sql);
  return sql;
}

/** The batch as one JSON parameter (one native JSON.stringify; dates as ISO 8601). */
function batchStatement(batch: Pending[]): { sql: string; params: SqlValue[] } {
  const first = batch[0]!.insert;
  const rows = batch.map((p, i) => {
    const { input, now } = p;
    const row: Record<string, SqlValue> = {
      claim_id: newTimeOrderedId(now.getTime()),
      merchant_id: input.merchantId,
      key: input.key,
      fingerprint: input.fingerprint,
      status_code: p.statusCode,
      response_body: p.body,
      created_at: now,
      expires_at: new Date(now.getTime() + input.ttlMs),
      merchant_version: input.merchantVersion,
      n: i + 1,
    };
    for (const [c, v] of p.insert.params.entries()) row[`v${c + 1}`] = v;
    return row;
  });
  return { sql: batchSql(first, first.types!), params: [JSON.stringify(rows)] };
}
