import { Command } from 'commander';
import { getNetwork} from '../../chains/registry.ts';
import { loadConfig } from '../../config/load-config.ts';
import { endpointChoice } from '../../chains/public-endpoint.ts';
import { CHAIN_SLUGS, isChainSlug } from '../../chains/slugs.ts';
import { UsageError } from '../../domain/errors.ts';
import { recordIndexerFailure, recordIndexerStopped, recordRpcFaults, startIndexer } from '../../indexer/run-indexer.ts';
import { startMetricsServer, type MetricsServer } from '../../metrics/server.ts';
import { endpointOrigin, rpcRegistry } from '../../families/rpc-metrics.ts';
import { createChainSource, hasPaymentContract, resolveChains } from '../../families/families.ts';
import { withCommon } from '../context.ts';

export function indexCommand(): Command {
  return new Command('index')
    .description('run the chain indexer of one chain and network (a long-running process; one per chain and network)')
    .argument('<chain>', `chain slug: ${CHAIN_SLUGS.join(', ')}`)
    .option('--testnet', "index the chain's testnet")
    .option('--from-block <n>', 'start at this block instead of the stored cursor')
    .option('--exit-if-running', 'exit instead of waiting when another indexer holds this chain and network')
    .option('--json', 'print the start-up line on stdout as JSON: {"indexing": {chain, network, testnet, endpoint}, "pid"} (logs on stderr are JSON lines either way)')
    .action(async (chain: string, opts: { testnet?: boolean; fromBlock?: string; exitIfRunning?: boolean; json?: boolean }) => {
      if (!isChainSlug(chain)) throw new UsageError(`unknown chain slug ${JSON.stringify(chain)} (known: ${CHAIN_SLUGS.join(', ')})`);
      if (opts.fromBlock !== undefined && !/^\d{1,15}$/.test(opts.fromBlock)) throw new UsageError('--from-block must be a block number');
      // Before the database opens (an embedded one would be created and migrated for nothing).
      const { config } = loadConfig();
      const choice = endpointChoice(config.chains, getNetwork(resolveChains(config.chains), chain, Boolean(opts.testnet)), {
        allowPublicEndpoints: config.indexer.allowPublicEndpoints,
        production: process.env.NODE_ENV === 'production',
      });
      if (choice.problem) throw new UsageError(choice.problem);
      await withCommon(async (common) => {
        const network = getNetwork(resolveChains(common.config.chains), chain, Boolean(opts.testnet));
        if (!network.enabled) throw new UsageError(`${chain} is disabled in the config (chains.${chain}.enabled)`);
        const key = { chain: network.chain, network: network.network, isTestnet: network.testnet };
        // Before connecting, which may retry for as long as the endpoint is down: say what is being
        // tried, where (scheme://host[:port] only: keys live in URL paths), and record what fails.
        const endpoint = endpointOrigin(network.rpcUrl);
        const api = network.apiUrl && endpointOrigin(network.apiUrl) !== endpoint ? endpointOrigin(network.apiUrl) : null;
        const indexing = { chain: network.chain, network: network.network, testnet: network.testnet, endpoint, ...(api ? { apiEndpoint: api } : {}), ...(choice.configured ? {} : { publicEndpoint: true }) };
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ indexing, pid: process.pid })}\n`
            : `indexing ${network.chain} ${network.network} via ${endpoint}${api ? ` and ${api}` : ''}${choice.configured ? '' : ' (the public default endpoint: no rpcUrl is set)'} (pid ${process.pid})\n`,
        );
        const stopRecording = recordRpcFaults(common.db, key);
        const recordFatal = async (err: unknown) => {
          if (err instanceof Error && (err.name === 'LeaseHeldError' || err.name === 'LeaseLostError' || err.name === 'RpcAborted')) return;
          await recordIndexerFailure(common.db, key, err instanceof Error ? `${err.name}: ${err.message}` : String(err)).catch(() => undefined);
        };
        // A signal while it is still connecting (which may retry for as long as the endpoint is
        // down) has nothing to finish: say it stopped, so `status` does not show it FAILING, and exit.
        let stop = (signal: string) => {
          common.log.info({ signal }, 'stopping the indexer while it connects');
          stopRecording();
          void recordIndexerStopped(common.db, key)
            .catch(() => undefined)
            .finally(() => void common.close().finally(() => process.exit(0)));
        };
        const onSigterm = () => stop('SIGTERM');
        const onSigint = () => stop('SIGINT');
        process.once('SIGTERM', onSigterm);
        process.once('SIGINT', onSigint);
        const source = await createChainSource(network, common.config, common.log).catch(async (err: unknown) => {
          stopRecording();
          await recordFatal(err);
          await recordIndexerStopped(common.db, key).catch(() => undefined);
          throw err;
        });
        // This process's RPC counters (docs/operations.md#metrics-and-health); progress is on the cursor row for serve's /metrics.
        let metrics: MetricsServer | null = null;
        if (common.config.metrics.indexerPort > 0) {
          rpcRegistry.setDefaultLabels({ chain: network.chain, network: network.network });
          metrics = await startMetricsServer({ host: common.config.metrics.host, port: common.config.metrics.indexerPort, registry: rpcRegistry });
          common.log.info({ url: `${metrics.url}/metrics` }, 'indexer metrics are served');
        }
        const indexer = startIndexer({
          db: common.db,
          log: common.log,
          key,
          source,
          endpoint,
          paymentContract: hasPaymentContract(network.family) ? network.paymentContract : null,
          pollIntervalMs: Math.max(network.pollMs ?? network.blockTimeMs, common.config.indexer.minPollMs),
          startMargin: network.startMargin,
          windowSize: Math.max(64, network.requiredConfirmations * 2),
          maxBlocksPerRange: common.config.indexer.maxBlocksPerRange,
          fromBlock: opts.fromBlock === undefined ? undefined : BigInt(opts.fromBlock),
          leaseMs: common.config.indexer.leaseSeconds * 1000,
          lateWatchMs: common.config.indexer.lateWatchDays * 86_400_000,
          onLeaseHeld: opts.exitIfRunning ? 'exit' : 'wait',
        });
        stop = (signal: string) => {
          common.log.info({ signal }, 'stopping the indexer');
          void indexer.stop();
        };
        try {
          await indexer.done;
        } catch (err) {
          await recordFatal(err);
          if (err instanceof Error && err.name === 'LeaseHeldError') throw new UsageError(err.message);
          throw err;
        } finally {
          stopRecording();
          await recordIndexerStopped(common.db, key).catch(() => undefined);
          source.close();
          await metrics?.close();
        }
      }, { logBindings: { process: 'indexer' } });
    });
}
