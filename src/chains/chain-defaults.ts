import type { ChainFamily, ChainSlug } from './slugs.ts';

// The built-in chain and token registry, as data. Operators override any of it under
// `chains.<slug>.<mainnet|testnet>` (see docs/chains.md); src/chains/registry.ts does the merge.
// Every contract address below was checked against the issuer's page or an explorer, named in
// the comment beside it; registry.test.ts re-validates each one with its family's address checker.
// Each chain states only what is its own; what every chain of a family shares comes from
// FAMILY_DEFAULTS, and `chain()` puts the two together.

export interface CoinSpec {
  symbol: string;
  decimals: number;
}

export interface TokenDefault {
  /** Contract (EVM, Tron), mint (Solana) or jetton master (TON) address. */
  address: string;
  decimals: number;
}

export interface NetworkDefaults {
  /** Value of payment.network: 'MAINNET' on every mainnet, an upper-case name on testnets. */
  network: string;
  /** EVM chain id; null where the chain has no numeric id of that kind. */
  chainId: number | null;
  label: string;
  /**
   * A block explorer's page of a transaction, `{txHash}` standing for the hash (the dashboard's
   * links); null where no public explorer shows the network. Overridable per network in the config.
   */
  explorerTxUrl: string | null;
  blockTimeMs: number;
  /** A public endpoint, only a default: production operators should point this at their own node or provider. */
  rpcUrl: string;
  requiredConfirmations: number;
  /** Tip poll when it should be more frequent than the block time (bitcoin: prompt detection). */
  pollMs?: number;
  /** Tokens other than the native coin that exist on this network, keyed by symbol. */
  tokens: Readonly<Record<string, TokenDefault>>;
  /**
   * EVM only: whether the network runs EIP-7702 (set-code transactions), which lets the sweep
   * planner empty token deposits that hold no gas in one fee-payer transaction; without it (or
   * unsure: false) the planner tops each deposit up with gas first (docs/sweeps/evm.md).
   */
  eip7702?: boolean;
}

export interface ChainDefaults {
  name: string;
  family: ChainFamily;
  native: CoinSpec;
  /** Non-native symbols of the spec's token matrix, in display order. A network may lack some (testnets). */
  tokenSymbols: readonly string[];
  mainnet: NetworkDefaults;
  testnet: NetworkDefaults;
}

/** What every chain of a family has unless the chain says otherwise. */
interface FamilyDefaults {
  /** The family's own coin (an EVM chain may run on another: POL, BNB, AVAX). */
  native: CoinSpec;
  /** Whether the family's transactions carry a numeric chain id (each network then names its own). */
  chainIds: boolean;
  pollMs?: number;
  /** EVM: EIP-7702 on both networks unless the chain says otherwise. */
  eip7702?: boolean;
}

const FAMILY_DEFAULTS: Readonly<Record<ChainFamily, FamilyDefaults>> = {
  evm: { native: { symbol: 'ETH', decimals: 18 }, chainIds: true, eip7702: true },
  // A block is found every 10 minutes on average but often within one: ask for the tip every 20 s.
  bitcoin: { native: { symbol: 'BTC', decimals: 8 }, chainIds: false, pollMs: 20_000 },
  tron: { native: { symbol: 'TRX', decimals: 6 }, chainIds: false },
  solana: { native: { symbol: 'SOL', decimals: 9 }, chainIds: false },
  // Masterchain blocks come every 400 ms; one poll every 5 s reads them in one call (the spec's floor).
  ton: { native: { symbol: 'TON', decimals: 9 }, chainIds: false, pollMs: 5_000 },
};

/** One network as a chain states it: its name (testnets), id (EVM), label, endpoint, depth and tokens; the block time where it differs from the chain's. */
interface NetworkSpec {
  network?: string;
  chainId?: number;
  label: string;
  explorerTxUrl: string | null;
  blockTimeMs?: number;
  rpcUrl: string;
  requiredConfirmations: number;
  tokens: Readonly<Record<string, TokenDefault>>;
}

