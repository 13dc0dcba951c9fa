import type { Dialect } from '../config/database-url.ts';
import type { InvoiceStatus, PaymentStatus } from '../domain/lifecycle.ts';
import type { InvoiceListFilter, InvoiceListPage, InvoiceListRow, ListCursor, ListPayment, PointScope, Sort, UnusualKind } from '../domain/invoice-list.ts';
import { settlementOf } from '../domain/settlement.ts';
import type { Reader, SqlValue } from './executor.ts';
import { applyExpiryTo, invoicesDue } from './expiry.ts';
import type { Database } from './orm.ts';
import { dateOf, poolReader } from './raw-sql.ts';

// The dashboard's invoice list (docs/dashboard.md#invoices-and-payments), read in SQL that is the
// same on both databases but for one expression (a decimal comparison). Keyset pages on
// (created_at, id): a row inserted while someone pages never shifts the next page. Each search key
// is an indexed equality (migrations …_invoice_list); the filters on payments are `exists` probes
// on payment(invoice_id, created_at). docs/performance.md#the-dashboards-list has the plans.

const INVOICE_COLUMNS = 'i.id, i.reference_id, i.merchant_id, i.order_id, i.customer_email, i.amount, i.currency, i.status, i.created_at, i.updated_at';
/** More candidates than this from a search: the filter runs as a subquery instead of a bound list. */
const MAX_BOUND_CANDIDATES = 2000;

interface InvoiceListSqlRow {
  id: string;
  reference_id: string;
  merchant_id: string;
  order_id: string;
  customer_email: string | null;
  amount: string;
  currency: string;
  status: InvoiceStatus;
  created_at: unknown;
  updated_at: unknown;
}

interface PaymentListSqlRow {
  id: string;
  reference_id: string;
  invoice_id: string;
  status: PaymentStatus;
  blockchain: string;
  network: string;
  crypto_currency: string;
  decimals: number | string;
  expected_amount: string;
  received_amount: string;
  address: string;
  transaction_hash: string | null;
  created_at: unknown;
}

/**
 * `(?, ?, …)` for a list, padded with nulls to a few fixed lengths so that PostgreSQL's named
 * statements and SQLite's statement cache see a handful of texts, not one per list length.
 */
function boundList(values: readonly string[]): { sql: string; params: SqlValue[] } {
  let n = 8;
  while (n < values.length && n < 512) n *= 4;
  if (n < values.length) n = values.length;
  const params: SqlValue[] = [...values];
  while (params.length < n) params.push(null);
  return { sql: `(${params.map(() => '?').join(', ')})`, params };
}

/** ASCII lower case, as SQLite's lower() does, so a lowered parameter meets a lower(column) index. */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/**
 * `a < b` for two columns of non-negative decimal strings, exactly: PostgreSQL compares them as
 * numeric. SQLite has no decimal type: as doubles first (rounding is monotonic, so unequal doubles
 * order their decimals the same way), and only when the doubles are equal, both padded to a fixed
 * width (80 digits before the point, 40 after) and compared as text.
 */
function decimalLess(dialect: Dialect, a: string, b: string): string {
  if (dialect === 'postgresql') return `cast(${a} as numeric) < cast(${b} as numeric)`;
  const key = (c: string) =>
    `(substr('${'0'.repeat(80)}' || (case when instr(${c}, '.') > 0 then substr(${c}, 1, instr(${c}, '.') - 1) else ${c} end), -80)` +
    ` || substr((case when instr(${c}, '.') > 0 then substr(${c}, instr(${c}, '.') + 1) else '' end) || '${'0'.repeat(40)}', 1, 40))`;
  return `(cast(${a} as real) < cast(${b} as real) or (cast(${a} as real) = cast(${b} as real) and ${key(a)} < ${key(b)}))`;
}

/**
 * The payments of invoice `i`, for an `exists` probe. SQLite, without statistics (nobody runs
 * ANALYZE on an embedded database), probed by the (status, expires_at) index when a condition named
 * the status, scanning every COMPLETED payment per invoice: the probe is pinned to the invoice's own.
 */
function paymentsOf(dialect: Dialect): string {
  return dialect === 'sqlite' ? 'payment p indexed by payment_invoice_id_created_at_index' : 'payment p';
}

/**
 * The invoices of each unusual kind (the definitions in docs/dashboard.md#unusual), as a subquery
 * of invoice ids read from the few rows that are unusual: a partial index of the completed payments
 * whose amounts differ (covering both amounts), the failed and refunded payments by status, the late
 * transfers by status, the refunds. Never a probe of every invoice's payments.
 */
