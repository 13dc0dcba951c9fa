import type { EntityManager } from '@mikro-orm/sql';
import { formatReferenceId, referenceDay, type ReferenceKind } from '../domain/reference-id.ts';
import type { Database, Dialect } from './orm.ts';
import type { NativeSqlite } from './native-sqlite.ts';
import { rawQuery } from './raw-sql.ts';

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

/** nextReferenceId on a synchronous SQLite handle, inside groupedSqliteTransaction. */
export function nextReferenceSync(native: NativeSqlite, kind: ReferenceKind, now = new Date()): string {
  const day = referenceDay(now);
  const { value } = native.prepare(COUNTER_SQL).get(`${kind}-${day}`) as { value: number };
  return formatReferenceId(kind, day, Number(value));
}


/** Numbers a process takes from the day's counter at once on PostgreSQL. */
export const REFERENCE_BLOCK = 16;

interface Block {
  next: number;
  end: number;
}

/**
 * The day's reference numbers on PostgreSQL, taken in blocks (docs/performance.md): one short
 * statement of its own, committed at once, reserves REFERENCE_BLOCK numbers for this process, which
 * hands them out in memory. In the creation's transaction the counter row was the one lock every
 * creation of the day waited for, from the upsert to the commit; now a creation holds no shared row.
 * Numbers stay unique (a block belongs to one process) and of the creation's UTC day; what changes
 * is that they may skip (a block left unused at exit, a number whose creation rolled back) and that
 * two daemons interleave blocks. Concurrent takers share one reservation.
 */
export class ReferenceBlocks {
  private readonly blocks = new Map<string, Block>();
  private readonly pending = new Map<string, Promise<void>>();

  constructor(private readonly db: Database) {}

  async next(kind: ReferenceKind, now: Date): Promise<string> {
    const day = referenceDay(now);
    const key = `${kind}-${day}`;
    for (;;) {
      const block = this.blocks.get(key);
      if (block && block.next <= block.end) return formatReferenceId(kind, day, block.next++);
      let reserving = this.pending.get(key);
      if (!reserving) {
        reserving = this.reserve(key).finally(() => this.pending.delete(key));
        this.pending.set(key, reserving);
      }
      await reserving;
    }
  }

  private async reserve(key: string): Promise<void> {
    // Outside any transaction, on a connection of its own: committed before a creation uses it.
    const { rows } = await rawQuery<{ value: number | string }>(this.db.em(), this.db.dialect, BLOCK_SQL, [key, REFERENCE_BLOCK]);
    const end = Number(rows[0]!.value);
    for (const k of this.blocks.keys()) if (k.slice(0, 3) === key.slice(0, 3) && k !== key) this.blocks.delete(k);
    this.blocks.set(key, { next: end - REFERENCE_BLOCK + 1, end });
  }
}

const BLOCK_SQL = 'insert into reference_counter (id, value) values (?, ?) on conflict (id) do update set value = reference_counter.value + excluded.value returning value';

const allocators = new WeakMap<object, ReferenceBlocks>();

/** The process's allocator for this database (PostgreSQL only; SQLite takes the counter in the transaction). */
export function referenceBlocks(db: Database): ReferenceBlocks | null {
  if (db.dialect !== 'postgresql') return null;
  let blocks = allocators.get(db.orm);
  if (!blocks) {
    blocks = new ReferenceBlocks(db);
    allocators.set(db.orm, blocks);
  }
  return blocks;
}
