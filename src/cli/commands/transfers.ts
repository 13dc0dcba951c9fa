import { Command } from 'commander';
import { ObservedTransfer } from '../../store/entities/observed-transfer.entity.ts';
import { withCommon } from '../context.ts';
import { parseLimit } from '../options.ts';
import { emit, table } from '../output.ts';

export function transfersCommand(): Command {
  const cmd = new Command('transfers').description('transfers the indexers observed to deposit addresses');
  cmd
    .command('list')
    .description('observed transfers, newest first; --unmatched shows only those not credited (late, extra, wrong coin, unmatched)')
    .option('--unmatched', 'only transfers that were not credited to a payment (manual reconciliation)')
    .option('--chain <slug>', 'only this chain')
    .option('--limit <n>', 'at most this many transfers', parseLimit, 100)
    .option('--json', 'machine-readable output')
    .action(async (opts: { unmatched?: boolean; chain?: string; limit: number; json?: boolean }) => {
      await withCommon(async (common) => {
        const where: Record<string, unknown> = {};
        if (opts.unmatched) where.status = { $in: ['UNMATCHED', 'LATE', 'EXTRA', 'NOT_CREDITED'] };
        if (opts.chain) where.chain = opts.chain;
        const rows = await common.db.em().find(ObservedTransfer, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit: opts.limit });
        const out = rows.map((t) => ({
          id: t.id,
          chain: t.chain,
          network: t.network,
          txHash: t.txHash,
          logIndex: t.logIndex,
          blockNumber: t.blockNumber,
          to: t.toAddress,
          token: t.tokenAddress ?? null,
          amount: t.amount,
          status: t.status,
          paymentId: t.paymentId ?? null,
          note: t.note ?? null,
          createdAt: t.createdAt.toISOString(),
        }));
        emit(opts.json, out, () => table(out, ['chain', 'network', 'status', 'txHash', 'logIndex', 'amount', 'paymentId', 'note']));
      }, { readOnly: true });
    });
  return cmd;
}
