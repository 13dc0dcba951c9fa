import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import type { ChainSlug } from '../chains/slugs.ts';
import type { Common } from '../common.ts';
import { getMerchantOrThrow } from '../store/merchants.ts';
import { paymentsCompleted, paymentsOf, refundsConfirmed, sweepsFinal, uncreditedReceipts, type PaymentReceipt } from '../store/report-rows.ts';
import { UsageError } from '../domain/errors.ts';
import { fiatExponent } from '../domain/fiat-currencies.ts';
import { formatUnits, parseUnits } from '../domain/money.ts';
import { atomicToMinor } from '../domain/pricing.ts';

// `chaingate report` (docs/report.md): one row per movement of money between two times, what an
// accountant books: payments received at their fiat value, funds that came after a payment ended,
// sweeps and refunds with their fees. Amounts stay exact decimal strings from the store to the file.

export const REPORT_COLUMNS = [
  'kind',
  'time',
  'chain',
  'network',
  'coin',
  'amount',
  'fiat_currency',
  'fiat_amount',
  'rate',
  'rate_source',
  'rate_at',
  'expected',
  'expected_fiat',
  'difference',
  'difference_fiat',
  'fee',
  'fee_coin',
  'tx',
  'address',
  'counterparty',
  'payment_id',
  'reference',
  'invoice_id',
  'invoice_reference',
  'order_id',
  'invoice_amount',
  'invoice_currency',
  'merchant_id',
  'note',
] as const;
export type ReportColumn = (typeof REPORT_COLUMNS)[number];
export type ReportRow = Record<ReportColumn, string | null>;

