import type { Database } from '../store/orm.ts';

/**
 * Deletes webhook events older than `days` that have nothing left to deliver, with their
 * deliveries and attempts, in one transaction. A pending delivery keeps its event, whatever its age.
 */
export async function purgeOldWebhooks(db: Database, days: number, now = new Date()): Promise<number> {
  if (days <= 0) return 0;
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const old = `select e.id from webhook_event e where e.created_at < ? and not exists
    (select 1 from webhook_delivery p where p.event_id = e.id and p.state = 'PENDING')`;
  return db.write(async (x) => {
    await x.run(`delete from webhook_attempt where delivery_id in (select d.id from webhook_delivery d where d.event_id in (${old}))`, [cutoff]);
    await x.run(`delete from webhook_delivery where event_id in (${old})`, [cutoff]);
    return x.run(`delete from webhook_event where id in (${old})`, [cutoff]);
  });
}