function unusualSql(dialect: Dialect, kind: UnusualKind): string {
  // SQLite without statistics takes the (status, expires_at) index, every completed payment, over the partial index.
  const settledOff = (d: Dialect) => (d === 'sqlite' ? 'payment p indexed by payment_settled_off_index' : 'payment p');
  switch (kind) {
    case 'underpaid':
      return `select p.invoice_id from ${settledOff(dialect)} where p.status = 'COMPLETED' and p.received_amount <> p.expected_amount and ${decimalLess(dialect, 'p.received_amount', 'p.expected_amount')}`;
    case 'overpaid':
      return `select p.invoice_id from ${settledOff(dialect)} where p.status = 'COMPLETED' and p.received_amount <> p.expected_amount and ${decimalLess(dialect, 'p.expected_amount', 'p.received_amount')}`;
    case 'late':
      return `select p.invoice_id from observed_transfer t join payment p on p.id = t.payment_id where t.status in ('LATE', 'EXTRA')`;
    case 'refunded':
      return `select p.invoice_id from payment p where p.status = 'REFUNDED' union select p.invoice_id from refund f join payment p on p.id = f.payment_id`;
    case 'failed':
      return `select p.invoice_id from payment p where p.status = 'FAILED'`;
  }
}

const ALL_UNUSUAL: UnusualKind[] = ['underpaid', 'overpaid', 'late', 'refunded', 'failed'];

/** The invoice ids a search string names, by every search key (docs/dashboard.md#search): at most `limit`. */
async function searchCandidates(r: Reader, q: string, limit: number): Promise<string[]> {
  const lower = asciiLower(q);
  const rows = await r.all<{ invoice_id: string }>(
    `select id as invoice_id from invoice where id = ?
     union select invoice_id from payment where id = ?
     union select id from invoice where reference_id = ?
     union select invoice_id from payment where reference_id = ?
     union select id from invoice where order_id = ?
     union select id from invoice where lower(customer_email) = ?
     union select invoice_id from payment where lower(address) = ?
     union select invoice_id from payment where lower(transaction_hash) = ?
     union select p.invoice_id from observed_transfer t join payment p on p.id = t.payment_id where lower(t.tx_hash) = ?
     limit ?`,
    [q, q, q, q, q, lower, lower, lower, lower, limit],
  );
  return rows.map((row) => row.invoice_id);
}

/** The search's candidates as a condition on `i`: a bound list when short, the search itself as a subquery when long. */
async function searchCondition(r: Reader, q: string): Promise<{ sql: string; params: SqlValue[] } | null> {
  const ids = await searchCandidates(r, q, MAX_BOUND_CANDIDATES + 1);
  if (ids.length === 0) return null;
  if (ids.length <= MAX_BOUND_CANDIDATES) {
    const list = boundList(ids);
    return { sql: `i.id in ${list.sql}`, params: list.params };
  }
  const lower = asciiLower(q);
  return {
    sql: `(i.id = ? or i.reference_id = ? or i.order_id = ? or lower(i.customer_email) = ? or exists (select 1 from payment p where p.invoice_id = i.id and (p.id = ? or p.reference_id = ? or lower(p.address) = ? or lower(p.transaction_hash) = ?
      or exists (select 1 from observed_transfer t where t.payment_id = p.id and lower(t.tx_hash) = ?))))`,
    params: [q, q, q, lower, q, q, lower, lower, lower],
  };
}

interface Conditions {
  where: string[];
  params: SqlValue[];
  /** Whether the rows are found by walking the (created_at, id) order (no bound id list). */
  walk?: boolean;
}

