import type { EntityManager } from '@mikro-orm/sql';

/** A synchronous better-sqlite3 handle (MikroORM's SQLite driver). */
export interface NativeSqlite {
  prepare(sql: string): { run(...params: unknown[]): { changes: number }; get(...params: unknown[]): unknown; all(...params: unknown[]): unknown[] };
  readonly inTransaction: boolean;
  exec(sql: string): unknown;
}

const natives = new WeakMap<object, NativeSqlite>();

/** The handle of a connection whose handle was asked for before, or undefined. */
export function cachedNativeSqlite(connection: object): NativeSqlite | undefined {
  return natives.get(connection);
}

/** The better-sqlite3 handle behind a SQLite EntityManager (cached). */
export async function nativeSqlite(em: EntityManager): Promise<NativeSqlite> {
  const conn = em.getConnection() as unknown as { getNativeClient(): Promise<NativeSqlite> };
  let native = natives.get(conn);
  if (!native) {
    native = await conn.getNativeClient();
    natives.set(conn, native);
  }
  return native;
}
