import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReportDate, REPORT_COLUMNS, reportCsv, reportTotals, type ReportRow } from './report.ts';

const row = (fields: Partial<ReportRow>): ReportRow => ({ ...(Object.fromEntries(REPORT_COLUMNS.map((c) => [c, null])) as ReportRow), ...fields });

test('CSV: a header, CRLF rows, quoted fields where needed, amounts written as given', () => {
  const csv = reportCsv([row({ kind: 'payment', amount: '0.000000000000000001', fiat_amount: '0.00', note: 'a "quoted", note\nover two lines' })]);
  const [header, line, end] = csv.split('\r\n');
  assert.equal(header, REPORT_COLUMNS.join(','));
  assert.equal(end, '');
  assert.match(line!, /^payment,,,,,0\.000000000000000001,,0\.00,/);
  assert.ok(line!.endsWith('"a ""quoted"", note\nover two lines"'));
});

test('CSV: a text cell a spreadsheet would run as a formula starts with an apostrophe; numbers never do', () => {
  const csv = reportCsv([row({ kind: 'payment', order_id: '=HYPERLINK("http://x")', reference: '+1', note: '@SUM(A1)', amount: '5' })]);
  assert.match(csv, /,"'=HYPERLINK\(""http:\/\/x""\)",/);
  assert.match(csv, /,'\+1,/);
  assert.match(csv, /,'@SUM\(A1\)\r\n$/);
  assert.match(csv, /^payment,,,,,5,/m);
});

test('dates: a day is UTC midnight; an ISO time as given; anything else is refused', () => {
  assert.equal(parseReportDate('2026-11-01', '--from').toISOString(), '2026-11-01T00:00:00.000Z');
  assert.equal(parseReportDate('2026-11-01T12:30:00+01:00', '--from').toISOString(), '2026-11-01T11:30:00.000Z');
  assert.throws(() => parseReportDate('11/01/2026', '--from'), /--from 11\/01\/2026: not a date/);
  assert.throws(() => parseReportDate('2026-13-45', '--to'), /--to 2026-13-45: not a date/);
  assert.throws(() => parseReportDate('2026-02-31', '--to'), /--to 2026-02-31: not a date/, 'not read as 3 March');
  assert.throws(() => parseReportDate('2026-02-30T10:00:00Z', 'from'), /from 2026-02-30T10:00:00Z: not a date/);
  assert.equal(parseReportDate('2028-02-29', '--from').toISOString(), '2028-02-29T00:00:00.000Z');
});

test('totals: per coin and per fiat currency, received + late funds − refunded = net, exact to the last digit', () => {
  const rows = [
    row({ kind: 'payment', chain: 'tron', network: 'MAINNET', coin: 'USDT', amount: '24.5', fiat_currency: 'USD', fiat_amount: '24.50', expected: '25', difference: '-0.5' }),
    row({ kind: 'payment', chain: 'tron', network: 'MAINNET', coin: 'USDT', amount: '30', fiat_currency: 'USD', fiat_amount: '30.00', expected: '25', difference: '5' }),
    row({ kind: 'refund', chain: 'tron', network: 'MAINNET', coin: 'USDT', amount: '5', fiat_currency: 'USD', fiat_amount: '5.00', fee: '13.3959', fee_coin: 'TRX' }),
    row({ kind: 'late_funds', chain: 'tron', network: 'MAINNET', coin: 'USDT', amount: '0.000001', fiat_currency: 'USD', fiat_amount: '0.00' }),
    row({ kind: 'sweep', chain: 'tron', network: 'MAINNET', coin: 'USDT', amount: '49.5', fee: '0', fee_coin: 'TRX' }),
    row({ kind: 'payment', chain: 'ethereum', network: 'MAINNET', coin: 'USDT', amount: '0.1', fiat_currency: 'EUR', fiat_amount: '0.09' }),
  ];
  const totals = reportTotals(rows);
  assert.deepEqual(totals.coins.find((c) => c.chain === 'tron' && c.coin === 'USDT'), { chain: 'tron', network: 'MAINNET', coin: 'USDT', received: '54.5', lateFunds: '0.000001', refunded: '5', net: '49.500001', swept: '49.5', fees: '0' });
  assert.equal(totals.coins.find((c) => c.coin === 'TRX')!.fees, '13.3959');
  assert.equal(totals.coins.find((c) => c.chain === 'ethereum')!.net, '0.1', 'USDT on another chain is another coin');
  assert.deepEqual(totals.fiat.find((f) => f.currency === 'USD'), { currency: 'USD', received: '54.50', lateFunds: '0.00', refunded: '5.00', net: '49.50' });
  const csv = reportCsv(rows, totals);
  assert.match(csv, /\r\ntotal,,tron,MAINNET,USDT,49\.500001,.*received 54\.5 \+ late funds 0\.000001 - refunded 5 = 49\.500001 USDT/);
  assert.match(csv, /\r\ntotal,,,,,,USD,49\.50,/);
  assert.match(csv, /payment,,tron,MAINNET,USDT,24\.5,USD,24\.50,,,,25,,-0\.5,/, 'a negative difference is a number, not a formula-escaped text');
});
