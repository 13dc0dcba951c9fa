import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayError } from './errors.ts';
import { atomicToMinor, convertMinorToAtomic, priceInvoice } from './pricing.ts';
import type { PriceInvoiceInput } from './pricing.ts';
import { createPeggedRateSource, createStaticRateSource } from './rate-source.ts';
import type { RateSource } from './rate-source.ts';
import { fiatExponent, isFiatCurrency } from './fiat-currencies.ts';

const NOW = new Date('2026-05-01T12:00:00.000Z');
const rates = createPeggedRateSource(
  createStaticRateSource(
    {
      ETH: { USD: '3000', EUR: '2750', JPY: '450000', KWD: '920.5' },
      BTC: { USD: '60000.12' },
      TRX: { USD: '0.12' },
      SOL: { USD: '150' },
      POL: { USD: '0.000001' },
      WHOLE: { USD: '7' },
    },
    { now: () => NOW },
  ),
  { now: () => NOW },
);

function price(over: Partial<PriceInvoiceInput>) {
  return priceInvoice({ mode: 'convert', invoiceAmountMinor: '2500', fiatCurrency: 'USD', coin: { symbol: 'ETH', decimals: 18 }, rates, now: NOW, ...over });
}

test('convert: 2500 US cents at ETH = 3000 is 0.008333333333333334 ETH, rounded up at 18 decimals', async () => {
  const result = await price({});
  assert.equal(result.amount, '0.008333333333333334');
  assert.deepEqual(result.pricing, { mode: 'convert', rate: '3000', source: 'static', fiat: 'USD', at: NOW.toISOString() });
  // USD 2500.00 (250000 cents) is 0.8333… ETH: the last 18th-decimal digit rounds up from 3 to 4.
  assert.equal((await price({ invoiceAmountMinor: '250000' })).amount, '0.833333333333333334');
});

test('convert rounds up at 0, 2, 6, 8, 9 and 18 decimals and is exact when it divides', async () => {
  // USD 10.00 at a price of 7 = 1.428571428571…
  const at = async (decimals: number) => (await price({ invoiceAmountMinor: '1000', coin: { symbol: 'WHOLE', decimals } })).amount;
  assert.equal(await at(0), '2');
  assert.equal(await at(2), '1.43');
  assert.equal(await at(6), '1.428572');
  assert.equal(await at(8), '1.42857143');
  assert.equal(await at(9), '1.428571429');
  assert.equal(await at(18), '1.428571428571428572');
  // Exact results are not bumped: USD 21.00 / 7 = 3.
  assert.equal((await price({ invoiceAmountMinor: '2100', coin: { symbol: 'WHOLE', decimals: 18 } })).amount, '3');
  // BTC at 8 decimals with a fractional price: USD 100.00 / 60000.12 = 0.00166666333… -> 0.00166667.
  assert.equal((await price({ invoiceAmountMinor: '10000', coin: { symbol: 'BTC', decimals: 8 } })).amount, '0.00166667');
  // TRX at 6 decimals: USD 1.00 / 0.12 = 8.3333… -> 8.333334.
  assert.equal((await price({ invoiceAmountMinor: '100', coin: { symbol: 'TRX', decimals: 6 } })).amount, '8.333334');
  // SOL at 9 decimals: USD 0.01 / 150 = 0.0000666… -> 0.000066667.
  assert.equal((await price({ invoiceAmountMinor: '1', coin: { symbol: 'SOL', decimals: 9 } })).amount, '0.000066667');
});

test('convert stays exact for huge amounts and tiny prices', async () => {
  // 10^30 cents = USD 10^28; / 3000 at 18 decimals.
  const big = await price({ invoiceAmountMinor: `1${'0'.repeat(30)}` });
  assert.equal(big.amount, '3333333333333333333333333.333333333333333334');
  // A price of 0.000001: USD 0.01 buys 10000 POL, exactly.
  assert.equal((await price({ invoiceAmountMinor: '1', coin: { symbol: 'POL', decimals: 18 } })).amount, '10000');
  assert.equal(convertMinorToAtomic(10n ** 30n, 2, '3000', 18), 3333333333333333333333333333333333333333334n);
});

