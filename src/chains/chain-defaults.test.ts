import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadConfig } from '../config/load-config.ts';
import { CHAIN_DEFAULTS } from './chain-defaults.ts';
import { getNetwork } from './registry.ts';
import { resolveChains } from '../families/families.ts';

test('bsc defaults are not BNB Chain\'s own dataseed endpoints, which answer eth_getLogs with "does not exist/is not available"', () => {
  // The defaults until the change: https://bsc-dataseed.bnbchain.org and https://data-seed-prebsc-1-s1.bnbchain.org:8545
  // (and their bsc-dataseed*.binance.org / defibit / ninicoin siblings, all with eth_getLogs disabled).
  for (const net of ['mainnet', 'testnet'] as const) {
    const url = CHAIN_DEFAULTS.bsc[net].rpcUrl;
    assert.doesNotMatch(url, /data-?seed/i, `bsc ${net}: ${url}`);
    assert.doesNotMatch(new URL(url).host, /(bnbchain\.org|binance\.org|defibit\.io|ninicoin\.io)$/, `bsc ${net}: ${url}`);
    assert.equal(getNetwork(resolveChains({}), 'bsc', net === 'testnet').rpcUrl, url, 'and it is what an unconfigured indexer uses');
  }
});

test('bitcoin: with the shipped config the indexer asks for the tip every 15-30 s, not every block time (10 min)', () => {
  const { config } = loadConfig({ env: {} });
  const registry = resolveChains(config.chains);
  for (const testnet of [false, true]) {
    const network = getNetwork(registry, 'bitcoin', testnet);
    assert.equal(network.blockTimeMs, 600_000);
    // How `chaingate index` derives its poll (src/cli/commands/index-chain.ts).
    const pollMs = Math.max(network.pollMs ?? network.blockTimeMs, config.indexer.minPollMs);
    assert.ok(pollMs >= 15_000 && pollMs <= 30_000, `bitcoin ${testnet ? 'testnet' : 'mainnet'} polls every ${pollMs} ms`);
  }
});

test('the built-in registry holds exactly the values it held when each chain was written out by hand (test/fixtures/chain-defaults.json)', () => {
  const snapshot = JSON.parse(readFileSync(new URL('../../test/fixtures/chain-defaults.json', import.meta.url), 'utf8'));
  assert.deepStrictEqual(JSON.parse(JSON.stringify(CHAIN_DEFAULTS)), snapshot);
  // Token order is the display order; deepStrictEqual does not look at key order.
  for (const [slug, chain] of Object.entries(CHAIN_DEFAULTS)) {
    for (const net of ['mainnet', 'testnet'] as const) assert.deepEqual(Object.keys(chain[net].tokens), Object.keys(snapshot[slug][net].tokens), `${slug} ${net}`);
  }
  assert.deepEqual(Object.keys(CHAIN_DEFAULTS), Object.keys(snapshot));
});