/** Fiat minor units as a decimal with all its minor digits (39.00, not 39): how money is booked. */
function fiatString(minor: bigint, exponent: number): string {
  if (exponent === 0) return minor.toString();
  const digits = minor.toString().padStart(exponent + 1, '0');
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`;
}

/** The columns that hold numbers: never prefixed against formulas, summed by the totals. */
const NUMERIC: ReadonlySet<ReportColumn> = new Set(['amount', 'fiat_amount', 'rate', 'expected', 'expected_fiat', 'difference', 'difference_fiat', 'fee', 'invoice_amount']);

/** The invoice's own amount in major units (`2500` USD -> `25.00`); an unknown currency as given. */
function invoiceAmount(minor: string, currency: string): string {
  const exponent = fiatExponent(currency);
  return exponent === undefined || !/^\d+$/.test(minor) ? minor : fiatString(BigInt(minor), exponent);
}

const empty = (): ReportRow => Object.fromEntries(REPORT_COLUMNS.map((c) => [c, null])) as ReportRow;

/** The fiat side of a receipt: at the rate the payment was priced at (docs/report.md#fiat-values). */
function fiat(atomic: bigint, decimals: number, receipt: Pick<PaymentReceipt, 'pricing' | 'invoiceAmountMinor' | 'invoiceCurrency'> | null, wholeInvoice: boolean): Pick<ReportRow, 'fiat_currency' | 'fiat_amount' | 'rate' | 'rate_source' | 'rate_at'> {
  const pricing = receipt?.pricing;
  if (pricing?.mode === 'convert' && pricing.rate && pricing.fiat) {
    const exponent = fiatExponent(pricing.fiat) ?? 2;
    return { fiat_currency: pricing.fiat, fiat_amount: fiatString(atomicToMinor(atomic, decimals, pricing.rate, exponent), exponent), rate: pricing.rate, rate_source: pricing.source ?? null, rate_at: pricing.at ?? null };
  }
  if (receipt && wholeInvoice) {
    // Verbatim pricing: the amount paid is the invoice's own fiat amount, no rate involved.
    const exponent = fiatExponent(receipt.invoiceCurrency) ?? 0;
    return { fiat_currency: receipt.invoiceCurrency, fiat_amount: fiatString(BigInt(receipt.invoiceAmountMinor), exponent), rate: null, rate_source: 'verbatim', rate_at: null };
  }
  return { fiat_currency: null, fiat_amount: null, rate: null, rate_source: null, rate_at: null };
}

/** Fiat minor units, signed, as fiatString writes them ("-0.50"). */
function signedFiat(minor: bigint, exponent: number): string {
  return minor < 0n ? `-${fiatString(-minor, exponent)}` : fiatString(minor, exponent);
}

/**
 * What was asked of the buyer against what arrived (spec rule 10: recorded, never resolved):
 * `expected`, and `difference` = received − expected (negative: an under-payment), each in coin
 * units and, at the priced rate, in fiat (the fiat difference is the difference of the two fiat
 * values, so the columns add up to the cent).
 */
function shortfall(p: PaymentReceipt, received: bigint, receivedFiat: string | null): Pick<ReportRow, 'expected' | 'expected_fiat' | 'difference' | 'difference_fiat'> {
  let expected: bigint;
  try {
    expected = parseUnits(p.expectedAmount, p.decimals);
  } catch {
    return { expected: p.expectedAmount, expected_fiat: null, difference: null, difference_fiat: null };
  }
  const coins = { expected: formatUnits(expected, p.decimals), difference: formatUnits(received - expected, p.decimals) };
  const pricing = p.pricing;
  if (pricing?.mode !== 'convert' || !pricing.rate || !pricing.fiat || receivedFiat === null) return { ...coins, expected_fiat: null, difference_fiat: null };
  const exponent = fiatExponent(pricing.fiat) ?? 2;
  const expectedMinor = atomicToMinor(expected, p.decimals, pricing.rate, exponent);
  const receivedMinor = atomicToMinor(received, p.decimals, pricing.rate, exponent);
  return { ...coins, expected_fiat: fiatString(expectedMinor, exponent), difference_fiat: signedFiat(receivedMinor - expectedMinor, exponent) };
}

function native(chain: string): { symbol: string; decimals: number } {
  return CHAIN_DEFAULTS[chain as ChainSlug]?.native ?? { symbol: '?', decimals: 0 };
}

/** A calendar day that exists: JavaScript would read 2026-02-31 as 3 March. */
function realDay(prefix: string): boolean {
  const [y, m, d] = prefix.split('-').map(Number) as [number, number, number];
  const day = new Date(Date.UTC(y, m - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d;
}

export function parseReportDate(value: string, flag: string): Date {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00.000Z`) : new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime()) || !realDay(value.slice(0, 10))) throw new UsageError(`${flag} ${value}: not a date (YYYY-MM-DD, UTC, or an ISO 8601 time)`);
  return date;
}

/**
 * Rows between `from` (inclusive) and `to` (exclusive), ordered by time; of one merchant point when
 * `merchantId` is given, and then without sweeps: a sweep empties the chain's shared pool, whose
 * deposits belong to every point, so it is no one point's movement.
 */
