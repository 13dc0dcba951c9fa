import { deleteEventsBefore } from '../store/events.ts';
import type { Database } from '../store/orm.ts';

/**
 * Deletes webhook events older than `days` that have nothing left to deliver, with their
 * deliveries and attempts, in one transaction. A pending delivery keeps its event, whatever its age.
 */
export async function purgeOldWebhooks(db: Database, days: number, now = new Date()): Promise<number> {
  if (days <= 0) return 0;
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  return db.write((x) => deleteEventsBefore(x, cutoff));
}
