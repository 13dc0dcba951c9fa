import { Command } from 'commander';
import { emit, table } from '../output.ts';
import { broadcastCommand, cancelCommand } from './sweep.ts';

// `chaingate refund plan|broadcast|list` (docs/refunds.md): a refund is a plan of kind "refund",
// signed offline by `chaingate sweep sign` like any plan, then broadcast here.

export function refundCommand(): Command {
  const cmd = new Command('refund').description('pay a buyer back: plan on the server, sign offline with `sweep sign`, broadcast on the server');

  cmd
    .command('plan')
    .description("plans a refund of a payment to the buyer's address from its deposit (or a wallet address) and writes plan.json")
    .requiredOption('--payment <id>', 'the payment to refund')
    .requiredOption('--to <address>', "the buyer's address")
    .option('--amount <decimal>', 'in the coin paid (default: the over-payment); at most what the payment received')
    .option('--from <source>', '`deposit` (default): from the payment\'s own deposit address')
    .option('--from-address <address>', 'a wallet address of yours to pay from instead (after the deposit was swept)')
    .option('--fee-payer <address>', 'an account of the same wallet that pays the fees (chains where the address holds no gas)')
    .requiredOption('--out <path>', 'where to write plan.json')
    .option('--json', 'machine-readable output')
    .action(async (opts: { payment: string; to: string; amount?: string; from?: string; fromAddress?: string; feePayer?: string; out: string; json?: boolean }) => {
      const { withCommon } = await import('../context.ts');
      const { UsageError } = await import('../../domain/errors.ts');
      const { planRefund } = await import('../../sweep/plan-refund.ts');
      const { describePlan, totalsJson } = await import('../../sweep/summary.ts');
      const { CHAIN_DEFAULTS } = await import('../../chains/chain-defaults.ts');
      const { formatUnits } = await import('../../domain/money.ts');
      if (opts.from !== undefined && opts.from !== 'deposit') throw new UsageError(`--from ${opts.from}: only \`deposit\`; to pay from a wallet address give --from-address <address>`);
      if (opts.from !== undefined && opts.fromAddress !== undefined) throw new UsageError('--from deposit and --from-address exclude each other');
      await withCommon(async (common) => {
        const result = await planRefund(common, { payment: opts.payment, to: opts.to, amount: opts.amount, fromAddress: opts.fromAddress, feePayer: opts.feePayer ?? null, out: opts.out });
        const { plan } = result;
        const refund = plan.refund!;
        const native = CHAIN_DEFAULTS[plan.chain].native;
        emit(opts.json, { file: opts.out, refundId: result.refundId, paymentId: refund.paymentId, amount: refund.amount, received: result.received.toString(), alreadyRefunded: result.alreadyRefunded.toString(), totals: totalsJson(plan), plan }, () =>
          [
            describePlan(plan, native.decimals, native.symbol),
            `payment received ${formatUnits(result.received, refund.decimals)} ${refund.symbol}; this refund covers ${formatUnits(BigInt(refund.amount), refund.decimals)} ${refund.symbol}`,
            `wrote ${opts.out}: sign it offline with \`chaingate sweep sign --plan ${opts.out} --out signed.json --seed-file <path> --expect-to ${plan.to}\`, then \`chaingate refund broadcast --signed signed.json\``,
          ].join('\n'),
        );
      });
    });

  cmd.addCommand(broadcastCommand('refund'));
  cmd.addCommand(cancelCommand('refund'));

  cmd
    .command('list')
    .description("refunds, oldest first, with their state: one payment's, or all")
    .option('--payment <id>', 'only this payment')
    .option('--json', 'machine-readable output')
    .action(async (opts: { payment?: string; json?: boolean }) => {
      const { withCommon } = await import('../context.ts');
      const { refundsOfPayment, refundsBetween } = await import('../../store/refunds.ts');
      const { poolReader } = await import('../../store/raw-sql.ts');
      const { formatUnits } = await import('../../domain/money.ts');
      const { coinUnitsFor } = await import('../coin-units.ts');
      await withCommon(
        async (common) => {
          const rows = opts.payment ? await refundsOfPayment(poolReader(common.db), opts.payment.trim()) : await refundsBetween(common.db, new Date(0), new Date(8.64e15));
          const unitsOf = coinUnitsFor(common.config);
          // JSON: the atomic amounts under names that say so (the refund's coin, its decimals and symbol
          // beside them; fees in the chain's native coin). The table: coins with their symbols.
          const out = rows.map(({ amount, fee, feeFromPayment, uses, ...r }) => ({
            ...r,
            amountAtomic: amount,
            usesAtomic: uses,
            feeAtomic: fee,
            feeFromPaymentAtomic: feeFromPayment,
            feeSymbol: unitsOf(r.chain, r.network).nativeSymbol,
          }));
          emit(opts.json, out, () =>
            table(
              out.map((r) => {
                const units = unitsOf(r.chain, r.network);
                return { id: r.id, payment: r.paymentId, chain: r.chain, amount: `${formatUnits(BigInt(r.amountAtomic), r.decimals)} ${r.symbol}`, fee: BigInt(r.feeAtomic) === 0n ? null : units.native(r.feeAtomic), to: r.toAddress, from: r.fromKind, state: r.state, txid: r.txid ?? '', created: r.createdAt.toISOString() };
              }),
              ['id', 'payment', 'chain', 'amount', 'fee', 'to', 'from', 'state', 'txid', 'created'],
            ),
          );
        },
        { readOnly: true },
      );
    });
  return cmd;
}