export async function buildReport(common: Pick<Common, 'db'>, from: Date, to: Date, merchantId: string | null = null): Promise<ReportRow[]> {
  if (to <= from) throw new UsageError('--to must be after --from');
  const { db } = common;
  const rows: { at: Date; row: ReportRow }[] = [];

  for (const p of await paymentsCompleted(db, from, to, merchantId)) {
    const atomic = parseUnits(p.receivedAmount, p.decimals);
    const received = fiat(atomic, p.decimals, p, true);
    rows.push({
      at: p.completedAt,
      row: {
        ...empty(),
        kind: 'payment',
        time: p.completedAt.toISOString(),
        chain: p.chain,
        network: p.network,
        coin: p.symbol,
        amount: formatUnits(atomic, p.decimals),
        ...received,
        ...shortfall(p, atomic, received.fiat_amount),
        tx: p.txid,
        address: p.address,
        payment_id: p.paymentId,
        reference: p.referenceId,
        invoice_id: p.invoiceId,
        invoice_reference: p.invoiceReference,
        order_id: p.orderId,
        invoice_amount: invoiceAmount(p.invoiceAmountMinor, p.invoiceCurrency),
        invoice_currency: p.invoiceCurrency,
        merchant_id: p.merchantId,
        note: p.status === 'COMPLETED' ? null : p.status,
      },
    });
  }
  for (const t of await uncreditedReceipts(db, from, to, merchantId)) {
    const atomic = BigInt(t.amount);
    rows.push({
      at: t.seenAt,
      row: { ...empty(), kind: 'late_funds', time: t.seenAt.toISOString(), chain: t.chain, network: t.network, coin: t.symbol, amount: formatUnits(atomic, t.decimals), ...fiat(atomic, t.decimals, { pricing: t.pricing, invoiceAmountMinor: '0', invoiceCurrency: '' }, false), tx: t.txid, address: t.address, payment_id: t.paymentId, reference: t.referenceId, invoice_id: t.invoiceId, invoice_reference: t.invoiceReference, order_id: t.orderId, merchant_id: t.merchantId, note: `${t.status}: received after the payment ended, not credited` },
    });
  }
  for (const s of merchantId === null ? await sweepsFinal(db, from, to) : []) {
    const coin = native(s.chain);
    Object.entries(s.moves).forEach(([symbol, amount], i) => {
      rows.push({
        at: s.finalAt,
        row: { ...empty(), kind: 'sweep', time: s.finalAt.toISOString(), chain: s.chain, network: s.network, coin: symbol, amount: formatUnits(BigInt(amount), s.decimals[symbol] ?? coin.decimals), fee: i === 0 ? formatUnits(BigInt(s.fee), coin.decimals) : '0', fee_coin: coin.symbol, tx: s.txid, counterparty: s.to, note: `plan ${s.planId.slice(0, 16)} ${s.txKey}` },
      });
    });
  }
  const refunds = await refundsConfirmed(db, from, to);
  const refunded = await paymentsOf(db, refunds.map((r) => r.paymentId));
  for (const r of refunds) {
    const coin = native(r.chain);
    const of = refunded.get(r.paymentId) ?? null;
    if (merchantId !== null && of?.merchantId !== merchantId) continue;
    const atomic = BigInt(r.amount);
    rows.push({
      at: r.finalAt!,
      row: {
        ...empty(),
        kind: 'refund',
        time: r.finalAt!.toISOString(),
        chain: r.chain,
        network: r.network,
        coin: r.symbol,
        amount: formatUnits(atomic, r.decimals),
        // At the rate its payment was priced at, so the refund nets against the payment's row.
        ...fiat(atomic, r.decimals, of, false),
        fee: formatUnits(BigInt(r.fee), coin.decimals),
        fee_coin: coin.symbol,
        tx: r.txid,
        address: r.fromAddress,
        counterparty: r.toAddress,
        payment_id: r.paymentId,
        reference: of?.referenceId ?? null,
        invoice_id: of?.invoiceId ?? null,
        invoice_reference: of?.invoiceReference ?? null,
        order_id: of?.orderId ?? null,
        invoice_amount: of ? invoiceAmount(of.invoiceAmountMinor, of.invoiceCurrency) : null,
        invoice_currency: of?.invoiceCurrency ?? null,
        merchant_id: of?.merchantId ?? null,
        note: `refund ${r.id} from the ${r.fromKind}`,
      },
    });
  }
  return rows.sort((a, b) => a.at.getTime() - b.at.getTime()).map((r) => r.row);
}

export type ReportFormat = 'csv' | 'json';

/** What `chaingate report` and the dashboard's download ask for, as typed (validated here, once for both). */
export interface ReportRequest {
  from: string;
  to: string;
  format: string;
  /** One merchant point's rows (no sweeps); null or absent: every point's. */
  merchantId?: string | null;
}