/** The filter's conditions on invoice `i` (not the points, not the page); null when the search found nothing. */
async function filterConditions(r: Reader, f: InvoiceListFilter): Promise<Conditions | null> {
  const c: Conditions = { where: [], params: [], walk: true };
  if (f.q !== null) {
    const found = await searchCondition(r, f.q);
    if (!found) return null;
    c.where.push(found.sql);
    c.params.push(...found.params);
    c.walk = !found.sql.startsWith('i.id in (');
  }
  if (f.status.length) {
    c.where.push(`i.status in (${f.status.map(() => '?').join(', ')})`);
    c.params.push(...f.status);
  }
  if (f.from) {
    c.where.push('i.created_at >= ?');
    c.params.push(f.from);
  }
  if (f.to) {
    c.where.push('i.created_at < ?');
    c.params.push(f.to);
  }
  if (f.chain !== null || f.coin !== null) {
    const terms = ['p.invoice_id = i.id'];
    if (f.chain !== null) {
      terms.push('p.blockchain = ?');
      c.params.push(f.chain);
    }
    if (f.coin !== null) {
      terms.push('p.crypto_currency = ?');
      c.params.push(f.coin);
    }
    c.where.push(`exists (select 1 from ${paymentsOf(r.dialect)} where ${terms.join(' and ')})`);
  }
  if (f.unusual !== null) {
    const kinds = f.unusual === 'any' ? ALL_UNUSUAL : [f.unusual];
    // The unusual rows are few. On SQLite, up to MAX_BOUND_CANDIDATES invoices: their ids, looked up
    // and put in order; more: the list's order is walked, each row checked against the set (read
    // once, held in memory), until the page is full (the denser the set, the shorter the walk).
    // PostgreSQL's planner picks between the same two plans itself, from its statistics (and, told
    // a limit on the set alone, would scan the payments for it).
    const set = kinds.map((k) => unusualSql(r.dialect, k)).join(' union ');
    const ids = r.dialect === 'sqlite' ? (await r.all<{ invoice_id: string }>(`select invoice_id from (${set}) u limit ?`, [MAX_BOUND_CANDIDATES + 1])).map((row) => row.invoice_id) : null;
    if (ids?.length === 0) return null;
    if (ids && ids.length <= MAX_BOUND_CANDIDATES) {
      const list = boundList(ids);
      c.where.push(`i.id in ${list.sql}`);
      c.params.push(...list.params);
      c.walk = false;
    } else c.where.push(`i.id in (${set})`);
  }
  return c;
}

function scopeConditions(scope: PointScope): Conditions | null {
  if (scope.all) {
    if (scope.except.length === 0) return { where: [], params: [] };
    return { where: [`i.merchant_id not in (${scope.except.map(() => '?').join(', ')})`], params: [...scope.except] };
  }
  if (scope.ids.length === 0) return null;
  const list = boundList(scope.ids);
  return { where: [`i.merchant_id in ${list.sql}`], params: list.params };
}

function keyset(direction: 'asc' | 'desc', cursor: ListCursor | null): Conditions {
  if (!cursor) return { where: [], params: [] };
  return { where: [`(i.created_at, i.id) ${direction === 'desc' ? '<' : '>'} (?, ?)`], params: [cursor.createdAt, cursor.id] };
}

const where = (parts: string[]) => (parts.length ? `where ${parts.join(' and ')}` : '');

/**
 * Invoices of the scope matching the conditions, in one direction from a cursor. A scope of several
 * named points reads each point's own (merchant_id, created_at, id) index and merges their heads:
 * one ordered index walk per point, never a sort of every row of the points.
 */
async function invoiceRows(r: Reader, scope: PointScope, c: Conditions, direction: 'asc' | 'desc', cursor: ListCursor | null, limit: number): Promise<InvoiceListSqlRow[]> {
  const k = keyset(direction, cursor);
  const order = `order by created_at ${direction}, id ${direction}`;
  // SQLite without statistics may take a filter's index (status, say) and sort every matching row;
  // a walk in the list's order reads only until the page is full. PostgreSQL's planner has them.
  const hint = (index: string) => (r.dialect === 'sqlite' && c.walk ? `indexed by ${index}` : '');
  if (!scope.all && scope.ids.length > 0 && (c.walk || scope.ids.length > 1)) {
    const parts: string[] = [];
    const params: SqlValue[] = [];
    scope.ids.forEach((id, n) => {
      parts.push(`select * from (select ${INVOICE_COLUMNS} from invoice i ${hint('invoice_merchant_id_created_at_id_index')} ${where(['i.merchant_id = ?', ...c.where, ...k.where])} order by i.created_at ${direction}, i.id ${direction} limit ?) u${n}`);
      params.push(id, ...c.params, ...k.params, limit);
    });
    return r.all<InvoiceListSqlRow>(`${parts.join(' union all ')} ${order} limit ?`, [...params, limit]);
  }
  const s = scopeConditions(scope);
  if (!s) return [];
  return r.all<InvoiceListSqlRow>(`select ${INVOICE_COLUMNS} from invoice i ${hint('invoice_created_at_id_index')} ${where([...s.where, ...c.where, ...k.where])} order by i.created_at ${direction}, i.id ${direction} limit ?`, [
    ...s.params,
    ...c.params,
    ...k.params,
    limit,
  ]);
}

