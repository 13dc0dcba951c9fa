import { Command } from 'commander';
import { observedTransfers } from '../../store/observed-transfers.ts';
import { coinUnitsFor } from '../coin-units.ts';
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
        // JSON keeps the chain's atomic units under a name that says so, with the coin and its decimals;
        // the table says the amount in coins with the symbol.
        const unitsOf = coinUnitsFor(common.config);
        const out = rows.map((t) => {
          const units = unitsOf(t.chain, t.network);
          return {
            id: t.id,
            chain: t.chain,
            network: t.network,
            txHash: t.txHash,
            logIndex: t.logIndex,
            blockNumber: t.blockNumber,
            to: t.toAddress,
            token: t.tokenAddress,
            symbol: t.symbol,
            decimals: t.symbol ? units.decimals(t.symbol) : null,
            amountAtomic: t.amount,
            status: t.status,
            paymentId: t.paymentId,
            note: t.note,
            createdAt: t.createdAt.toISOString(),
          };
        });
        const amountOf = (t: (typeof out)[number]) => (t.symbol ? unitsOf(t.chain, t.network).coins(t.symbol, t.amountAtomic) : `${t.amountAtomic} atomic units of token ${t.token ?? '?'}`);
        emit(opts.json, out, () => table(out.map((t) => ({ ...t, amount: amountOf(t) })), ['chain', 'network', 'status', 'txHash', 'logIndex', 'amount', 'paymentId', 'note']));
      }, { readOnly: true });
    });
  return cmd;
}
