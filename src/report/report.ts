import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import type { ChainSlug } from '../chains/slugs.ts';
import type { Common } from '../common.ts';
import { paymentsCompleted, refundsConfirmed, sweepsFinal, uncreditedReceipts, type PaymentReceipt } from '../store/report-rows.ts';
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
  'fee',
  'fee_coin',
  'tx',
  'address',
  'counterparty',
  'payment_id',
  'reference',
  'order_id',
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

function native(chain: string): { symbol: string; decimals: number } {
  return CHAIN_DEFAULTS[chain as ChainSlug]?.native ?? { symbol: '?', decimals: 0 };
}

export function parseReportDate(value: string, flag: string): Date {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? new Date(`${value}T00:00:00.000Z`) : new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime())) throw new UsageError(`${flag} ${value}: not a date (YYYY-MM-DD, UTC, or an ISO 8601 time)`);
  return date;
}

/** Rows between `from` (inclusive) and `to` (exclusive), ordered by time. */
export async function buildReport(common: Pick<Common, 'db'>, from: Date, to: Date): Promise<ReportRow[]> {
  if (to <= from) throw new UsageError('--to must be after --from');
  const { db } = common;
  const rows: { at: Date; row: ReportRow }[] = [];

  for (const p of await paymentsCompleted(db, from, to)) {
    const atomic = parseUnits(p.receivedAmount, p.decimals);
    rows.push({
      at: p.completedAt,
      row: { ...empty(), kind: 'payment', time: p.completedAt.toISOString(), chain: p.chain, network: p.network, coin: p.symbol, amount: formatUnits(atomic, p.decimals), ...fiat(atomic, p.decimals, p, true), tx: p.txid, address: p.address, payment_id: p.paymentId, reference: p.referenceId, order_id: p.orderId, merchant_id: p.merchantId, note: p.status === 'COMPLETED' ? null : p.status },
    });
  }
  for (const t of await uncreditedReceipts(db, from, to)) {
    const atomic = BigInt(t.amount);
    rows.push({
      at: t.seenAt,
      row: { ...empty(), kind: 'late_funds', time: t.seenAt.toISOString(), chain: t.chain, network: t.network, coin: t.symbol, amount: formatUnits(atomic, t.decimals), ...fiat(atomic, t.decimals, { pricing: t.pricing, invoiceAmountMinor: '0', invoiceCurrency: '' }, false), tx: t.txid, address: t.address, payment_id: t.paymentId, reference: t.referenceId, order_id: t.orderId, merchant_id: t.merchantId, note: `${t.status}: received after the payment ended, not credited` },
    });
  }
  for (const s of await sweepsFinal(db, from, to)) {
    const coin = native(s.chain);
    Object.entries(s.moves).forEach(([symbol, amount], i) => {
      rows.push({
        at: s.finalAt,
        row: { ...empty(), kind: 'sweep', time: s.finalAt.toISOString(), chain: s.chain, network: s.network, coin: symbol, amount: formatUnits(BigInt(amount), s.decimals[symbol] ?? coin.decimals), fee: i === 0 ? formatUnits(BigInt(s.fee), coin.decimals) : '0', fee_coin: coin.symbol, tx: s.txid, counterparty: s.to, note: `plan ${s.planId.slice(0, 16)} ${s.txKey}` },
      });
    });
  }
  for (const r of await refundsConfirmed(db, from, to)) {
    const coin = native(r.chain);
    rows.push({
      at: r.finalAt!,
      row: { ...empty(), kind: 'refund', time: r.finalAt!.toISOString(), chain: r.chain, network: r.network, coin: r.symbol, amount: formatUnits(BigInt(r.amount), r.decimals), fee: formatUnits(BigInt(r.fee), coin.decimals), fee_coin: coin.symbol, tx: r.txid, address: r.fromAddress, counterparty: r.toAddress, payment_id: r.paymentId, note: `refund ${r.id} from the ${r.fromKind}` },
    });
  }
  return rows.sort((a, b) => a.at.getTime() - b.at.getTime()).map((r) => r.row);
}

const FORMULA_START = new Set(['=', '+', '-', '@', '\t', '\r']);
const APOSTROPHE = "'";
const NEEDS_QUOTES = /[\x22,\r\n]/;

/** A text cell a spreadsheet would run as a formula is written with a leading apostrophe (OWASP CSV injection). */
function cell(column: ReportColumn, value: string | null): string {
  if (value === null) return '';
  const numeric = column === 'amount' || column === 'fiat_amount' || column === 'rate' || column === 'fee';
  const text = !numeric && FORMULA_START.has(value.charAt(0)) ? APOSTROPHE + value : value;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** RFC 4180 CSV with a header row; amounts are plain decimals (no exponent, no thousands separator). */
export function reportCsv(rows: ReportRow[]): string {
  const lines = [REPORT_COLUMNS.join(','), ...rows.map((r) => REPORT_COLUMNS.map((c) => cell(c, r[c])).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}
