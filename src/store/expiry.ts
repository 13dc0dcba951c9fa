import { LIVE_PAYMENT_STATUSES, type InvoiceStatus } from '../domain/lifecycle.ts';
import type { Executor, Reader, SqlValue } from './executor.ts';
import type { Database } from './orm.ts';
import { dateOf, poolReader } from './raw-sql.ts';
import { applyInvoiceFact, applyPaymentFact } from './lifecycle.ts';

// Expiry (docs/expiry.md): enforced lazily whenever an invoice or payment is acted on, and by a
// scheduled sweep so that polling shows the truth too.
//  - A PENDING payment past its expiresAt becomes EXPIRED (nothing was seen on chain).
//  - Its invoice, left without a live payment, returns to OPEN while the invoice itself is still
//    within its expiresAt (the buyer may start another attempt), else becomes EXPIRED.
//  - An OPEN invoice past expiresAt becomes EXPIRED.
//  - A payment that is PROCESSING or CONFIRMING never expires: money is in flight.
// A payment window is closed at the chain's time, not ahead of it: a PENDING payment expires only
// once its chain's indexer has processed a block newer than its expiresAt, so funds sent within the
// window are always credited first, and an indexer that was down produces the same ledger and the
// same events as a live one. Chains no indexer has ever run for fall back to the wall clock.

const LIVE = LIVE_PAYMENT_STATUSES.map((s) => `'${s}'`).join(', ');

/**
 * The condition (on payment `p`) of a PENDING payment whose window may be closed now: per chain and
 * network, expiresAt at or before min(now, time of the newest block the indexer processed).
 */
export async function closableWindows(r: Reader, now = new Date()): Promise<{ where: string; params: SqlValue[] }> {
  const cursors = await r.all<{ chain: string; network: string; block_time: string | number | null }>('select chain, network, block_time from indexer_cursor order by chain, network');
  const params: SqlValue[] = [];
  const indexed = cursors.map((c) => {
    const chainTime = c.block_time === null || c.block_time === undefined ? new Date(0) : new Date(Number(c.block_time) * 1000 - 1);
    params.push(c.chain, c.network, chainTime < now ? chainTime : now);
    return '(p.blockchain = ? and p.network = ? and p.expires_at <= ?)';
  });
  params.push(now);
  const others = cursors.map((c) => {
    params.push(c.chain, c.network);
    return ' and not (p.blockchain = ? and p.network = ?)';
  });
  return { where: `p.status = 'PENDING' and (${[...indexed, `(p.expires_at <= ?${others.join('')})`].join(' or ')})`, params };
}

/**
 * Whether the expiry rules would change anything for this invoice now. Reads only; lets the hot
 * read paths (status polls) skip the transaction when nothing is due, which is almost always.
 */
export async function expiryDue(r: Reader, invoice: { id: string; status: InvoiceStatus; expiresAt: Date }, now = new Date()): Promise<boolean> {
  if (invoice.status === 'OPEN') return invoice.expiresAt <= now;
  if (invoice.status !== 'PAYMENT_PENDING') return false;
  if (!(await r.get(`select 1 as due from payment p where p.invoice_id = ? and p.status = 'PENDING' and p.expires_at <= ? limit 1`, [invoice.id, now]))) return false;
  const closable = await closableWindows(r, now);
  return (await r.get(`select 1 as due from payment p where p.invoice_id = ? and ${closable.where} limit 1`, [invoice.id, ...closable.params])) !== undefined;
}

