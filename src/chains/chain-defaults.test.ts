import { test } from 'node:test';
import assert from 'node:assert/strict';
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