interface ChainSpec {
  name: string;
  family: ChainFamily;
  /** Only where it is not the family's coin. */
  native?: CoinSpec;
  blockTimeMs: number;
  /** EVM: only where it is not the family's default. */
  eip7702?: boolean;
  /** The spec's token matrix follows the mainnet's tokens, in their order. */
  mainnet: NetworkSpec;
  testnet: NetworkSpec & { network: string };
}

function chain(spec: ChainSpec): ChainDefaults {
  const family = FAMILY_DEFAULTS[spec.family];
  const network = (side: NetworkSpec, name: string): NetworkDefaults => {
    if (family.chainIds !== (side.chainId !== undefined)) throw new Error(`${spec.name} ${name}: a ${spec.family} network ${family.chainIds ? 'needs' : 'has no'} chain id`);
    return {
      network: side.network ?? name,
      chainId: side.chainId ?? null,
      label: side.label,
      explorerTxUrl: side.explorerTxUrl,
      blockTimeMs: side.blockTimeMs ?? spec.blockTimeMs,
      rpcUrl: side.rpcUrl,
      requiredConfirmations: side.requiredConfirmations,
      tokens: side.tokens,
      ...(family.pollMs === undefined ? {} : { pollMs: family.pollMs }),
      ...(family.eip7702 === undefined ? {} : { eip7702: spec.eip7702 ?? family.eip7702 }),
    };
  };
  return {
    name: spec.name,
    family: spec.family,
    native: spec.native ?? family.native,
    tokenSymbols: Object.keys(spec.mainnet.tokens),
    mainnet: network(spec.mainnet, 'MAINNET'),
    testnet: network(spec.testnet, spec.testnet.network),
  };
}

