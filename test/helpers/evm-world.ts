import { Wallet, type Contract } from 'ethers';
import { Invoice } from '../../src/store/entities/invoice.entity.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { ObservedTransfer } from '../../src/store/entities/observed-transfer.entity.ts';
import { checkoutInvoice } from '../../src/app/checkout.ts';
import { startTestDaemon, type TestDaemon } from './daemon.ts';
import type { DialectName } from './databases.ts';
import { deployFixtures, type EvmFixtures } from '../../src/devnet/evm-fixtures.ts';
import { startHardhatNode, type HardhatNode } from '../../src/devnet/hardhat-node.ts';
import { spawnIndexer, waitFor, writeConfigFile, type IndexerProcess } from './indexer-process.ts';

/** A Hardhat chain posing as ethereum mainnet, its fixtures, a daemon and the env to run real indexers. */
export interface EvmWorld {
  node: HardhatNode;
  /** The chain config the indexers get (for writing variants of the config file). */
  chains: Record<string, unknown>;
  indexerConfig: Record<string, unknown>;
  fx: EvmFixtures;
  d: TestDaemon;
  env: Record<string, string>;
  startIndexer(extraArgs?: string[], envOverrides?: Record<string, string>): IndexerProcess;
  openPayment(coin: 'ETH' | 'USDC' | 'USDT', options?: { address?: string; method?: 'direct' | 'web3' | 'service_wallet' }): Promise<Payment>;
  payment(id: string): Promise<Payment>;
  invoice(id: string): Promise<Invoice>;
  transfers(paymentId: string): Promise<ObservedTransfer[]>;
  waitStatus(id: string, statuses: string[], timeoutMs?: number): Promise<Payment>;
  token(symbol: 'USDC' | 'USDT' | 'FAKE'): Contract;
}

export const REQUIRED_CONFIRMATIONS = 3;

/** A Hardhat chain posing as ethereum mainnet with the fixtures deployed: one world's, or shared by a file's worlds. */
export interface EvmChain {
  node: HardhatNode;
  fx: EvmFixtures;
}

export async function startEvmChain(): Promise<EvmChain> {
  const node = await startHardhatNode({ chainId: 1 });
  return { node, fx: await deployFixtures(node) };
}

export async function startEvmWorld(
  t: { after(fn: () => Promise<void> | void): void },
  options: {
    dialect: DialectName;
    /** A chain the caller started and stops; by default the world starts its own. */
    chain?: EvmChain;
    traces?: boolean;
    confirmations?: number;
    blockTimeMs?: number;
    rpcUrl?: (nodeUrl: string) => Promise<string>;
    indexer?: Record<string, unknown>;
    daemon?: Record<string, unknown>;
    /** serve follows refund and sweep broadcasts (docs/dashboard.md). */
    followBroadcasts?: boolean;
  },
): Promise<EvmWorld> {
  let chain = options.chain;
  if (!chain) {
    const own = await startEvmChain();
    t.after(() => own.node.stop());
    chain = own;
  }
  const { node, fx } = chain;
  const chains = {
    ethereum: {
      mainnet: {
        rpcUrl: options.rpcUrl ? await options.rpcUrl(node.url) : node.url,
        confirmations: options.confirmations ?? REQUIRED_CONFIRMATIONS,
        // The indexer polls at the block time: Hardhat mines on demand, so a short one only saves waiting.
        blockTimeMs: options.blockTimeMs ?? 250,
        traces: options.traces ?? false,
        tokens: { USDC: { address: fx.addresses.usdc, decimals: 6 }, USDT: { address: fx.addresses.usdt, decimals: 6 } },
        paymentContract: fx.addresses.gateway,
        treasury: fx.addresses.treasury,
      },
    },
  };
  const indexer = { minPollMs: 200, maxBlocksPerRange: 20, leaseSeconds: 5, rpcTimeoutMs: 2000, ...options.indexer };
  const d = await startTestDaemon(t, options.dialect, { chains, indexer, ...options.daemon }, { followBroadcasts: options.followBroadcasts ?? false });
  const env: Record<string, string> = {
    CHAINGATE_DATABASE_URL: d.common.config.database.url,
    CHAINGATE_MASTER_KEY: 't'.repeat(64),
    CHAINGATE_CONFIG: writeConfigFile({ chains, indexer }),
  };
  const running: IndexerProcess[] = [];
  t.after(async () => {
    for (const p of running) await p.stop('SIGKILL');
  });
  const em = () => d.common.db.em();
  const world: EvmWorld = {
    node,
    chains,
    indexerConfig: indexer,
    fx,
    d,
    env,
    startIndexer(extraArgs = [], envOverrides = {}) {
      const p = spawnIndexer(['ethereum', ...extraArgs], { ...env, ...envOverrides });
      running.push(p);
      return p;
    },
    async openPayment(coin, opts = {}) {
      const address = opts.address ?? Wallet.createRandom().address;
      if ((opts.method ?? 'direct') === 'direct') await d.seedPool('ethereum', [address]);
      const inv = await d.signed('POST', '/api/v1/invoices', { orderId: `o-${address.slice(2, 10)}`, amount: '2500', currency: 'USD', returnUrl: 'https://shop.example/thanks' });
      const { payment } = await checkoutInvoice(d.daemon.deps, {
        invoiceId: inv.json.data.id,
        merchantId: null,
        blockchain: 'ethereum',
        cryptoCurrency: coin,
        testnet: false,
        method: opts.method ?? 'direct',
      });
      return em().findOneOrFail(Payment, { id: payment.id });
    },
    payment: (id) => em().findOneOrFail(Payment, { id }),
    invoice: (id) => em().findOneOrFail(Invoice, { id }),
    transfers: (paymentId) => em().find(ObservedTransfer, { paymentId }, { orderBy: { blockNumber: 'asc', logIndex: 'asc' } }),
    waitStatus(id, statuses, timeoutMs = 30_000) {
      return waitFor(`payment ${id} in ${statuses.join('/')}`, async () => {
        const p = await world.payment(id);
        return statuses.includes(p.status) ? p : null;
      }, timeoutMs);
    },
    token(symbol) {
      return symbol === 'USDC' ? fx.usdc : symbol === 'USDT' ? fx.usdt : fx.fakeUsdc;
    },
  };
  return world;
}
