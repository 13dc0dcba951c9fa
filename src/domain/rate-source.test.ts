import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPeggedRateSource, createStaticRateSource } from './rate-source.ts';
import { createRateSourceFromConfig } from './rate-source-config.ts';

const AT = new Date('2026-05-01T00:00:00.000Z');

test('createStaticRateSource() answers table entries case-insensitively and null otherwise', async () => {
  const source = createStaticRateSource({ BTC: { USD: '60000', eur: '55000.5' } }, { now: () => AT });
  assert.equal(source.name, 'static');
  assert.deepEqual(await source.getRate('btc', 'usd'), { rate: '60000', at: AT });
  assert.deepEqual(await source.getRate('BTC', 'EUR'), { rate: '55000.5', at: AT });
  assert.equal(await source.getRate('BTC', 'GBP'), null);
  assert.equal(await source.getRate('ETH', 'USD'), null);
  assert.throws(() => createStaticRateSource({ BTC: { USD: '6e4' } }), RangeError);
});

test('createPeggedRateSource() answers 1 for pegged pairs and delegates the rest', async () => {
  const inner = createStaticRateSource({ USDT: { EUR: '0.92', USD: '0.97' }, ETH: { USD: '3000' } }, { now: () => AT });
  const pegged = createPeggedRateSource(inner, { now: () => AT });
  assert.equal(pegged.name, 'static');
  assert.deepEqual(await pegged.getRate('USDT', 'USD'), { rate: '1', at: AT, source: 'peg' });
  assert.deepEqual(await pegged.getRate('usdc', 'usd'), { rate: '1', at: AT, source: 'peg' });
  assert.deepEqual(await pegged.getRate('USDT', 'EUR'), { rate: '0.92', at: AT });
  assert.deepEqual(await pegged.getRate('ETH', 'USD'), { rate: '3000', at: AT });
  assert.equal(await pegged.getRate('USDC', 'EUR'), null);
});

test('createRateSourceFromConfig(): an explicit static stablecoin rate overrides the peg', async () => {
  const config = {
    source: 'static' as const,
    static: { ETH: { USD: '3000' }, USDC: { USD: '0.999' } },
    http: { baseUrl: 'http://127.0.0.1:9', ttlSeconds: 60, timeoutMs: 100 },
  };
  const source = createRateSourceFromConfig(config, {});
  assert.equal((await source.getRate('USDC', 'USD'))?.rate, '0.999');
  assert.equal((await source.getRate('USDT', 'USD'))?.source, 'peg');
  assert.equal((await source.getRate('ETH', 'USD'))?.rate, '3000');
  // With pegs switched off, USDT has no rate in this table.
  assert.equal(await createRateSourceFromConfig({ ...config, pegs: {} }, {}).getRate('USDT', 'USD'), null);
  assert.equal(createRateSourceFromConfig({ ...config, source: 'http' }, {}).name, 'coingecko');
});