export const CHAIN_DEFAULTS: Readonly<Record<ChainSlug, ChainDefaults>> = {
  ethereum: chain({
    name: 'Ethereum',
    family: 'evm',
    blockTimeMs: 12_000,
    mainnet: {
      // EIP-7702: Pectra (Prague), 7 May 2025.
      chainId: 1,
      label: 'Ethereum mainnet',
      explorerTxUrl: 'https://etherscan.io/tx/{txHash}',
      rpcUrl: 'https://ethereum-rpc.publicnode.com',
      requiredConfirmations: 12,
      tokens: {
        // Tether: https://tether.to/en/supported-protocols ; https://etherscan.io/token/0xdac17f958d2ee523a2206206994597c13d831ec7
        USDT: { address: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6 },
        // Circle: https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6 },
      },
    },
    testnet: {
      network: 'SEPOLIA',
      // EIP-7702: Pectra (Prague), 5 March 2025.
      chainId: 11_155_111,
      label: 'Ethereum Sepolia testnet',
      explorerTxUrl: 'https://sepolia.etherscan.io/tx/{txHash}',
      rpcUrl: 'https://ethereum-sepolia-rpc.publicnode.com',
      requiredConfirmations: 3,
      tokens: {
        // Circle testnet USDC (faucet.circle.com): https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238', decimals: 6 },
      },
    },
  }),

  polygon: chain({
    name: 'Polygon',
    family: 'evm',
    native: { symbol: 'POL', decimals: 18 },
    blockTimeMs: 2_000,
    mainnet: {
      // EIP-7702: Bhilai hard fork, July 2025.
      chainId: 137,
      label: 'Polygon PoS mainnet',
      explorerTxUrl: 'https://polygonscan.com/tx/{txHash}',
      rpcUrl: 'https://polygon-rpc.com',
      requiredConfirmations: 128,
      tokens: {
        // Tether on Polygon PoS (now USDT0, same contract): https://polygonscan.com/token/0xc2132d05d31c914a87c6611c10748aeb04b58e8f
        USDT: { address: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', decimals: 6 },
        // Circle native USDC (not the bridged USDC.e 0x2791…): https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', decimals: 6 },
      },
    },
    testnet: {
      network: 'AMOY',
      // EIP-7702: Bhilai hard fork, on Amoy before mainnet.
      chainId: 80_002,
      label: 'Polygon Amoy testnet',
      explorerTxUrl: 'https://amoy.polygonscan.com/tx/{txHash}',
      rpcUrl: 'https://rpc-amoy.polygon.technology',
      requiredConfirmations: 16,
      tokens: {
        // Circle testnet USDC: https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582', decimals: 6 },
      },
    },
  }),

  bsc: chain({
    name: 'BNB Smart Chain',
    family: 'evm',
    native: { symbol: 'BNB', decimals: 18 },
    // 0.75 s since the Maxwell hard fork (BEP-524, June 2025).
    blockTimeMs: 750,
    mainnet: {
      // EIP-7702: Pascal hard fork, 20 March 2025.
      chainId: 56,
      label: 'BNB Smart Chain mainnet',
      explorerTxUrl: 'https://bscscan.com/tx/{txHash}',
      // Not bsc-dataseed.bnbchain.org: BNB Chain's own dataseed endpoints disable eth_getLogs
      // ("method eth_getLogs does not exist/is not available"), which the indexer cannot do without.
      rpcUrl: 'https://bsc-rpc.publicnode.com',
      requiredConfirmations: 15,
      tokens: {
        // Binance-Peg BSC-USD, 18 decimals (not 6): https://bscscan.com/token/0x55d398326f99059ff775485246999027b3197955
        USDT: { address: '0x55d398326f99059fF775485246999027B3197955', decimals: 18 },
        // Binance-Peg USD Coin, 18 decimals (not 6): https://bscscan.com/token/0x8ac76a51cc950d9822d68b83fe1ad97b32cd580d
        USDC: { address: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', decimals: 18 },
      },
    },
    testnet: {
      network: 'BSC_TESTNET',
      // EIP-7702: Pascal hard fork, 25 February 2025.
      chainId: 97,
      label: 'BNB Smart Chain testnet',
      explorerTxUrl: 'https://testnet.bscscan.com/tx/{txHash}',
      rpcUrl: 'https://bsc-testnet-rpc.publicnode.com',
      requiredConfirmations: 5,
      // Neither Tether nor Circle publishes an official BSC testnet token: native BNB only.
      tokens: {},
    },
  }),

  arbitrum: chain({
    name: 'Arbitrum One',
    family: 'evm',
    blockTimeMs: 250,
    mainnet: {
      // EIP-7702: ArbOS 40 "Callisto", June 2025.
      chainId: 42_161,
      label: 'Arbitrum One mainnet',
      explorerTxUrl: 'https://arbiscan.io/tx/{txHash}',
      rpcUrl: 'https://arb1.arbitrum.io/rpc',
      requiredConfirmations: 240,
      tokens: {
        // Tether USDT0 (upgraded in place from the bridged USDT): https://arbiscan.io/token/0xfd086bc7cd5c481dcc9c85ebe478a1c0b69fcbb9
        USDT: { address: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9', decimals: 6 },
        // Circle native USDC (not USDC.e 0xFF97…): https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', decimals: 6 },
      },
    },
    testnet: {
      network: 'ARBITRUM_SEPOLIA',
      // EIP-7702: ArbOS 40 "Callisto", on Sepolia before mainnet.
      chainId: 421_614,
      label: 'Arbitrum Sepolia testnet',
      explorerTxUrl: 'https://sepolia.arbiscan.io/tx/{txHash}',
      rpcUrl: 'https://sepolia-rollup.arbitrum.io/rpc',
      requiredConfirmations: 40,
      tokens: {
        // Circle testnet USDC: https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0x75faf114eafb1BDbe2F0316DF893fd58CE46AA4d', decimals: 6 },
      },
    },
  }),

  optimism: chain({
    name: 'OP Mainnet',
    family: 'evm',
    blockTimeMs: 2_000,
    mainnet: {
      // EIP-7702: OP Stack Isthmus upgrade, 9 May 2025.
      chainId: 10,
      label: 'Optimism mainnet',
      explorerTxUrl: 'https://optimistic.etherscan.io/tx/{txHash}',
      rpcUrl: 'https://mainnet.optimism.io',
      requiredConfirmations: 30,
      tokens: {
        // Tether USDT0 on OP Mainnet (https://docs.usdt0.to): https://optimistic.etherscan.io/token/0x01bff41798a0bcf287b996046ca68b395dbc1071
        // The older bridged "Tether USD" 0x94b008aA00579c1307B0EF2c499aD98a8ce58e58 (6 decimals) still
        // circulates; operators who want it instead override chains.optimism.mainnet.tokens.USDT.
        USDT: { address: '0x01bFF41798a0BcF287b996046Ca68b395DbC1071', decimals: 6 },
        // Circle native USDC (not USDC.e 0x7F5c…): https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', decimals: 6 },
      },
    },
    testnet: {
      network: 'OPTIMISM_SEPOLIA',
      // EIP-7702: OP Stack Isthmus upgrade, 17 April 2025.
      chainId: 11_155_420,
      label: 'Optimism Sepolia testnet',
      explorerTxUrl: 'https://sepolia-optimism.etherscan.io/tx/{txHash}',
      rpcUrl: 'https://sepolia.optimism.io',
      requiredConfirmations: 10,
      tokens: {
        // Circle testnet USDC: https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0x5fd84259d66Cd46123540766Be93DFE6D43130D7', decimals: 6 },
      },
    },
  }),

  base: chain({
    name: 'Base',
    family: 'evm',
    blockTimeMs: 2_000,
    mainnet: {
      // EIP-7702: OP Stack Isthmus upgrade, 9 May 2025.
      chainId: 8_453,
      label: 'Base mainnet',
      explorerTxUrl: 'https://basescan.org/tx/{txHash}',
      rpcUrl: 'https://mainnet.base.org',
      requiredConfirmations: 30,
      tokens: {
        // Circle native USDC: https://developers.circle.com/stablecoins/usdc-contract-addresses ; https://basescan.org/token/0x833589fcd6edb6e08f4c7c32d4f71b54bda02913
        USDC: { address: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', decimals: 6 },
      },
    },
    testnet: {
      network: 'BASE_SEPOLIA',
      // EIP-7702: OP Stack Isthmus upgrade, 17 April 2025.
      chainId: 84_532,
      label: 'Base Sepolia testnet',
      explorerTxUrl: 'https://sepolia.basescan.org/tx/{txHash}',
      rpcUrl: 'https://sepolia.base.org',
      requiredConfirmations: 10,
      tokens: {
        // Circle testnet USDC: https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e', decimals: 6 },
      },
    },
  }),

  avalanche: chain({
    name: 'Avalanche C-Chain',
    family: 'evm',
    native: { symbol: 'AVAX', decimals: 18 },
    blockTimeMs: 2_000,
    // No EIP-7702: Avalanche's variant (ACP-209) changes nonce and balance rules and was not activated as EIP-7702; top-ups instead.
    eip7702: false,
    mainnet: {
      chainId: 43_114,
      label: 'Avalanche C-Chain mainnet',
      explorerTxUrl: 'https://snowtrace.io/tx/{txHash}',
      rpcUrl: 'https://api.avax.network/ext/bc/C/rpc',
      requiredConfirmations: 12,
      tokens: {
        // Tether native USDt (not USDT.e 0xc717…): https://snowtrace.io/token/0x9702230a8ea53601f5cd2dc00fdbc13d4df4a8c7
        USDT: { address: '0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7', decimals: 6 },
        // Circle native USDC (not USDC.e 0xA7D7…): https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', decimals: 6 },
      },
    },
    testnet: {
      network: 'FUJI',
      chainId: 43_113,
      label: 'Avalanche Fuji testnet',
      explorerTxUrl: 'https://testnet.snowtrace.io/tx/{txHash}',
      rpcUrl: 'https://api.avax-test.network/ext/bc/C/rpc',
      requiredConfirmations: 3,
      tokens: {
        // Circle testnet USDC: https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '0x5425890298aed601595a70AB815c96711a31Bc65', decimals: 6 },
      },
    },
  }),

  bitcoin: chain({
    name: 'Bitcoin',
    family: 'bitcoin',
    blockTimeMs: 600_000,
    mainnet: {
      label: 'Bitcoin mainnet',
      explorerTxUrl: 'https://mempool.space/tx/{txHash}',
      // An Esplora-compatible REST API base.
      rpcUrl: 'https://mempool.space/api',
      requiredConfirmations: 3,
      tokens: {},
    },
    testnet: {
      // testnet4 (BIP94) rather than signet: proof-of-work and reorgs like mainnet; addresses and keys are the same tb1/tpub/vpub.
      network: 'TESTNET4',
      label: 'Bitcoin testnet4',
      explorerTxUrl: 'https://mempool.space/testnet4/tx/{txHash}',
      rpcUrl: 'https://mempool.space/testnet4/api',
      requiredConfirmations: 2,
      tokens: {},
    },
  }),

  tron: chain({
    name: 'Tron',
    family: 'tron',
    blockTimeMs: 3_000,
    mainnet: {
      label: 'Tron mainnet',
      explorerTxUrl: 'https://tronscan.org/#/transaction/{txHash}',
      // java-tron's Ethereum-compatible JSON-RPC, which the indexer reads (docs/indexers.md)
      rpcUrl: 'https://api.trongrid.io/jsonrpc',
      requiredConfirmations: 19,
      tokens: {
        // Tether TRC-20: https://tether.to/en/supported-protocols ; https://tronscan.org/#/token20/TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t
        USDT: { address: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6 },
      },
    },
    testnet: {
      network: 'NILE',
      label: 'Tron Nile testnet',
      explorerTxUrl: 'https://nile.tronscan.org/#/transaction/{txHash}',
      rpcUrl: 'https://nile.trongrid.io/jsonrpc',
      requiredConfirmations: 19,
      // Tether publishes no Nile token; community "USDT" test contracts vary, so native TRX only.
      tokens: {},
    },
  }),

  solana: chain({
    name: 'Solana',
    family: 'solana',
    // Slot time; confirmations on Solana are counted in slots.
    blockTimeMs: 400,
    mainnet: {
      label: 'Solana mainnet',
      explorerTxUrl: 'https://explorer.solana.com/tx/{txHash}',
      rpcUrl: 'https://api.mainnet-beta.solana.com',
      requiredConfirmations: 32,
      tokens: {
        // Circle USDC mint: https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6 },
      },
    },
    testnet: {
      network: 'DEVNET',
      label: 'Solana devnet',
      explorerTxUrl: 'https://explorer.solana.com/tx/{txHash}?cluster=devnet',
      rpcUrl: 'https://api.devnet.solana.com',
      requiredConfirmations: 32,
      tokens: {
        // Circle devnet USDC mint (faucet.circle.com): https://developers.circle.com/stablecoins/usdc-contract-addresses
        USDC: { address: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU', decimals: 6 },
      },
    },
  }),

  ton: chain({
    name: 'TON',
    family: 'ton',
    // About 400 ms since the Catchain 2.0 ("sub-second") upgrade of April 2026: https://docs.ton.org/ecosystem/subsecond
    blockTimeMs: 400,
    mainnet: {
      label: 'TON mainnet',
      explorerTxUrl: 'https://tonviewer.com/transaction/{txHash}',
      // toncenter's base URL: the indexer reads its API v3 (/api/v3/…; docs/indexers.md).
      rpcUrl: 'https://toncenter.com',
      requiredConfirmations: 5,
      tokens: {
        // Tether USD₮ jetton master: https://docs.ton.org/develop/dapps/asset-processing/usdt ; https://tonviewer.com/EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs
        USDT: { address: 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs', decimals: 6 },
      },
    },
    testnet: {
      network: 'TESTNET',
      label: 'TON testnet',
      explorerTxUrl: 'https://testnet.tonviewer.com/transaction/{txHash}',
      blockTimeMs: 450,
      rpcUrl: 'https://testnet.toncenter.com',
      requiredConfirmations: 5,
      // Tether publishes no testnet jetton master: native TON only.
      tokens: {},
    },
  }),
};
