import { resolve } from 'node:path';

// What a database URL says, read without opening anything: which engine, where an SQLite file
// lives, and the URL as it may be shown (no password).

export type Dialect = 'sqlite' | 'postgresql';

export function dialectOf(url: string): Dialect {
  if (url.startsWith('sqlite:')) return 'sqlite';
  if (/^postgres(ql)?:\/\//.test(url)) return 'postgresql';
  throw new Error(`unsupported database URL ${redactUrl(url)} (use sqlite:<path> or postgres://…)`);
}

export function sqlitePath(url: string): string {
  const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
  return path === ':memory:' ? path : resolve(path);
}

export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}
