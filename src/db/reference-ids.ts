import type { EntityManager } from '@mikro-orm/sql';
import { formatReferenceId, referenceDay, type ReferenceKind } from '../domain/reference-id.ts';
import type { Dialect } from './orm.ts';
import { rawQuery, type NativeSqlite } from './raw-sql.ts';

/** One atomic upsert of the day's counter, so concurrent writers never share a number. */
export const COUNTER_SQL = 'insert into reference_counter (id, value) values (?, 1) on conflict (id) do update set value = reference_counter.value + 1 returning value';

/** Next referenceId of the day through the unit of work's connection (em.execute). */
export async function nextReferenceId(em: EntityManager, kind: ReferenceKind, now = new Date()): Promise<string> {
  const day = referenceDay(now);
  const rows = await em.execute<{ value: number | string }[]>(COUNTER_SQL, [`${kind}-${day}`]);
  return formatReferenceId(kind, day, Number(rows[0]!.value));
}

/** nextReferenceId with a bound parameter, in the em's transaction (src/db/raw-sql.ts). */
export async function nextReferenceIn(em: EntityManager, dialect: Dialect, kind: ReferenceKind, now = new Date()): Promise<string> {
  const day = referenceDay(now);
  const { rows } = await rawQuery<{ value: number | string }>(em, dialect, COUNTER_SQL, [`${kind}-${day}`]);
  return formatReferenceId(kind, day, Number(rows[0]!.value));
}

/** nextReferenceId on a synchronous SQLite handle, inside syncSqliteTransaction. */
export function nextReferenceSync(native: NativeSqlite, kind: ReferenceKind, now = new Date()): string {
  const day = referenceDay(now);
  const { value } = native.prepare(COUNTER_SQL).get(`${kind}-${day}`) as { value: number };
  return formatReferenceId(kind, day, Number(value));
}
