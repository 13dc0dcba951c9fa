// The part of better-sqlite3 (MikroORM's SQLite driver) that bench/bare-server.ts uses.
declare module 'better-sqlite3' {
  interface Statement {
    run(...params: unknown[]): { changes: number };
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  }
  interface Transaction<R> {
    (): R;
    immediate(): R;
  }
  class Database {
    constructor(path: string);
    pragma(source: string): unknown;
    prepare(sql: string): Statement;
    transaction<R>(fn: () => R): Transaction<R>;
    readonly inTransaction: boolean;
  }
  export default Database;
}
