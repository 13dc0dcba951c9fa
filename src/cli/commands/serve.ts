import { Command } from 'commander';
import { startDaemon } from '../../daemon/serve.ts';
import { openCommon } from '../context.ts';

export function serveCommand(): Command {
  return new Command('serve')
    .description('run the HTTP daemon: merchant gateway (/api/v1), buyer checkout API and hosted payment page')
    .action(async () => {
      const common = await openCommon({ logBindings: { process: 'serve' } });
      let daemon;
      try {
        daemon = await startDaemon(common);
      } catch (err) {
        await common.close();
        throw err;
      }
      const done = new Promise<void>((resolve) => {
        const shutdown = (signal: string) => {
          common.log.info({ signal }, 'shutting down gracefully');
          daemon.stop().then(resolve, (err: unknown) => {
            common.log.error({ err }, 'error during shutdown');
            resolve();
          });
        };
        process.once('SIGTERM', () => shutdown('SIGTERM'));
        process.once('SIGINT', () => shutdown('SIGINT'));
      });
      // Machine-readable line for scripts and tests that start the daemon on port 0.
      process.stdout.write(`${JSON.stringify({ listening: daemon.url })}\n`);
      await done;
    });
}
