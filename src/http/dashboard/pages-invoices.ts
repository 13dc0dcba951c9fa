import type { DashboardPoint } from '../../app/dashboard-points.ts';
import { encodeCursor, fiatText, queryStringOf, SORTS, UNUSUAL_KINDS, type InvoiceListPage, type InvoiceListQuery, type InvoiceListRow } from '../../domain/invoice-list.ts';
import { INVOICE_STATUSES } from '../../domain/lifecycle.ts';
import { html, raw, type Html } from './html.ts';
import { page, type Layout } from './pages.ts';

// The invoice list page (docs/dashboard.md#invoices-and-payments): a GET form of filters, the table,
// keyset page links, the CSV link. Works without script (each change is a reload); with it,
// assets/dashboard.js polls the changes endpoint named in data-live and updates rows in place.

const UNUSUAL_LABELS: Record<(typeof UNUSUAL_KINDS)[number] | 'any', string> = {
  any: 'any of these',
  underpaid: 'underpaid',
  overpaid: 'overpaid',
  late: 'late funds',
  refunded: 'refunded',
  failed: 'failed',
};

function dateField(d: Date | null, endExclusive: boolean): string {
  if (!d) return '';
  return new Date(d.getTime() - (endExclusive ? 1 : 0)).toISOString().slice(0, 10);
}

function selected(on: boolean): Html {
  return on ? raw(' selected') : html``;
}

/** One row of the table; the changes endpoint sends the same markup for the script to swap in. */
export function invoiceRow(row: InvoiceListRow, pointName: string | null, showPoint: boolean): Html {
  const p = row.payment;
  return html`<tr data-id="${row.id}" data-created="${row.createdAt.getTime()}">
<td><time datetime="${row.createdAt.toISOString()}">${row.createdAt.toISOString().slice(0, 16).replace('T', ' ')}</time></td>
<td><a href="/dashboard/invoices/${row.id}"><code>${row.referenceId}</code></a></td>
<td class="bidi">${row.orderId}</td>
<td class="bidi">${row.customerEmail ?? '—'}</td>
<td class="num">${fiatText(row.amount, row.currency)}</td>
<td><span class="status status-${row.status.toLowerCase()}">${row.status}</span></td>
<td>${p ? html`<span class="status status-${p.status.toLowerCase()}">${p.status}</span> ${p.coin} on ${p.chain}<br><span class="hint">${p.receivedAmount} of ${p.expectedAmount}${row.paymentCount > 1 ? ` · ${row.paymentCount} payments` : ''}</span>` : html`<span class="hint">no payment</span>`}</td>
<td>${row.unusual.length ? row.unusual.map((u) => html`<span class="flag flag-${u}">${UNUSUAL_LABELS[u]}</span> `) : ''}</td>
${showPoint ? html`<td class="bidi">${pointName ?? row.pointId}</td>` : ''}
</tr>`;
}

export function invoiceListPage(
  l: Layout,
  input: { query: InvoiceListQuery; page: InvoiceListPage; points: DashboardPoint[]; chains: { slug: string; name: string }[]; canExport: boolean; cursor: string },
): Html {
  const { query: q, page: pg, points, chains } = input;
  const names = new Map(points.map((p) => [p.id, p.name]));
  const showPoint = points.length > 1 && q.point === null;
  const filterQs = queryStringOf(q);
  const live = `/dashboard/api/invoices/changes${filterQs}`;
  const onTop = q.after === null && q.before === null && q.sort === 'desc';
  const older = pg.next ? `/dashboard/invoices${queryStringOf(q, { after: encodeCursor(pg.next) })}` : null;
  const newer = pg.previous ? `/dashboard/invoices${queryStringOf(q, { before: encodeCursor(pg.previous) })}` : null;
  const filtered = filterQs !== '';
  return page(l, html`<form class="card filters" method="get" action="/dashboard/invoices" role="search" aria-label="Filter invoices">
<div class="grid">
<div class="wide"><label for="q">Search</label><input id="q" name="q" value="${q.q ?? ''}" placeholder="invoice or payment id, reference, order id, email, address, tx hash"></div>
<div><label for="status">Invoice status</label><select id="status" name="status"><option value="">any</option>${INVOICE_STATUSES.map((s) => html`<option value="${s}"${selected(q.status.length === 1 && q.status[0] === s)}>${s}</option>`)}</select></div>
<div><label for="chain">Chain</label><select id="chain" name="chain"><option value="">any</option>${chains.map((c) => html`<option value="${c.slug}"${selected(q.chain === c.slug)}>${c.name}</option>`)}</select></div>
<div><label for="coin">Coin</label><input id="coin" name="coin" value="${q.coin ?? ''}" placeholder="USDT" maxlength="16"></div>
<div><label for="from">Created from</label><input id="from" name="from" type="date" value="${dateField(q.from, false)}"></div>
<div><label for="to">Created through</label><input id="to" name="to" type="date" value="${dateField(q.to, true)}"></div>
<div><label for="unusual">Unusual</label><select id="unusual" name="unusual"><option value="">—</option>${(['any', ...UNUSUAL_KINDS] as const).map((u) => html`<option value="${u}"${selected(q.unusual === u)}>${UNUSUAL_LABELS[u]}</option>`)}</select></div>
${points.length > 1 ? html`<div><label for="point">Point</label><select id="point" name="point"><option value="">every point</option>${points.map((p) => html`<option value="${p.id}"${selected(q.point === p.id)}>${p.name}</option>`)}</select></div>` : ''}
<div><label for="sort">Order</label><select id="sort" name="sort">${SORTS.map((s) => html`<option value="${s}"${selected(q.sort === s)}>${s === 'desc' ? 'newest first' : 'oldest first'}</option>`)}</select></div>
</div>
<button type="submit">Show</button> ${filtered ? html`<a class="button-link" href="/dashboard/invoices">Clear</a>` : ''}
</form>
<section class="card">
<div class="list-head"><h2>Invoices</h2>
${input.canExport ? html`<a class="button-link" id="export-csv" href="/dashboard/api/invoices.csv${filterQs}" download>Export CSV</a>` : ''}</div>
<p class="hint" id="live-status" role="status" aria-live="polite" data-live-status></p>
${pg.rows.length === 0 ? html`<p id="no-rows">${filtered ? 'No invoice matches.' : 'No invoice yet.'}</p>` : ''}
<div class="scroll" tabindex="0" role="region" aria-label="Invoices"><table class="invoices" id="invoice-table" data-live="${live}" data-cursor="${input.cursor}" data-insert="${onTop ? 'top' : ''}" data-show-point="${showPoint ? '1' : ''}" data-limit="${q.limit}">
<thead><tr><th scope="col">Created (UTC)</th><th scope="col">Invoice</th><th scope="col">Order</th><th scope="col">Customer</th><th scope="col">Amount</th><th scope="col">Status</th><th scope="col">Payment</th><th scope="col">Unusual</th>${showPoint ? html`<th scope="col">Point</th>` : ''}</tr></thead>
<tbody>
${pg.rows.map((r) => invoiceRow(r, names.get(r.pointId) ?? null, showPoint))}
</tbody></table></div>
<nav class="pager" aria-label="Pages">
${newer || q.after || q.before ? html`<a href="/dashboard/invoices${filterQs}">First page</a>` : ''}
${newer ? html`<a rel="prev" href="${newer}">${q.sort === 'desc' ? 'Newer' : 'Earlier'}</a>` : ''}
${older ? html`<a rel="next" href="${older}">${q.sort === 'desc' ? 'Older' : 'Later'}</a>` : ''}
</nav>
</section>`);
}