/** The payments, late transfers and refunds of a page's invoices, in three reads, joined in memory. */
async function withPayments(r: Reader, invoices: InvoiceListSqlRow[]): Promise<InvoiceListRow[]> {
  if (invoices.length === 0) return [];
  const ids = boundList(invoices.map((i) => i.id));
  const payments = await r.all<PaymentListSqlRow>(
    `select id, reference_id, invoice_id, status, blockchain, network, crypto_currency, decimals, expected_amount, received_amount, address, transaction_hash, created_at
     from payment where invoice_id in ${ids.sql} order by created_at, id`,
    ids.params,
  );
  const late = new Set<string>();
  const refunded = new Set<string>();
  if (payments.length) {
    const pids = boundList(payments.map((p) => p.id));
    for (const row of await r.all<{ payment_id: string }>(`select distinct payment_id from observed_transfer where payment_id in ${pids.sql} and status in ('LATE', 'EXTRA')`, pids.params)) late.add(row.payment_id);
    for (const row of await r.all<{ payment_id: string }>(`select distinct payment_id from refund where payment_id in ${pids.sql}`, pids.params)) refunded.add(row.payment_id);
  }
  const byInvoice = new Map<string, PaymentListSqlRow[]>();
  for (const p of payments) {
    const list = byInvoice.get(p.invoice_id);
    if (list) list.push(p);
    else byInvoice.set(p.invoice_id, [p]);
  }
  return invoices.map((i) => {
    const own = byInvoice.get(i.id) ?? [];
    const flags = new Set<UnusualKind>();
    for (const p of own) {
      if (p.status === 'COMPLETED') {
        const kind = settlementOf(p.expected_amount, p.received_amount, Number(p.decimals))?.kind;
        if (kind === 'underpaid' || kind === 'overpaid') flags.add(kind);
      }
      if (late.has(p.id)) flags.add('late');
      if (p.status === 'REFUNDED' || refunded.has(p.id)) flags.add('refunded');
      if (p.status === 'FAILED') flags.add('failed');
    }
    const newest = own.at(-1);
    return {
      id: i.id,
      referenceId: i.reference_id,
      pointId: i.merchant_id,
      orderId: i.order_id,
      customerEmail: i.customer_email,
      amount: String(i.amount),
      currency: i.currency,
      status: i.status,
      createdAt: dateOf(i.created_at),
      updatedAt: dateOf(i.updated_at),
      paymentCount: own.length,
      payment: newest ? paymentOf(newest) : null,
      unusual: ALL_UNUSUAL.filter((k) => flags.has(k)),
    };
  });
}

function paymentOf(p: PaymentListSqlRow): ListPayment {
  return {
    id: p.id,
    referenceId: p.reference_id,
    status: p.status,
    chain: p.blockchain,
    network: p.network,
    coin: p.crypto_currency,
    decimals: Number(p.decimals),
    expectedAmount: String(p.expected_amount),
    receivedAmount: String(p.received_amount),
    address: p.address,
    transactionHash: p.transaction_hash,
    createdAt: dateOf(p.created_at),
  };
}

const cursorOf = (row: { id: string; createdAt: Date }): ListCursor => ({ createdAt: row.createdAt, id: row.id });

/**
 * The lazy expiry of a list read (docs/architecture.md "Reads never write row by row"): what the
 * rules make of due invoices now, in one write, before the page is read. Almost always nothing is due.
 */
async function expireDue(db: Database, now: Date): Promise<void> {
  await applyExpiryTo(db, await invoicesDue(poolReader(db), {}, now, 500), now);
}

export interface PageRequest {
  sort: Sort;
  after: ListCursor | null;
  before: ListCursor | null;
  limit: number;
}

/** One page of the list: `limit` rows from a cursor (after: onwards in the sort order; before: the page ending there). */
export async function invoiceListPage(db: Database, scope: PointScope, filter: InvoiceListFilter, page: PageRequest, now = new Date()): Promise<InvoiceListPage> {
  await expireDue(db, now);
  const r = poolReader(db);
  const c = await filterConditions(r, filter);
  if (!c) return { rows: [], next: null, previous: null };
  const backwards = page.before !== null;
  const flip = (d: Sort): Sort => (d === 'desc' ? 'asc' : 'desc');
  const direction = backwards ? flip(page.sort) : page.sort;
  const got = await invoiceRows(r, scope, c, direction, backwards ? page.before : page.after, page.limit + 1);
  const more = got.length > page.limit;
  const slice = got.slice(0, page.limit);
  if (backwards) slice.reverse();
  const rows = await withPayments(r, slice);
  const first = rows[0];
  const last = rows.at(-1);
  if (backwards) return { rows, next: last ? cursorOf(last) : null, previous: more && first ? cursorOf(first) : null };
  return { rows, next: more && last ? cursorOf(last) : null, previous: page.after !== null && first ? cursorOf(first) : null };
}

