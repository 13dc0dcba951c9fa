import type { Common } from '../common.ts';
import { ALL_POINTS, can, DashboardError, roleOn, type Permission } from '../domain/dashboard-roles.ts';
import { GatewayError } from '../domain/errors.ts';
import { csvLine, encodeCursor, fiatText, type InvoiceListFilter, type InvoiceListPage, type InvoiceListQuery, type InvoiceListRow, type PointScope, type Sort } from '../domain/invoice-list.ts';
import { recordAudit } from '../store/audit-log.ts';
import { changedInvoices, invoiceListBatches, invoiceListPage, type ChangedRow } from '../store/invoice-search.ts';
import { pointsFor, type DashboardPoint } from './dashboard-points.ts';
import type { DashboardPrincipal } from './dashboard-session.ts';
import type { Client } from './dashboard-tokens.ts';

// The dashboard's invoice list (docs/dashboard.md#invoices-and-payments): the page, its JSON, the
// live poll and the CSV export, each over the points the user holds a role on that allows it. A
// point not granted is never read: the scope is part of every statement, not a filter afterwards.

/** Rows the CSV export reads at a time: one batch in memory, whatever the export's length. */
export const EXPORT_BATCH = 2000;
/** The live poll looks this far behind its cursor: a write committed late (its updated_at earlier than a poll) is still seen. */
export const CHANGES_OVERLAP_MS = 3000;
const CHANGES_LIMIT = 200;

/**
 * The points whose rows a user may read (or export): every point when a `*` grant allows it, but
 * the points whose own grant does not; else the points granted with a role that allows it. A
 * chosen point narrows it: one the user was not granted is a 404, one whose role does not allow it
 * a 403 (as for a point's own page).
 */
export function scopeFor(principal: DashboardPrincipal, permission: Permission, point: string | null): PointScope {
  if (point !== null) {
    const role = roleOn(principal.grants, point);
    if (!role) throw new GatewayError('NOT_FOUND', 'No such merchant point');
    if (!can(role, permission)) throw new DashboardError('FORBIDDEN', 403, `A ${role} may not ${permission === 'export' ? 'export' : 'read'} this point's invoices`);
    return { all: false, ids: [point] };
  }
  const star = principal.grants.find((g) => g.pointId === ALL_POINTS);
  const own = principal.grants.filter((g) => g.pointId !== ALL_POINTS);
  if (star && can(star.role, permission)) return { all: true, except: own.filter((g) => !can(g.role, permission)).map((g) => g.pointId) };
  const ids = own.filter((g) => can(g.role, permission)).map((g) => g.pointId);
  if (ids.length === 0) throw new DashboardError('FORBIDDEN', 403, permission === 'export' ? 'Your roles do not allow exports (an accountant, manager or owner may)' : 'No point is granted to you');
  return { all: false, ids };
}

export interface InvoiceList {
  page: InvoiceListPage;
  /** The points the user may see (the point filter's choices and the rows' point names). */
  points: DashboardPoint[];
  /** Whether the user may export the list as it is filtered. */
  canExport: boolean;
}

async function knownPoint(common: Common, principal: DashboardPrincipal, point: string | null): Promise<DashboardPoint[]> {
  const points = await pointsFor(common, principal);
  if (point !== null && !points.some((p) => p.id === point)) throw new GatewayError('NOT_FOUND', 'No such merchant point');
  return points;
}

function exportAllowed(principal: DashboardPrincipal, point: string | null): boolean {
  try {
    scopeFor(principal, 'export', point);
    return true;
  } catch {
    return false;
  }
}

/** One page of the list (the page, and its JSON for scripts). */
export async function invoiceListForDashboard(common: Common, principal: DashboardPrincipal, query: InvoiceListQuery): Promise<InvoiceList> {
  const scope = scopeFor(principal, 'read', query.point);
  const points = await knownPoint(common, principal, query.point);
  const page = await invoiceListPage(common.db, scope, query, query);
  return { page, points, canExport: exportAllowed(principal, query.point) };
}

