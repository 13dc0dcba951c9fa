import { GatewayError } from './errors.ts';
import { fiatExponent } from './fiat-currencies.ts';
import { INVOICE_STATUSES, type InvoiceStatus, type PaymentStatus } from './lifecycle.ts';
import { formatUnits } from './money.ts';

// The dashboard's list of invoices and their payments (docs/dashboard.md#invoices-and-payments):
// what a query may ask, the keyset cursor, the "unusual" kinds, and the CSV cell rules. Pure: the
// store reads, the routes parse with parseInvoiceQuery.

/** Payments that need a look, each defined from stored facts (docs/dashboard.md#unusual). */
export const UNUSUAL_KINDS = ['underpaid', 'overpaid', 'late', 'refunded', 'failed'] as const;
export type UnusualKind = (typeof UNUSUAL_KINDS)[number];

export const SORTS = ['desc', 'asc'] as const;
export type Sort = (typeof SORTS)[number];

/** A position in the list: the (createdAt, id) of a row; the next page starts strictly after it. */
export interface ListCursor {
  createdAt: Date;
  id: string;
}

export interface InvoiceListFilter {
  /** One search string, matched exactly against every search key (docs); null: no search. */
  q: string | null;
  /** A point the user chose to narrow to (it must be one they may see). */
  point: string | null;
  status: InvoiceStatus[];
  chain: string | null;
  coin: string | null;
  /** createdAt >= from. */
  from: Date | null;
  /** createdAt < to (a date `to` means through that whole UTC day). */
  to: Date | null;
  unusual: UnusualKind | 'any' | null;
}

export interface InvoiceListQuery extends InvoiceListFilter {
  sort: Sort;
  /** Rows after this cursor in the sort order (the next page). */
  after: ListCursor | null;
  /** Rows before this cursor in the sort order (the previous page). */
  before: ListCursor | null;
  limit: number;
}

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;
const MAX_SEARCH_CHARS = 320;

/** The points a user's rows come from: every point (a `*` grant) but some, or just some. */
export type PointScope = { all: true; except: string[] } | { all: false, ids: string[] };

export interface ListPayment {
  id: string;
  referenceId: string;
  status: PaymentStatus;
  chain: string;
  network: string;
  coin: string;
  decimals: number;
  expectedAmount: string;
  receivedAmount: string;
  address: string;
  transactionHash: string | null;
  createdAt: Date;
}

/** One row of the list: an invoice, its newest payment, how many it has, and what is unusual about them. */
export interface InvoiceListRow {
  id: string;
  referenceId: string;
  pointId: string;
  orderId: string;
  customerEmail: string | null;
  /** Minor units of `currency`, as stored. */
  amount: string;
  currency: string;
  status: InvoiceStatus;
  createdAt: Date;
  updatedAt: Date;
  paymentCount: number;
  payment: ListPayment | null;
  unusual: UnusualKind[];
}

export interface InvoiceListPage {
  rows: InvoiceListRow[];
  /** Cursor of the next page in the sort order, null at the end. */
  next: ListCursor | null;
  /** Cursor of the previous page, null on the first. */
  previous: ListCursor | null;
}

const QUERY_KEYS = new Set(['q', 'point', 'status', 'chain', 'coin', 'from', 'to', 'unusual', 'sort', 'after', 'before', 'limit']);

function invalid(message: string): GatewayError {
  return new GatewayError('VALIDATION_ERROR', message);
}

/** One value of a query parameter; a repeated one is refused unless the parameter is a list. */
function single(query: Record<string, unknown>, name: string): string | null {
  const v = query[name];
  if (v === undefined) return null;
  if (typeof v !== 'string') throw invalid(`${name} must be given once`);
  const t = v.trim();
  return t === '' ? null : t;
}

function list(query: Record<string, unknown>, name: string): string[] {
  const v = query[name];
  const all = v === undefined ? [] : Array.isArray(v) ? v : [v];
  const out: string[] = [];
  for (const x of all) {
    if (typeof x !== 'string') throw invalid(`${name} must be text`);
    for (const part of x.split(',')) if (part.trim() !== '') out.push(part.trim());
  }
  return out;
}

/** A date (YYYY-MM-DD, UTC) or an ISO 8601 time with a zone; `endOfDay` makes a bare date the next midnight. */
export function parseListDate(value: string, name: string, endOfDay: boolean): Date {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const d = new Date(`${value}T00:00:00.000Z`);
    if (Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value) throw invalid(`${name} is not a date: ${value}`);
    return endOfDay ? new Date(d.getTime() + 86_400_000) : d;
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    const d = new Date(value);
    if (!Number.isNaN(d.getTime())) return d;
  }
  throw invalid(`${name} must be a date (YYYY-MM-DD) or an ISO 8601 time with a zone`);
}

/** Cursors are opaque to clients: base64url of "<epoch ms>.<id>". */
export function encodeCursor(c: ListCursor): string {
  return Buffer.from(`${c.createdAt.getTime()}.${c.id}`).toString('base64url');
}

export function decodeCursor(value: string, name: string): ListCursor {
  const text = /^[A-Za-z0-9_-]{1,80}$/.test(value) ? Buffer.from(value, 'base64url').toString('utf8') : '';
  const m = /^(\d{1,15})\.([a-z0-9]{1,32})$/.exec(text);
  if (!m) throw invalid(`${name} is not a cursor this list gave`);
  return { createdAt: new Date(Number(m[1])), id: m[2]! };
}

