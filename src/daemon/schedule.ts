import cron from 'node-cron';
import type { Logger } from '../logger.ts';

export interface Job {
  stop(): Promise<void>;
}

/**
 * Runs `task` on a cron expression, never overlapping itself; stop() waits for a running tick.
 * Errors are logged, never thrown out of the timer.
 */
export function scheduleJob(name: string, expression: string, log: Logger, task: () => Promise<unknown>): Job {
  let running: Promise<unknown> | null = null;
  const handle = cron.schedule(expression, () => {
    if (running) return;
    running = task()
      .catch((err: unknown) => log.error({ err, job: name }, 'scheduled job failed'))
      .finally(() => {
        running = null;
      });
  });
  return {
    async stop() {
      await handle.stop();
      await running;
    },
  };
}