export interface ReportFile {
  format: ReportFormat;
  from: Date;
  to: Date;
  rows: number;
  /** The file's text, the same bytes whoever asked. */
  text: string;
}

/** The names the caller's inputs go by in error messages (`--from` on the command line). */
export interface ReportLabels {
  from: string;
  to: string;
  format: string;
}

const CLI_LABELS: ReportLabels = { from: '--from', to: '--to', format: '--format' };

/**
 * The accountant's export as a file (docs/report.md): the one use case behind `chaingate report`
 * and the dashboard's Reports page, so that both give the same bytes for the same range.
 */
export async function exportReport(common: Pick<Common, 'db'>, req: ReportRequest, labels: ReportLabels = CLI_LABELS): Promise<ReportFile> {
  if (req.format !== 'csv' && req.format !== 'json') throw new UsageError(`${labels.format} ${req.format}: csv or json`);
  for (const [value, label] of [[req.from, labels.from], [req.to, labels.to]] as const) if (value.trim() === '') throw new UsageError(`${label} is required (YYYY-MM-DD)`);
  const from = parseReportDate(req.from, labels.from);
  let to = parseReportDate(req.to, labels.to);
  // A bare date names a whole day: up to the next midnight.
  if (/^\d{4}-\d{2}-\d{2}$/.test(req.to)) to = new Date(to.getTime() + 86_400_000);
  if (to <= from) throw new UsageError(`${labels.to} must be after ${labels.from}`);
  const merchantId = req.merchantId ?? null;
  if (merchantId !== null) await getMerchantOrThrow(common.db, merchantId);
  const rows = await buildReport(common, from, to, merchantId);
  const totals = reportTotals(rows);
  const text = req.format === 'csv' ? reportCsv(rows, totals) : `${JSON.stringify({ rows, totals }, null, 2)}\n`;
  return { format: req.format, from, to, rows: rows.length, text };
}

const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);
const APOSTROPHE = "'";
const NEEDS_QUOTES = /[\x22,\r\n]/;

