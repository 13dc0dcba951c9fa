import { test } from 'node:test';
import assert from 'node:assert/strict';
import { csvCell, csvLine, decodeCursor, encodeCursor, fiatText, parseInvoiceQuery, queryStringOf } from './invoice-list.ts';

test('csvCell() defuses formulas and quotes what RFC 4180 needs', () => {
  assert.equal(csvCell('=1+1'), "'=1+1");
  assert.equal(csvCell('+1'), "'+1");
  assert.equal(csvCell('-1'), "'-1");
  assert.equal(csvCell('@SUM(A1)'), "'@SUM(A1)");
  assert.equal(csvCell('\tx'), "'\tx");
  assert.equal(csvCell('a,b'), '"a,b"');
  assert.equal(csvCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvCell('two\nlines'), '"two\nlines"');
  assert.equal(csvCell('=a,"b"'), `"'=a,""b"""`);
  assert.equal(csvCell(null), '');
  assert.equal(csvCell(3), '3');
  assert.equal(csvLine(['a', null, '=b']), "a,,'=b\r\n");
});

test('a cursor survives its round trip; anything else is refused', () => {
  const c = { createdAt: new Date('2026-10-01T12:00:00.123Z'), id: 'abc123' };
  assert.deepEqual(decodeCursor(encodeCursor(c), 'after'), c);
  for (const bad of ['', '!!', Buffer.from('x.abc').toString('base64url'), Buffer.from('12.ABC').toString('base64url'), 'a'.repeat(100)]) {
    assert.throws(() => decodeCursor(bad, 'after'), (err: { code?: string }) => err.code === 'VALIDATION_ERROR', bad);
  }
});

test('parseInvoiceQuery() reads the form and refuses what it does not know', () => {
  const q = parseInvoiceQuery({ q: ' 0xABC ', status: ['PAID', 'OPEN,PAID'], coin: 'usdt', from: '2026-10-01', to: '2026-10-01', unusual: 'late', sort: 'asc', limit: '10', chain: '' });
  assert.equal(q.q, '0xABC');
  assert.deepEqual(q.status, ['PAID', 'OPEN']);
  assert.equal(q.coin, 'USDT');
  assert.equal(q.chain, null, 'an empty field is not given');
  assert.equal(q.from?.toISOString(), '2026-10-01T00:00:00.000Z');
  assert.equal(q.to?.toISOString(), '2026-10-02T00:00:00.000Z', 'a date to is the whole day');
  assert.equal(q.limit, 10);
  assert.equal(queryStringOf(q), '?q=0xABC&status=PAID%2COPEN&coin=USDT&from=2026-10-01T00%3A00%3A00.000Z&to=2026-10-02T00%3A00%3A00.000Z&unusual=late&sort=asc');
  for (const bad of [{ x: '1' }, { status: 'NOPE' }, { limit: '0' }, { from: '2026-02-30' }, { q: ['a', 'b'] }, { sort: 'up' }, { after: 'a', before: 'b' }]) {
    assert.throws(() => parseInvoiceQuery(bad), (err: { code?: string }) => err.code === 'VALIDATION_ERROR', JSON.stringify(bad));
  }
  assert.throws(() => parseInvoiceQuery({ after: encodeCursor({ createdAt: new Date(1), id: 'a' }) }, { allowPaging: false }));
});

test('fiatText() shows major units by the currency exponent', () => {
  assert.equal(fiatText('2500', 'USD'), '25.00 USD');
  assert.equal(fiatText('2500', 'JPY'), '2500 JPY');
  assert.equal(fiatText('2500', 'KWD'), '2.500 KWD');
  assert.equal(fiatText('7', 'XYZ'), '7 XYZ (minor units)');
});
