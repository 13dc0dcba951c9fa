// The part of better-sqlite3 (MikroORM's SQLite driver, also a direct dependency at the same
// version) that chaingate uses directly: the background checkpointer and the bench's bare server.
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
    constructor(path: string, options?: { fileMustExist?: boolean; timeout?: number; readonly?: boolean });
    pragma(source: string, options?: { simple?: boolean }): unknown;
    prepare(sql: string): Statement;
    exec(sql: string): this;
    transaction<R>(fn: () => R): Transaction<R>;
    close(): this;
    readonly inTransaction: boolean;
    readonly open: boolean;
  }
  export default Database;
}
