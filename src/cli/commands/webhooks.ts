import { Command } from 'commander';
import { createPing, listEvents, replayEvent, replayFailed, type EventView } from '../../webhooks/deliveries.ts';
import { createWebhookSender } from '../../webhooks/sender.ts';
import { UsageError } from '../../domain/errors.ts';
import { openCommon, withCommon } from '../context.ts';
import { parseLimit } from '../options.ts';
import { emit, keyValues, table } from '../output.ts';

function parseIso(value: string): Date {
  const d = new Date(value);
  if (!/^\d{4}-\d\d-\d\d/.test(value) || Number.isNaN(d.getTime())) throw new UsageError(`--since ${JSON.stringify(value)} is not an ISO 8601 time (e.g. 2026-11-21T00:00:00Z)`);
  return d;
}

function humanEvents(events: EventView[]): string {
  return table(
    events.map((e) => {
      const last = e.deliveries.at(-1);
      const attempts = e.deliveries.reduce((n, d) => n + d.attempts.length, 0);
      return {
        event: e.id,
        type: e.type,
        merchant: e.merchantId,
        createdAt: e.createdAt,
        state: e.state,
        attempts,
        next: last?.state === 'PENDING' ? last.nextAttemptAt : null,
        last: last ? (last.lastError ?? (last.lastStatusCode !== null ? `HTTP ${last.lastStatusCode}` : null)) : null,
      };
    }),
    ['event', 'type', 'merchant', 'createdAt', 'state', 'attempts', 'next', 'last'],
  );
}

export function webhooksCommand(): Command {
  const cmd = new Command('webhooks').description('webhook events and deliveries: list, replay, test, and run a sender');

  cmd
    .command('list')
    .description('events, newest first, with their delivery state and attempts')
    .option('--merchant <id>', 'only this merchant point')
    .option('--failed', 'only events whose latest delivery gave up')
    .option('--since <iso>', 'only events created at or after this time', parseIso)
    .option('--limit <n>', 'at most this many events', parseLimit, 50)
    .option('--json', 'machine-readable output, with every attempt')
    .action(async (opts: { merchant?: string; failed?: boolean; since?: Date; limit: number; json?: boolean }) => {
      await withCommon(async (common) => {
        const events = await listEvents(common.db, { merchantId: opts.merchant, failed: opts.failed, since: opts.since, limit: opts.limit });
        emit(opts.json, events, () => humanEvents(events));
      }, { readOnly: true });
    });

  cmd
    .command('replay')
    .description('deliver an event again as a new delivery (same event id and body), or every failed one')
    .argument('[eventId]', 'the event to deliver again')
    .option('--failed', 'replay every event whose latest delivery gave up')
    .option('--since <iso>', 'with --failed: only events created at or after this time', parseIso)
    .option('--merchant <id>', 'with --failed: only this merchant point')
    .option('--json', 'machine-readable output')
    .action(async (eventId: string | undefined, opts: { failed?: boolean; since?: Date; merchant?: string; json?: boolean }) => {
      if (eventId && opts.failed) throw new UsageError('give either an EVENT_ID or --failed, not both');
      if (!eventId && !opts.failed) throw new UsageError('give an EVENT_ID, or --failed to replay every failed event');
      if (eventId && (opts.since || opts.merchant)) throw new UsageError('--since and --merchant go with --failed');
      await withCommon(async (common) => {
        if (eventId) {
          const res = await replayEvent(common.db, eventId);
          emit(opts.json, res, () => `event ${res.eventId}: new delivery ${res.deliveryId}${res.replayOf ? ` (replay of ${res.replayOf})` : ''}, sent by the next running sender`);
        } else {
          const res = await replayFailed(common.db, { since: opts.since, merchantId: opts.merchant });
          emit(opts.json, res, () =>
            [
              `replayed ${res.replayed.length} event${res.replayed.length === 1 ? '' : 's'}; sent by the next running sender`,
              ...res.replayed.map((r) => `  ${r.eventId} -> delivery ${r.deliveryId}`),
              ...res.skipped.map((s) => `  skipped ${s.eventId}: ${s.reason}`),
            ].join('\n'),
          );
        }
      });
    });

  cmd
    .command('test')
    .description("send a signed `ping` event to a merchant point's webhook URL now and show the answer")
    .argument('<merchantId>', 'merchant point id')
    .option('--json', 'machine-readable output')
    .action(async (merchantId: string, opts: { json?: boolean }) => {
      const common = await openCommon({ logBindings: { process: 'webhooks-test' } });
      let failed: string | null = null;
      try {
        const sender = createWebhookSender({ common });
        const ping = await createPing(common.db, merchantId, { owner: sender.owner, leaseMs: common.config.webhooks.leaseSeconds * 1000 });
        const outcome = await sender.attempt(ping.deliveryId);
        if (!outcome) throw new Error(`delivery ${ping.deliveryId} was taken by another sender`);
        const out = {
          eventId: outcome.eventId,
          deliveryId: outcome.deliveryId,
          url: outcome.url,
          delivered: outcome.ok,
          statusCode: outcome.statusCode,
          durationMs: outcome.durationMs,
          error: outcome.error,
          responseBody: outcome.responseBody,
        };
        emit(opts.json, out, () => keyValues(out));
        if (!outcome.ok) failed = `the ping was not delivered: ${outcome.error ?? `HTTP ${outcome.statusCode}`}`;
      } finally {
        await common.close();
      }
      if (failed) throw new Error(failed);
    });

  cmd
    .command('work')
    .description('run a webhook sender alone (serve runs one too); several may share one database')
    .option('--json', 'the start-up line with the process id too: {"working", "pid"} (logs on stderr are JSON lines either way)')
    .action(async (opts: { json?: boolean }) => {
      const common = await openCommon({ logBindings: { process: 'webhooks' } });
      const sender = createWebhookSender({ common });
      sender.start();
      await new Promise<void>((resolve) => {
        const shutdown = (signal: string) => {
          common.log.info({ signal }, 'stopping the webhook sender');
          resolve();
        };
        process.once('SIGTERM', () => shutdown('SIGTERM'));
        process.once('SIGINT', () => shutdown('SIGINT'));
        // Machine-readable line for scripts and tests.
        process.stdout.write(`${JSON.stringify(opts.json ? { working: sender.owner, pid: process.pid } : { working: sender.owner })}\n`);
      });
      try {
        // Attempts still waiting for their receiver after the grace are cut off and stay due.
        await sender.stop(common.config.server.shutdownGraceMs);
      } finally {
        await common.close();
      }
    });
  return cmd;
}
