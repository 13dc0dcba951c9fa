import type { EntityManager } from '@mikro-orm/sql';
import { formatReferenceId, referenceDay, type ReferenceKind } from '../domain/reference-id.ts';

/** Next referenceId of the day: one atomic upsert, so concurrent writers never share a number. */
export async function nextReferenceId(em: EntityManager, kind: ReferenceKind, now = new Date()): Promise<string> {
  const day = referenceDay(now);
  const rows = await em.execute<{ value: number | string }[]>(
    'insert into reference_counter (id, value) values (?, 1) on conflict (id) do update set value = reference_counter.value + 1 returning value',
    [`${kind}-${day}`],
  );
  return formatReferenceId(kind, day, Number(rows[0]!.value));
}