test('convert uses the currency exponent: JPY has 0, KWD has 3', async () => {
  // JPY 45000 (no minor unit) at 450000 JPY/ETH = 0.1 ETH.
  assert.equal((await price({ invoiceAmountMinor: '45000', fiatCurrency: 'JPY' })).amount, '0.1');
  // KWD 1.000 = 1000 fils; at 920.5 KWD/ETH -> 0.0010863661053775122…, rounded up.
  const kwd = await price({ invoiceAmountMinor: '1000', fiatCurrency: 'kwd' });
  assert.equal(kwd.amount, '0.001086366105377513');
  assert.equal(kwd.pricing.fiat, 'KWD');
  assert.equal(fiatExponent('jpy'), 0);
  assert.equal(fiatExponent('BHD'), 3);
  assert.equal(fiatExponent('EUR'), 2);
  assert.equal(isFiatCurrency('XYZ'), false);
});

test('USDT and USDC are pegged 1:1 to USD unless the peg is switched off', async () => {
  const usdt = await price({ invoiceAmountMinor: '1999', coin: { symbol: 'USDT', decimals: 6 } });
  assert.equal(usdt.amount, '19.99');
  assert.deepEqual(usdt.pricing, { mode: 'convert', rate: '1', source: 'peg', fiat: 'USD', at: NOW.toISOString() });
  // BSC's stablecoins have 18 decimals; the amount is the same number of dollars.
  assert.equal((await price({ invoiceAmountMinor: '1999', coin: { symbol: 'USDC', decimals: 18 } })).amount, '19.99');
  // The peg is USD only: USDT in EUR needs a real rate.
  await assert.rejects(price({ fiatCurrency: 'EUR', coin: { symbol: 'USDT', decimals: 6 } }), { code: 'RATE_UNAVAILABLE' });

  const market = createPeggedRateSource(createStaticRateSource({ USDT: { USD: '0.998' } }), { pegs: {} });
  assert.equal((await price({ invoiceAmountMinor: '998', coin: { symbol: 'USDT', decimals: 6 }, rates: market })).amount, '10');
});

test('verbatim mode copies invoice.amount and records the mode', async () => {
  const result = await price({ mode: 'verbatim', invoiceAmountMinor: '2500', fiatCurrency: 'XYZ' });
  assert.deepEqual(result, {
    amount: '2500',
    pricing: { mode: 'verbatim', rate: null, source: null, fiat: 'XYZ', at: NOW.toISOString() },
  });
});

test('a missing or unusable rate is RATE_UNAVAILABLE (503); an unknown fiat is INVALID_CURRENCY', async () => {
  await assert.rejects(price({ coin: { symbol: 'DOGE', decimals: 8 } }), (e: unknown) => e instanceof GatewayError && e.code === 'RATE_UNAVAILABLE' && e.status === 503);
  const broken: RateSource = { name: 'broken', getRate: async () => ({ rate: '0', at: NOW }) };
  await assert.rejects(price({ rates: broken }), { code: 'RATE_UNAVAILABLE' });
  const garbage: RateSource = { name: 'garbage', getRate: async () => ({ rate: '1e3', at: NOW }) };
  await assert.rejects(price({ rates: garbage }), { code: 'RATE_UNAVAILABLE' });
  await assert.rejects(price({ fiatCurrency: 'XYZ' }), (e: unknown) => e instanceof GatewayError && e.code === 'INVALID_CURRENCY' && e.status === 400);
  await assert.rejects(price({ invoiceAmountMinor: '12.5' }), { code: 'VALIDATION_ERROR' });
});

test('atomicToMinor: the fiat value of coin units, exactly, rounded half up', () => {
  // 1.5 ETH at 3000.25 EUR = 4500.375 EUR -> 450038 cents (half up)
  assert.equal(atomicToMinor(1_500_000_000_000_000_000n, 18, '3000.25', 2), 450038n);
  // 0.00012345 BTC at 65000 USD = 8.02425 USD -> 802 cents
  assert.equal(atomicToMinor(12_345n, 8, '65000', 2), 802n);
  // 1 wei at 3000 USD is less than half a cent
  assert.equal(atomicToMinor(1n, 18, '3000', 2), 0n);
  // no fraction in JPY
  assert.equal(atomicToMinor(2_500_000n, 6, '149.5', 0), 374n);
  // a value no float holds exactly stays exact
  assert.equal(atomicToMinor(123_456_789_012_345_678_901n, 18, '1', 2), 12346n);
});
