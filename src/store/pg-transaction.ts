import { createHash } from 'node:crypto';
import type { Executor, SqlValue } from './executor.ts';

// One write transaction on PostgreSQL, straight on MikroORM's own pg pool (the same connections, the
// same lock_timeout): BEGIN, the work's statements as named prepared statements (parsed and planned
// once per connection), COMMIT. No query builder in between.

interface PgClient {
  query(q: string | { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[]; rowCount: number | null }>;
  release(err?: Error | boolean): void;
}

export interface PgPool {
  connect(): Promise<PgClient>;
}

const texts = new Map<string, { name: string; text: string }>();

/** `?` placeholders become `$1…` (the store's statements never hold a literal `?`), named by the text's hash. */
function statement(sql: string): { name: string; text: string } {
  let s = texts.get(sql);
  if (s === undefined) {
    let n = 0;
    s = { name: `cgw_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`, text: sql.replace(/\?/g, () => `$${++n}`) };
    if (texts.size < 1000) texts.set(sql, s);
  }
  return s;
}

function pgExecutor(client: PgClient): Executor {
  const query = (sql: string, params: SqlValue[]) => client.query({ ...statement(sql), values: params });
  return {
    dialect: 'postgresql',
    run: async (sql, params = []) => (await query(sql, params)).rowCount ?? 0,
    get: async <R>(sql: string, params: SqlValue[] = []) => (await query(sql, params)).rows[0] as R | undefined,
    all: async <R>(sql: string, params: SqlValue[] = []) => (await query(sql, params)).rows as R[],
  };
}

/** Runs `fn` in one transaction on a pooled connection: committed, or rolled back and rethrown. */
export async function pgTransaction<T>(pool: PgPool, fn: (x: Executor) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('begin');
    try {
      const out = await fn(pgExecutor(client));
      await client.query('commit');
      return out;
    } catch (err) {
      await client.query('rollback').catch((e: Error) => {
        broken = e; // the connection is unusable: the pool drops it
      });
      throw err;
    }
  } finally {
    client.release(broken);
  }
}