/** A row as the JSON answers give it: dates in ISO 8601, amounts as decimal strings. */
export function rowJson(row: InvoiceListRow, pointName: string | null) {
  return {
    id: row.id,
    referenceId: row.referenceId,
    pointId: row.pointId,
    pointName,
    orderId: row.orderId,
    customerEmail: row.customerEmail,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    paymentCount: row.paymentCount,
    payment: row.payment && { ...row.payment, createdAt: row.payment.createdAt.toISOString() },
    unusual: row.unusual,
    url: `/dashboard/invoices/${row.id}`,
  };
}

export function pageJson(list: InvoiceList) {
  const names = new Map(list.points.map((p) => [p.id, p.name]));
  return {
    items: list.page.rows.map((r) => rowJson(r, names.get(r.pointId) ?? null)),
    next: list.page.next && encodeCursor(list.page.next),
    previous: list.page.previous && encodeCursor(list.page.previous),
  };
}

export interface InvoiceChanges {
  /** Give this back as `since` in the next poll. */
  cursor: string;
  rows: ChangedRow[];
  points: DashboardPoint[];
}

/** The live list's poll: rows of the user's points changed since the cursor, each with whether it matches the filter. */
export async function invoiceChangesForDashboard(common: Common, principal: DashboardPrincipal, filter: InvoiceListFilter, since: string | null, now = new Date()): Promise<InvoiceChanges> {
  const scope = scopeFor(principal, 'read', filter.point);
  const points = await knownPoint(common, principal, filter.point);
  const cursor = String(now.getTime());
  if (since === null) return { cursor, rows: [], points };
  if (!/^\d{1,15}$/.test(since)) throw new GatewayError('VALIDATION_ERROR', 'since must be a cursor an earlier poll gave');
  const from = new Date(Math.max(0, Number(since) - CHANGES_OVERLAP_MS));
  return { cursor, rows: await changedInvoices(common.db, scope, filter, from, CHANGES_LIMIT), points };
}

export const CSV_HEADER = [
  'created_at',
  'invoice_id',
  'reference_id',
  'point_id',
  'point_name',
  'order_id',
  'customer_email',
  'amount',
  'currency',
  'status',
  'payments',
  'payment_id',
  'payment_status',
  'chain',
  'network',
  'coin',
  'expected_amount',
  'received_amount',
  'address',
  'transaction_hash',
  'unusual',
];

function csvRow(row: InvoiceListRow, pointName: string): string {
  const p = row.payment;
  return csvLine([
    row.createdAt.toISOString(),
    row.id,
    row.referenceId,
    row.pointId,
    pointName,
    row.orderId,
    row.customerEmail,
    fiatText(row.amount, row.currency).split(' ')[0]!,
    row.currency,
    row.status,
    row.paymentCount,
    p?.id,
    p?.status,
    p?.chain,
    p?.network,
    p?.coin,
    p?.expectedAmount,
    p?.receivedAmount,
    p?.address,
    p?.transactionHash,
    row.unusual.join(';'),
  ]);
}

/**
 * The filtered list as CSV, for an accountant, manager or owner: the export is written to the audit
 * log first, then streamed a batch at a time (never the whole list in memory). Yields text chunks.
 */
export async function exportInvoicesCsv(common: Common, principal: DashboardPrincipal, filter: InvoiceListFilter, sort: Sort, client: Client): Promise<AsyncIterable<string>> {
  const scope = scopeFor(principal, 'export', filter.point);
  const points = await knownPoint(common, principal, filter.point);
  const names = new Map(points.map((p) => [p.id, p.name]));
  await recordAudit(common.db, {
    userId: principal.userId,
    actor: principal.email,
    action: 'invoices.export',
    pointId: filter.point,
    ...client,
    details: { q: filter.q, status: filter.status, chain: filter.chain, coin: filter.coin, from: filter.from?.toISOString() ?? null, to: filter.to?.toISOString() ?? null, unusual: filter.unusual, sort },
  });
  const db = common.db;
  return (async function* () {
    yield csvLine(CSV_HEADER);
    for await (const rows of invoiceListBatches(db, scope, filter, sort, EXPORT_BATCH)) {
      yield rows.map((r) => csvRow(r, names.get(r.pointId) ?? '')).join('');
    }
  })();
}