/** A text cell a spreadsheet would run as a formula is written with a leading apostrophe (OWASP CSV injection). */
function cell(column: ReportColumn, value: string | null): string {
  if (value === null) return '';
  const text = !NUMERIC.has(column) && FORMULA_START.has(value.charAt(0)) ? APOSTROPHE + value : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * RFC 4180 CSV with a header row; amounts are plain decimals (no exponent, no thousands separator).
 * With totals, a trailing block of `total` rows follows the movements (docs/report.md#totals).
 */
export function reportCsv(rows: ReportRow[], totals?: ReportTotals): string {
  const all = totals ? [...rows, ...totalRows(totals)] : rows;
  const lines = [REPORT_COLUMNS.join(','), ...all.map((r) => REPORT_COLUMNS.map((c) => cell(c, r[c])).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

// ---------------------------------------------------------------------------------------------
// Totals: per coin (chain, network, coin) and per fiat currency, from the rows themselves, so that
// summing the file's rows in a spreadsheet gives the same figures.

export interface CoinTotal {
  chain: string;
  network: string;
  coin: string;
  /** Coin units, exact decimal strings. */
  received: string;
  lateFunds: string;
  refunded: string;
  /** received + lateFunds − refunded. */
  net: string;
  swept: string;
  /** Network fees of sweeps and refunds paid in this coin (the chain's native coin). */
  fees: string;
}

export interface FiatTotal {
  currency: string;
  received: string;
  lateFunds: string;
  refunded: string;
  net: string;
}

export interface ReportTotals {
  coins: CoinTotal[];
  fiat: FiatTotal[];
}

/** An exact signed sum of decimal strings (any number of fraction digits). */
function sumDecimals(values: readonly string[]): string {
  const scale = Math.max(0, ...values.map((v) => v.split('.')[1]?.length ?? 0));
  let total = 0n;
  for (const v of values) total += v.startsWith('-') ? -parseUnits(v.slice(1), scale) : parseUnits(v, scale);
  // Written at the precision of its inputs: fiat keeps its minor digits (12.50, not 12.5).
  const negative = total < 0n;
  const digits = (negative ? -total : total).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

const negated = (v: string): string => (v.startsWith('-') ? v.slice(1) : v === '0' || /^0(\.0+)?$/.test(v) ? v : `-${v}`);

export function reportTotals(rows: readonly ReportRow[]): ReportTotals {
  const coins = new Map<string, { chain: string; network: string; coin: string; received: string[]; lateFunds: string[]; refunded: string[]; swept: string[]; fees: string[] }>();
  const coinOf = (chain: string, network: string, coin: string) => {
    const key = `${chain}\u0000${network}\u0000${coin}`;
    let entry = coins.get(key);
    if (!entry) coins.set(key, (entry = { chain, network, coin, received: [], lateFunds: [], refunded: [], swept: [], fees: [] }));
    return entry;
  };
  const fiats = new Map<string, { received: string[]; lateFunds: string[]; refunded: string[] }>();
  const fiatOf = (currency: string) => {
    let entry = fiats.get(currency);
    if (!entry) fiats.set(currency, (entry = { received: [], lateFunds: [], refunded: [] }));
    return entry;
  };
  for (const r of rows) {
    if (!r.chain || !r.network || !r.coin || r.amount === null) continue;
    const bucket = { payment: 'received', late_funds: 'lateFunds', refund: 'refunded', sweep: 'swept' }[r.kind ?? ''] as 'received' | 'lateFunds' | 'refunded' | 'swept' | undefined;
    if (!bucket) continue;
    coinOf(r.chain, r.network, r.coin)[bucket].push(r.amount);
    if (r.fee !== null && r.fee_coin) coinOf(r.chain, r.network, r.fee_coin).fees.push(r.fee);
    if (bucket !== 'swept' && r.fiat_currency && r.fiat_amount !== null) fiatOf(r.fiat_currency)[bucket].push(r.fiat_amount);
  }
  return {
    coins: [...coins.values()].map((c) => ({
      chain: c.chain,
      network: c.network,
      coin: c.coin,
      received: sumDecimals(c.received),
      lateFunds: sumDecimals(c.lateFunds),
      refunded: sumDecimals(c.refunded),
      net: sumDecimals([...c.received, ...c.lateFunds, ...c.refunded.map(negated)]),
      swept: sumDecimals(c.swept),
      fees: sumDecimals(c.fees),
    })),
    fiat: [...fiats.entries()].map(([currency, f]) => ({
      currency,
      received: sumDecimals(f.received),
      lateFunds: sumDecimals(f.lateFunds),
      refunded: sumDecimals(f.refunded),
      net: sumDecimals([...f.received, ...f.lateFunds, ...f.refunded.map(negated)]),
    })),
  };
}

/** The totals as trailing CSV rows of kind `total`: the net in `amount` (per coin) or `fiat_amount` (per currency). */
function totalRows(totals: ReportTotals): ReportRow[] {
  return [
    ...totals.coins.map((c) => ({
      ...empty(),
      kind: 'total',
      chain: c.chain,
      network: c.network,
      coin: c.coin,
      amount: c.net,
      fee: c.fees,
      fee_coin: c.coin,
      note: `received ${c.received} + late funds ${c.lateFunds} - refunded ${c.refunded} = ${c.net} ${c.coin}; swept ${c.swept}; fees ${c.fees}`,
    })),
    ...totals.fiat.map((f) => ({
      ...empty(),
      kind: 'total',
      fiat_currency: f.currency,
      fiat_amount: f.net,
      note: `received ${f.received} + late funds ${f.lateFunds} - refunded ${f.refunded} = ${f.net} ${f.currency}`,
    })),
  ];
}