/** Applies the expiry rules to one invoice and its payments inside the caller's write. */
export async function applyExpiry(x: Executor, invoiceId: string, now = new Date()): Promise<void> {
  const closable = await closableWindows(x, now);
  const stale = await x.all<{ id: string; expires_at: unknown }>(`select p.id, p.expires_at from payment p where p.invoice_id = ? and ${closable.where} order by p.created_at, p.id`, [
    invoiceId,
    ...closable.params,
  ]);
  // Stamped at the window's end, not at whenever this ran: the same event whoever applies it.
  for (const payment of stale) await applyPaymentFact(x, payment.id, 'windowClosed', dateOf(payment.expires_at));
  const invoice = await x.get<{ status: InvoiceStatus; expires_at: unknown }>('select status, expires_at from invoice where id = ?', [invoiceId]);
  if (!invoice) return;
  const expiresAt = dateOf(invoice.expires_at);
  if (invoice.status === 'PAYMENT_PENDING') {
    if (await x.get(`select 1 as live from payment where invoice_id = ? and status in (${LIVE}) limit 1`, [invoiceId])) return;
    await applyInvoiceFact(x, invoiceId, expiresAt > now ? 'attemptEnded' : 'expired', now);
  } else if (invoice.status === 'OPEN' && expiresAt <= now) {
    await applyInvoiceFact(x, invoiceId, 'expired', now);
  }
}

/** Applies the expiry rules to several invoices in one write (a list read's lazy expiry: one transaction, not one per row). */
export async function applyExpiryTo(db: Database, invoiceIds: readonly string[], now = new Date()): Promise<void> {
  if (invoiceIds.length === 0) return;
  await db.write(async (x) => {
    for (const id of invoiceIds) await applyExpiry(x, id, now);
  });
}

/**
 * A read whose row carries a `due` flag (the expiry rules may change it now, by the wall clock).
 * Almost always not due: the row as read. When due and the rules, decided at the chain's time
 * (expiryDue), do change something, they run in one write that reads the row again inside its
 * transaction: one read, at most one write, never one write per row.
 */
export async function readApplyingExpiry<R extends { due: number | boolean }>(
  db: Database,
  read: (r: Reader) => Promise<R | undefined>,
  invoiceIdOf: (row: R) => string,
  missing: () => never,
  now = new Date(),
): Promise<R> {
  const row = (await read(poolReader(db))) ?? missing();
  if (Number(row.due) !== 1 && row.due !== true) return row;
  const invoiceId = invoiceIdOf(row);
  const invoice = await poolReader(db).get<{ status: InvoiceStatus; expires_at: unknown }>('select status, expires_at from invoice where id = ?', [invoiceId]);
  if (!invoice || !(await expiryDue(poolReader(db), { id: invoiceId, status: invoice.status, expiresAt: dateOf(invoice.expires_at) }, now))) return row;
  return db.write(async (x) => {
    await applyExpiry(x, invoiceId, now);
    return (await read(x)) ?? missing();
  });
}

/** Invoices the expiry rules may change now: through a payment's closed window, or OPEN past their own time. */
export async function invoicesDue(r: Reader, filter: { merchantId?: string }, now: Date, limit: number): Promise<string[]> {
  const closable = await closableWindows(r, now);
  const scope = filter.merchantId === undefined ? '' : 'p.merchant_id = ? and ';
  // In the (status, expires_at) index's order: PostgreSQL, told only `limit`, guessed from its
  // statistics that a scan of the whole table would find enough rows soon, and read every row
  // (1.6 s on a million invoices, docs/performance.md#the-dashboards-invoice-list).
  const fromPayments = await r.all<{ invoice_id: string }>(`select p.invoice_id from payment p where ${scope}${closable.where} order by p.expires_at limit ?`, [
    ...(filter.merchantId === undefined ? [] : [filter.merchantId]),
    ...closable.params,
    limit,
  ]);
  const fromInvoices =
    filter.merchantId === undefined ? await r.all<{ id: string }>(`select id from invoice where status = 'OPEN' and expires_at <= ? order by expires_at limit ?`, [now, limit]) : [];
  return [...new Set([...fromPayments.map((p) => p.invoice_id), ...fromInvoices.map((i) => i.id)])];
}

/** The scheduled sweep: expires what nobody touched. Returns how many invoices it looked at. */
export async function sweepExpired(db: Database, now = new Date(), batch = 500): Promise<number> {
  const ids = await invoicesDue(poolReader(db), {}, now, batch);
  for (const id of ids) await db.write((x) => applyExpiry(x, id, now));
  return ids.length;
}
