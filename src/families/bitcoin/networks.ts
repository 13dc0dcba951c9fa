// Bitcoin networks chaingate can index, with what the indexer checks of each: the hash of block 0
// (an API serving another chain is refused) and the proof-of-work limit (a block whose target is
// easier than the network allows is refused; regtest's limit is what lets a local node mine).

export const BITCOIN_TESTNETS = ['TESTNET4', 'SIGNET', 'REGTEST'] as const;
export type BitcoinNetworkName = 'MAINNET' | (typeof BITCOIN_TESTNETS)[number];

export interface BitcoinNetworkParams {
  /** bitcoinjs-lib's network of its addresses (testnet4 and signet share tb1). */
  js: 'bitcoin' | 'testnet' | 'regtest';
  /** Block 0's hash, as every API shows it. */
  genesis: string;
  /** nBits of the easiest target the network accepts (Bitcoin Core's consensus.powLimit). */
  powLimitBits: number;
}

export const BITCOIN_NETWORKS: Readonly<Record<BitcoinNetworkName, BitcoinNetworkParams>> = {
  // Bitcoin Core src/kernel/chainparams.cpp (CMainParams, CTestNet4Params, SigNetParams, CRegTestParams)
  MAINNET: { js: 'bitcoin', genesis: '000000000019d6689c085ae165831e934ff763ae46a2a6c172b3f1b60a8ce26f', powLimitBits: 0x1d00ffff },
  TESTNET4: { js: 'testnet', genesis: '00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043', powLimitBits: 0x1d00ffff },
  SIGNET: { js: 'testnet', genesis: '00000008819873e925422c1ff0f99f7cc9bbb232af63a077a480a3633bee1ef6', powLimitBits: 0x1e0377ae },
  REGTEST: { js: 'regtest', genesis: '0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206', powLimitBits: 0x207fffff },
};

/** The bitcoinjs-lib network name of a chaingate bitcoin network (testnet4 and signet share tb1 addresses). */
export function bitcoinJsNetwork(testnet: boolean, name?: string): BitcoinNetworkParams['js'] {
  if (name === 'REGTEST') return 'regtest';
  return testnet ? 'testnet' : 'bitcoin';
}

/** The 256-bit target an nBits value encodes (Bitcoin Core arith_uint256::SetCompact). */
export function targetOf(bits: number): bigint {
  const exponent = bits >>> 24;
  const mantissa = BigInt(bits & 0x007fffff);
  if (bits & 0x00800000) return 0n; // negative: never a valid target
  return exponent <= 3 ? mantissa >> BigInt(8 * (3 - exponent)) : mantissa << BigInt(8 * (exponent - 3));
}
