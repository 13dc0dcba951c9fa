import assert from 'node:assert/strict';
import { checkoutInvoice } from '../../src/app/checkout.ts';
import { Payment } from '../../src/store/entities/payment.entity.ts';
import { startTestDaemon, type TestDaemon } from './daemon.ts';
import type { DialectName } from './databases.ts';
import { spawnIndexer, waitFor, writeConfigFile, type IndexerProcess } from './indexer-process.ts';
import { key } from './solana-sim.ts';

/** A daemon with solana mainnet on a local cluster (the JSON-RPC simulator or litesvm), a seeded pool and a running `chaingate index solana`. */
export interface SolanaWorld {
  d: TestDaemon;
  /** The env of the indexer process (for running CLI variants against the same database). */
  env: Record<string, string>;
  indexerConfig: Record<string, unknown>;
  proc: IndexerProcess;
  /** A fresh invoice checked out through the buyer's public checkout route. */
  open(coin: 'SOL' | 'USDC'): Promise<Payment>;
  /** A fresh invoice checked out in-process (checkoutInvoice), as the merchant's direct method. */
  openDirect(coin: 'SOL' | 'USDC'): Promise<Payment>;
  payment(id: string): Promise<Payment>;
  waitStatus(id: string, statuses: string[]): Promise<Payment>;
}

export async function startSolanaWorld(
  t: { after(fn: () => Promise<void> | void): void },
  options: { dialect: DialectName; rpcUrl: string; mint: string; confirmations: number; mode?: 'addresses'; maxBlocksPerRange: number; rpcTimeoutMs: number; poolSize: number },
): Promise<SolanaWorld> {
  const chains = {
    solana: {
      mainnet: {
        rpcUrl: options.rpcUrl,
        blockTimeMs: 400,
        confirmations: options.confirmations,
        ...(options.mode ? { mode: options.mode } : {}),
        tokens: { USDC: { address: options.mint, decimals: 6 } },
      },
    },
  };
  const indexerConfig = { minPollMs: 200, maxBlocksPerRange: options.maxBlocksPerRange, leaseSeconds: 5, rpcTimeoutMs: options.rpcTimeoutMs };
  const d = await startTestDaemon(t, options.dialect, { chains, indexer: indexerConfig });
  const env = { CHAINGATE_DATABASE_URL: d.common.config.database.url, CHAINGATE_MASTER_KEY: 't'.repeat(64), CHAINGATE_CONFIG: writeConfigFile({ chains, indexer: indexerConfig }) };
  await d.seedPool('solana', Array.from({ length: options.poolSize }, key));
  const proc = spawnIndexer(['solana'], env);
  t.after(async () => void (await proc.stop('SIGKILL')));
  await waitFor('indexer start', async () => proc.output().includes('indexer started'), 20_000);

  const newInvoice = async () => (await d.signed('POST', '/api/v1/invoices', { orderId: `sol-${Math.random()}`, amount: '2500', currency: 'USD' })).json.data.id as string;
  const payment = (id: string) => d.common.db.em().findOneOrFail(Payment, { id }, { refresh: true });
  return {
    d,
    env,
    indexerConfig,
    proc,
    async open(coin) {
      // The buyer's hosted checkout: the public route the payment page calls.
      const co = await d.plain('POST', `/checkout/api/v1/invoices/${await newInvoice()}/checkout`, { blockchain: 'solana', cryptoCurrency: coin });
      assert.equal(co.status, 201, co.text);
      return payment(co.json.data.payment.id);
    },
    async openDirect(coin) {
      const { payment: opened } = await checkoutInvoice(d.daemon.deps, { invoiceId: await newInvoice(), merchantId: null, blockchain: 'solana', cryptoCurrency: coin, testnet: false, method: 'direct' });
      return payment(opened.id);
    },
    payment,
    waitStatus: (id, statuses) =>
      waitFor(`payment in ${statuses.join('/')}`, async () => {
        const p = await payment(id);
        return statuses.includes(p.status) ? p : null;
      }),
  };
}
