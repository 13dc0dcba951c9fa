import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../domain/errors.ts';
import { availableCurrencies, findToken, getNetwork, isEvm, pollIntervalMs } from './registry.ts';
import { CHAIN_SLUGS, isChainSlug } from './slugs.ts';
import { resolveChains, validateAddress } from '../families/families.ts';

const SPEC_MATRIX: Record<string, string[]> = {
  ethereum: ['ETH', 'USDT', 'USDC'],
  polygon: ['POL', 'USDT', 'USDC'],
  bsc: ['BNB', 'USDT', 'USDC'],
  bitcoin: ['BTC'],
  tron: ['TRX', 'USDT'],
  solana: ['SOL', 'USDC'],
  ton: ['TON', 'USDT'],
  arbitrum: ['ETH', 'USDT', 'USDC'],
  optimism: ['ETH', 'USDT', 'USDC'],
  base: ['ETH', 'USDC'],
  avalanche: ['AVAX', 'USDT', 'USDC'],
};

test('the mainnet registry carries exactly the spec token matrix', () => {
  const registry = resolveChains({});
  assert.deepEqual([...CHAIN_SLUGS].sort(), Object.keys(SPEC_MATRIX).sort());
  for (const slug of CHAIN_SLUGS) {
    assert.deepEqual(
      getNetwork(registry, slug, false).tokens.map((t) => t.symbol),
      SPEC_MATRIX[slug],
      slug,
    );
  }
});

test('the spec-fixed confirmation counts and block times hold', () => {
  const registry = resolveChains({});
  assert.equal(getNetwork(registry, 'ethereum', false).requiredConfirmations, 12);
  assert.equal(getNetwork(registry, 'polygon', false).requiredConfirmations, 128);
  assert.equal(getNetwork(registry, 'bitcoin', false).requiredConfirmations, 3);
  assert.equal(getNetwork(registry, 'tron', false).requiredConfirmations, 19);
  assert.equal(getNetwork(registry, 'arbitrum', false).blockTimeMs, 250);
  assert.equal(getNetwork(registry, 'ethereum', false).blockTimeMs, 12_000);
  assert.equal(getNetwork(registry, 'bitcoin', false).blockTimeMs, 600_000);
});

test('every network has a name, label, rpc url and positive numbers; testnets are never MAINNET', () => {
  const registry = resolveChains({});
  for (const slug of CHAIN_SLUGS) {
    for (const testnet of [false, true]) {
      const n = getNetwork(registry, slug, testnet);
      assert.equal(n.network === 'MAINNET', !testnet, `${slug} ${testnet}`);
      assert.match(n.network, /^[A-Z0-9_]+$/);
      assert.ok(n.label.length > 0 && n.rpcUrl.startsWith('https://'));
      assert.ok(n.blockTimeMs > 0 && n.requiredConfirmations > 0);
      assert.equal(n.chainId !== null, n.family === 'evm', `${slug} chainId`);
      assert.equal(n.tokens[0]?.address, null, 'native coin first');
    }
  }
});

test('every built-in token address passes its family validator unchanged', () => {
  const registry = resolveChains({});
  for (const slug of CHAIN_SLUGS) {
    for (const testnet of [false, true]) {
      const n = getNetwork(registry, slug, testnet);
      for (const token of n.tokens) {
        if (token.address === null) continue;
        // Stored in canonical form: EIP-55 for EVM, bounceable for the TON jetton master.
        assert.equal(validateAddress(n.family, token.address, testnet, { kind: 'contract' }), token.address, `${slug} ${token.symbol}`);
      }
    }
  }
});

test('well-known token facts: Ethereum USDT has 6 decimals, BSC pegged stablecoins have 18', () => {
  const registry = resolveChains({});
  assert.deepEqual(findToken(getNetwork(registry, 'ethereum', false), 'USDT'), {
    symbol: 'USDT',
    decimals: 6,
    address: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
  });
  assert.equal(findToken(getNetwork(registry, 'bsc', false), 'USDT')?.decimals, 18);
  assert.equal(findToken(getNetwork(registry, 'bsc', false), 'usdc')?.decimals, 18);
  assert.deepEqual(findToken(getNetwork(registry, 'bitcoin', false), 'BTC'), { symbol: 'BTC', decimals: 8, address: null });
  assert.equal(findToken(getNetwork(registry, 'bitcoin', false), 'USDT'), undefined);
  // A testnet without an official token offers the native coin only.
  assert.deepEqual(getNetwork(registry, 'tron', true).tokens.map((t) => t.symbol), ['TRX']);
  assert.deepEqual(getNetwork(registry, 'ethereum', true).tokens.map((t) => t.symbol), ['ETH', 'USDC']);
});

