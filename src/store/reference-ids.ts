import { formatReferenceId, referenceDay, type ReferenceKind } from '../domain/reference-id.ts';
import type { Executor } from './executor.ts';
import type { Database } from './orm.ts';

/** One atomic upsert of the day's counter, so concurrent writers never share a number. */
export const COUNTER_SQL = 'insert into reference_counter (id, value) values (?, 1) on conflict (id) do update set value = reference_counter.value + 1 returning value';

/** The day's next reference number, in the write's transaction (the counter row is locked until it commits). */
export async function nextReference(x: Executor, kind: ReferenceKind, now = new Date()): Promise<string> {
  const day = referenceDay(now);
  const row = await x.get<{ value: number | string }>(COUNTER_SQL, [`${kind}-${day}`]);
  return formatReferenceId(kind, day, Number(row!.value));
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
    const row = await this.db.write((x) => x.get<{ value: number | string }>(BLOCK_SQL, [key, REFERENCE_BLOCK]));
    const end = Number(row!.value);
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
