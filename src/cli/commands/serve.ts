import { Command } from 'commander';
import { startDaemon } from '../../daemon/serve.ts';
import { redactConfig } from '../../config/load-config.ts';
import { openCommon } from '../context.ts';

export function serveCommand(): Command {
  return new Command('serve')
    .description('run the HTTP daemon: merchant gateway (/api/v1), buyer checkout API and hosted payment page')
    .option('--json', 'machine-readable start-up line: {"listening", "metricsUrl", "database", "pid"} (logs on stderr are JSON lines either way)')
    .action(async (opts: { json?: boolean }) => {
      const common = await openCommon({ logBindings: { process: 'serve' } });
      let daemon: Awaited<ReturnType<typeof startDaemon>>;
      try {
        daemon = await startDaemon(common);
      } catch (err) {
        await common.close();
        throw err;
      }
      const done = new Promise<void>((resolve) => {
        const shutdown = (signal: string) => {
          common.log.info({ signal }, 'shutting down gracefully');
          // stop() ends everything at the grace; this only catches a close that hangs (a database).
          const backstop = common.config.server.shutdownGraceMs + 2000;
          setTimeout(() => {
            common.log.error({ afterMs: backstop }, 'shutdown did not finish in time; exiting');
            process.exit(1);
          }, backstop).unref();
          daemon.stop().then(resolve, (err: unknown) => {
            common.log.error({ err }, 'error during shutdown');
            resolve();
          });
        };
        process.once('SIGTERM', () => shutdown('SIGTERM'));
        process.once('SIGINT', () => shutdown('SIGINT'));
      });
      // Machine-readable line for scripts and tests that start the daemon on port 0; --json says more.
      // A person at a terminal gets the same in words.
      const startup = opts.json
        ? { listening: daemon.url, metricsUrl: daemon.metricsUrl, database: redactConfig(common.config).database.url, pid: process.pid }
        : { listening: daemon.url };
      process.stdout.write(process.stdout.isTTY && !opts.json ? `chaingate is listening on ${daemon.url} (Ctrl-C stops it)\n` : `${JSON.stringify(startup)}\n`);
      await done;
    });
}