test('resolveChains() merges overrides per chain and network', () => {
  const registry = resolveChains({
    ethereum: {
      mainnet: {
        rpcUrl: 'https://rpc.example.org/eth',
        confirmations: 20,
        tokens: { USDC: { address: '0x1c7d4b196cb0c7b01d743fbc6116a902379c7238' } },
        paymentContract: '0x9858effd232b4033e47d90003d41ec34ecaeda94',
        traces: true,
      },
      testnet: { blockTimeMs: 6000, startMargin: 100 },
    },
    bsc: { enabled: false, testnet: { tokens: { USDT: { address: '0x337610d27c682E347C9cD60BD4b3b107C9d34dDd', decimals: 18 } } } },
  });
  const eth = getNetwork(registry, 'ethereum', false);
  assert.equal(eth.rpcUrl, 'https://rpc.example.org/eth');
  assert.equal(eth.requiredConfirmations, 20);
  assert.equal(eth.startMargin, 20);
  assert.equal(eth.traces, true);
  assert.equal(eth.paymentContract, '0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
  // Address override keeps the default decimals and is checksummed.
  assert.deepEqual(findToken(eth, 'USDC'), { symbol: 'USDC', decimals: 6, address: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238' });
  assert.equal(findToken(eth, 'USDT')?.address, '0xdAC17F958D2ee523a2206206994597C13D831ec7');
  // The mainnet override leaves the testnet alone, and the other way round.
  const sepolia = getNetwork(registry, 'ethereum', true);
  assert.equal(sepolia.requiredConfirmations, 3);
  assert.equal(sepolia.blockTimeMs, 6000);
  assert.equal(sepolia.startMargin, 100);
  assert.equal(sepolia.paymentContract, null);
  assert.equal(eth.blockTimeMs, 12_000);

  const bscTest = getNetwork(registry, 'bsc', true);
  assert.equal(bscTest.enabled, false);
  assert.deepEqual(bscTest.tokens.map((t) => t.symbol), ['BNB', 'USDT']);
});

test('resolveChains() names the offending key', () => {
  const fails = (overrides: Parameters<typeof resolveChains>[0], pattern: RegExp) =>
    assert.throws(() => resolveChains(overrides), (e: unknown) => e instanceof UsageError && pattern.test(e.message));
  fails({ foo: {} }, /^chains\.foo: unknown chain slug/);
  fails({ ethereum: { mainnet: { tokens: { USDT: { address: '0x9858efFD232B4033E47d90003D41EC34EcaEda94' } } } } }, /^chains\.ethereum\.mainnet\.tokens\.USDT\.address: .*checksum/);
  fails({ bitcoin: { mainnet: { tokens: { USDT: { address: 'x' } } } } }, /^chains\.bitcoin\.mainnet\.tokens\.USDT: Bitcoin does not carry USDT/);
  fails({ base: { mainnet: { tokens: { USDT: { address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' } } } } }, /^chains\.base\.mainnet\.tokens\.USDT/);
  fails({ ethereum: { mainnet: { tokens: { ETH: { address: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' } } } } }, /native coin/);
  fails({ tron: { testnet: { tokens: { USDT: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t' } } } } }, /^chains\.tron\.testnet\.tokens\.USDT\.decimals: required/);
  fails({ solana: { mainnet: { paymentContract: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v' } } }, /^chains\.solana\.mainnet\.paymentContract: .*EVM chains only/);
  fails({ tron: { mainnet: { treasury: '0x9858EfFD232B4033E47d90003D41EC34EcaEda94' } } }, /^chains\.tron\.mainnet\.treasury: not a Tron address/);
  fails({ bitcoin: { testnet: { treasury: 'bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu' } } }, /^chains\.bitcoin\.testnet\.treasury: .*mainnet address/);
});

test('getNetwork() refuses unknown slugs; isEvm and isChainSlug read the registry', () => {
  const registry = resolveChains({});
  assert.throws(() => getNetwork(registry, 'dogecoin', false), UsageError);
  assert.equal(getNetwork(registry, 'polygon', true).network, 'AMOY');
  assert.equal(getNetwork(registry, 'bitcoin', true).network, 'TESTNET4');
  assert.equal(isChainSlug('base'), true);
  assert.equal(isChainSlug('Base'), false);
  assert.deepEqual(CHAIN_SLUGS.filter(isEvm), ['ethereum', 'polygon', 'bsc', 'arbitrum', 'optimism', 'base', 'avalanche']);
  assert.equal(isEvm('nope'), false);
});

test('pollIntervalMs() follows the block time with a 5 s floor', () => {
  const registry = resolveChains({});
  assert.equal(pollIntervalMs(getNetwork(registry, 'arbitrum', false)), 5_000);
  assert.equal(pollIntervalMs(getNetwork(registry, 'ethereum', false)), 12_000);
  assert.equal(pollIntervalMs(getNetwork(registry, 'bitcoin', false)), 600_000);
});

test('availableCurrencies() intersects the registry with the merchant choices', () => {
  const registry = resolveChains({ avalanche: { enabled: false } });
  const all = availableCurrencies(registry, { acceptedChains: null, acceptedCurrencies: null });
  assert.deepEqual(all.availableBlockchains, CHAIN_SLUGS.filter((s) => s !== 'avalanche'));
  assert.deepEqual(all.availableCurrencies.ethereum, ['ETH', 'USDT', 'USDC']);
  assert.equal(all.availableCurrencies.avalanche, undefined);

  const some = availableCurrencies(registry, {
    acceptedChains: ['ethereum', 'bitcoin', 'tron', 'avalanche', 'nonsense'],
    acceptedCurrencies: { ethereum: ['usdc', 'DAI'], bitcoin: [] },
  });
  // bitcoin with nothing accepted drops out; tron has no entry, so all of its tokens stay.
  assert.deepEqual(some, {
    availableBlockchains: ['ethereum', 'tron'],
    availableCurrencies: { ethereum: ['USDC'], tron: ['TRX', 'USDT'] },
  });

  const testnet = availableCurrencies(registry, { acceptedChains: ['tron', 'solana'], acceptedCurrencies: null }, true);
  assert.deepEqual(testnet.availableCurrencies, { tron: ['TRX'], solana: ['SOL', 'USDC'] });
});
