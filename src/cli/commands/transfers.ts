import { Command } from 'commander';
import { observedTransfers } from '../../store/observed-transfers.ts';
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
        const rows = await observedTransfers(common.db, opts);
        const out = rows.map((t) => ({
          id: t.id,
          chain: t.chain,
          network: t.network,
          txHash: t.txHash,
          logIndex: t.logIndex,
          blockNumber: t.blockNumber,
          to: t.toAddress,
          token: t.tokenAddress,
          amount: t.amount,
          status: t.status,
          paymentId: t.paymentId,
          note: t.note,
          createdAt: t.createdAt.toISOString(),
        }));
        emit(opts.json, out, () => table(out, ['chain', 'network', 'status', 'txHash', 'logIndex', 'amount', 'paymentId', 'note']));
      }, { readOnly: true });
    });
  return cmd;
}
