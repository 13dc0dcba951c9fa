// Prepared statements kept by SQL text, for the SQLite connection (src/store/orm.ts).

/**
 * `prepare` with the last `size` statements kept by text. Kept by second chance (CLOCK) rather than
 * strict recency: a hit only marks its statement used (moving it to the recent end took a Map delete
 * and set for every statement of every request); a statement at
 * the old end that was used since it got there goes round again instead of being dropped.
 */
export function cachePrepared<S>(prepare: (sql: string) => S, size: number): (sql: string) => S {
  const cache = new Map<string, { stmt: S; used: boolean }>();
  return (sql) => {
    const hit = cache.get(sql);
    if (hit !== undefined) {
      hit.used = true;
      return hit.stmt;
    }
    const stmt = prepare(sql);
    while (cache.size >= size) {
      const [oldest, entry] = cache.entries().next().value!;
      cache.delete(oldest);
      if (entry.used) {
        entry.used = false;
        cache.set(oldest, entry);
      }
    }
    cache.set(sql, { stmt, used: false });
    return stmt;
  };
}