/**
 * The whole filtered list in sort order, `batch` rows a read (the CSV export): a keyset walk, so
 * only one batch is held at a time whatever the list's length, and rows inserted meanwhile never
 * shift it.
 */
export async function* invoiceListBatches(db: Database, scope: PointScope, filter: InvoiceListFilter, sort: Sort, batch: number, now = new Date()): AsyncGenerator<InvoiceListRow[]> {
  await expireDue(db, now);
  const r = poolReader(db);
  const c = await filterConditions(r, filter);
  if (!c) return;
  let cursor: ListCursor | null = null;
  for (;;) {
    const got = await invoiceRows(r, scope, c, sort, cursor, batch);
    if (got.length === 0) return;
    const rows = await withPayments(r, got);
    yield rows;
    if (got.length < batch) return;
    cursor = cursorOf(rows.at(-1)!);
  }
}

export interface ChangedRow extends InvoiceListRow {
  /** Whether the row matches the list's filter now (a row that stopped matching leaves the page). */
  matches: boolean;
}

/**
 * The invoices of the scope that changed at or after `since` (the invoice, one of its payments, a
 * transfer recorded against one, or a refund): the live list's poll. Each with whether it matches
 * the filter. At most `limit` (a poll a second sees a handful).
 */
export async function changedInvoices(db: Database, scope: PointScope, filter: InvoiceListFilter, since: Date, limit: number): Promise<ChangedRow[]> {
  const r = poolReader(db);
  const ids = (
    await r.all<{ invoice_id: string }>(
      `select id as invoice_id from invoice where updated_at >= ?
       union select invoice_id from payment where updated_at >= ?
       union select p.invoice_id from observed_transfer t join payment p on p.id = t.payment_id where t.updated_at >= ?
       union select p.invoice_id from refund f join payment p on p.id = f.payment_id where f.created_at >= ?
       limit ?`,
      [since, since, since, since, limit],
    )
  ).map((row) => row.invoice_id);
  if (ids.length === 0) return [];
  const inIds = boundList(ids);
  const only: Conditions = { where: [`i.id in ${inIds.sql}`], params: inIds.params };
  const rows = await invoiceRows(r, scope, only, 'desc', null, limit);
  if (rows.length === 0) return [];
  const c = await filterConditions(r, filter);
  const matching = new Set<string>();
  if (c) for (const row of await invoiceRows(r, scope, { where: [...only.where, ...c.where], params: [...only.params, ...c.params] }, 'desc', null, limit)) matching.add(row.id);
  return (await withPayments(r, rows)).map((row) => ({ ...row, matches: matching.has(row.id) }));
}

/** The plans of the list's statements (docs/performance.md; the bench prints them). */
export async function explainInvoiceList(db: Database, scope: PointScope, filter: InvoiceListFilter, page: PageRequest): Promise<string[]> {
  const captured: { sql: string; params: SqlValue[] }[] = [];
  const r = poolReader(db);
  const spy: Reader = {
    dialect: r.dialect,
    get: r.get,
    all: async <R>(sql: string, params: SqlValue[] = []) => {
      captured.push({ sql, params });
      return r.all<R>(sql, params);
    },
  };
  const c = await filterConditions(spy, filter);
  if (c) await invoiceRows(spy, scope, c, page.sort, page.after, page.limit + 1);
  const out: string[] = [];
  for (const { sql, params } of captured) {
    const plan =
      db.dialect === 'postgresql'
        ? (await r.all<{ 'QUERY PLAN': string }>(`explain (analyze, buffers off, timing off, summary on) ${sql}`, params)).map((row) => row['QUERY PLAN'])
        : (await r.all<{ id: number; parent: number; detail: string }>(`explain query plan ${sql}`, params)).map((row) => `${row.parent}/${row.id} ${row.detail}`);
    out.push(`${sql.replace(/\s+/g, ' ').slice(0, 400)}\n  ${plan.join('\n  ')}`);
  }
  return out;
}
