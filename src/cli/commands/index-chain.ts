import { Command } from 'commander';
import { getNetwork, resolveRegistry } from '../../chains/registry.ts';
import { isChainSlug, CHAIN_SLUGS } from '../../chains/slugs.ts';
import { UsageError } from '../../domain/errors.ts';
import { createEvmSource } from '../../indexers/evm/evm-source.ts';
import { createRpc } from '../../indexers/evm/rpc.ts';
import { startIndexer } from '../../indexers/run-indexer.ts';
import { withCommon } from '../context.ts';

export function indexCommand(): Command {
  return new Command('index')
    .description('run the chain indexer of one chain and network (a long-running process; one per chain and network)')
    .argument('<chain>', `chain slug (EVM chains: ${CHAIN_SLUGS.filter((s) => !['bitcoin', 'tron', 'solana', 'ton'].includes(s)).join(', ')})`)
    .option('--testnet', "index the chain's testnet")
    .option('--from-block <n>', 'start at this block instead of the stored cursor')
    .option('--exit-if-running', 'exit instead of waiting when another indexer holds this chain and network')
    .action(async (chain: string, opts: { testnet?: boolean; fromBlock?: string; exitIfRunning?: boolean }) => {
      if (!isChainSlug(chain)) throw new UsageError(`unknown chain slug ${JSON.stringify(chain)} (known: ${CHAIN_SLUGS.join(', ')})`);
      if (opts.fromBlock !== undefined && !/^\d{1,15}$/.test(opts.fromBlock)) throw new UsageError('--from-block must be a block number');
      await withCommon(async (common) => {
        const network = getNetwork(resolveRegistry(common.config.chains), chain, Boolean(opts.testnet));
        if (network.family !== 'evm') throw new UsageError(`the ${network.family} indexer is not available yet; EVM chains only`);
        if (!network.enabled) throw new UsageError(`${chain} is disabled in the config (chains.${chain}.enabled)`);
        const rpc = createRpc({ url: network.rpcUrl, chainId: network.chainId, log: common.log, timeoutMs: common.config.indexer.rpcTimeoutMs });
        const remoteChainId = BigInt(await rpc.call<string>('eth_chainId', []));
        if (network.chainId !== null && remoteChainId !== BigInt(network.chainId)) {
          rpc.close();
          throw new UsageError(`RPC ${new URL(network.rpcUrl).host} serves chain id ${remoteChainId}, but ${chain} ${network.network} is ${network.chainId}: check chains.${chain}.${opts.testnet ? 'testnet' : 'mainnet'}.rpcUrl`);
        }
        const indexer = startIndexer({
          db: common.db,
          log: common.log,
          key: { chain: network.chain, network: network.network, isTestnet: network.testnet },
          source: createEvmSource({ rpc, traces: network.traces, addressChunk: common.config.indexer.addressesPerLogQuery }),
          paymentContract: network.paymentContract,
          pollIntervalMs: Math.max(network.blockTimeMs, common.config.indexer.minPollMs),
          startMargin: network.startMargin,
          windowSize: Math.max(64, network.requiredConfirmations * 2),
          maxBlocksPerRange: common.config.indexer.maxBlocksPerRange,
          fromBlock: opts.fromBlock === undefined ? undefined : BigInt(opts.fromBlock),
          leaseMs: common.config.indexer.leaseSeconds * 1000,
          lateWatchMs: common.config.indexer.lateWatchDays * 86_400_000,
          onLeaseHeld: opts.exitIfRunning ? 'exit' : 'wait',
        });
        const stop = (signal: string) => {
          common.log.info({ signal }, 'stopping the indexer');
          void indexer.stop();
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
        try {
          await indexer.done;
        } catch (err) {
          if (err instanceof Error && err.name === 'LeaseHeldError') throw new UsageError(err.message);
          throw err;
        } finally {
          rpc.close();
        }
      }, { logBindings: { process: 'indexer' } });
    });
}