function oneOf<T extends string>(value: string | null, allowed: readonly T[], name: string): T | null {
  if (value === null) return null;
  if (!(allowed as readonly string[]).includes(value)) throw invalid(`${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/**
 * The list's query parameters (the page's form, the JSON and CSV endpoints share them). Unknown
 * names and malformed values are refused with VALIDATION_ERROR, never guessed; empty fields (a GET
 * form sends them) mean "not given".
 */
export function parseInvoiceQuery(query: unknown, options: { allowPaging?: boolean } = {}): InvoiceListQuery {
  const qs = (query && typeof query === 'object' ? query : {}) as Record<string, unknown>;
  const unknown = Object.keys(qs).filter((k) => !QUERY_KEYS.has(k));
  if (unknown.length) throw invalid(`unknown query parameter: ${unknown.join(', ')}`);
  const q = single(qs, 'q');
  if (q !== null && (q.length > MAX_SEARCH_CHARS || /[\u0000-\u001f\u007f]/.test(q))) throw invalid(`q must be at most ${MAX_SEARCH_CHARS} printable characters`);
  const point = single(qs, 'point');
  if (point !== null && !/^[a-z0-9]{1,32}$/.test(point)) throw invalid('point must be a merchant point id');
  const status = list(qs, 'status').map((s) => oneOf(s, INVOICE_STATUSES, 'status')!);
  const chain = single(qs, 'chain');
  if (chain !== null && !/^[a-z0-9-]{1,32}$/.test(chain)) throw invalid('chain must be a chain slug');
  const coin = single(qs, 'coin');
  if (coin !== null && !/^[A-Za-z0-9.]{1,16}$/.test(coin)) throw invalid('coin must be a coin symbol');
  const fromText = single(qs, 'from');
  const toText = single(qs, 'to');
  const from = fromText === null ? null : parseListDate(fromText, 'from', false);
  const to = toText === null ? null : parseListDate(toText, 'to', true);
  if (from && to && from >= to) throw invalid('from must be before to');
  const unusual = oneOf(single(qs, 'unusual'), [...UNUSUAL_KINDS, 'any'] as const, 'unusual');
  const sort = oneOf(single(qs, 'sort'), SORTS, 'sort') ?? 'desc';
  const afterText = single(qs, 'after');
  const beforeText = single(qs, 'before');
  if (afterText !== null && beforeText !== null) throw invalid('give after or before, not both');
  if (options.allowPaging === false && (afterText !== null || beforeText !== null)) throw invalid('this endpoint takes no page cursor');
  const limitText = single(qs, 'limit');
  let limit = DEFAULT_LIMIT;
  if (limitText !== null) {
    if (!/^\d{1,4}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_LIMIT) throw invalid(`limit must be a whole number from 1 to ${MAX_LIMIT}`);
    limit = Number(limitText);
  }
  return {
    q,
    point,
    status: [...new Set(status)],
    chain,
    coin: coin === null ? null : coin.toUpperCase(),
    from,
    to,
    unusual,
    sort,
    after: afterText === null ? null : decodeCursor(afterText, 'after'),
    before: beforeText === null ? null : decodeCursor(beforeText, 'before'),
    limit,
  };
}

/** The query string of a filter (for links: the next page, the CSV of the same list). */
export function queryStringOf(f: InvoiceListFilter & { sort?: Sort }, extra: Record<string, string> = {}): string {
  const p = new URLSearchParams();
  if (f.q) p.set('q', f.q);
  if (f.point) p.set('point', f.point);
  if (f.status.length) p.set('status', f.status.join(','));
  if (f.chain) p.set('chain', f.chain);
  if (f.coin) p.set('coin', f.coin);
  if (f.from) p.set('from', f.from.toISOString());
  if (f.to) p.set('to', f.to.toISOString());
  if (f.unusual) p.set('unusual', f.unusual);
  if (f.sort && f.sort !== 'desc') p.set('sort', f.sort);
  for (const [k, v] of Object.entries(extra)) p.set(k, v);
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** An invoice's amount in major units of its currency ("25.00 USD"); minor units when the currency is not listed. */
export function fiatText(amountMinor: string, currency: string): string {
  const exp = fiatExponent(currency);
  if (exp === undefined || !/^\d+$/.test(amountMinor)) return `${amountMinor} ${currency} (minor units)`;
  const s = formatUnits(BigInt(amountMinor), exp);
  const [whole, frac = ''] = s.split('.');
  return `${whole}${exp > 0 ? `.${frac.padEnd(exp, '0')}` : ''} ${currency}`;
}

/**
 * One CSV cell (RFC 4180 quoting). A cell that a spreadsheet would read as a formula (starting with
 * =, +, -, @, a tab or a carriage return) is prefixed with an apostrophe (OWASP's CSV injection
 * rule): a buyer's email or a merchant's order id never runs in the accountant's spreadsheet.
 */
export function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  let s = typeof value === 'number' ? String(value) : value;
  if (s === '') return s;
  const first = s.charCodeAt(0);
  // = + - @ tab CR
  if (first === 61 || first === 43 || first === 45 || first === 64 || first === 9 || first === 13) s = `'${s}`;
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const NEEDS_QUOTES = /[",\r\n]/;

export function csvLine(cells: (string | number | null | undefined)[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
