import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseReportDate, REPORT_COLUMNS, reportCsv, type ReportRow } from './report.ts';

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
});
