import { CHAIN_DEFAULTS } from '../chains/chain-defaults.ts';
import { formatUnits } from '../domain/money.ts';
import type { SweepPlan } from '../families/sweep.ts';
import { feeShare, type PlanReading } from './check-decoded.ts';
import { formatHolding } from './summary.ts';

/**
 * What `sweep sign` shows before it signs: read from the transactions' own bytes (PlanReading), per
 * transaction every amount and recipient and the most it can pay in fees, then the totals with the
 * fee as a share of the native coin moved.
 */
export function describeReading(plan: SweepPlan, reading: PlanReading): string {
  const native = CHAIN_DEFAULTS[plan.chain].native;
  const coin = (amount: bigint, decimals: number, symbol: string) => `${formatUnits(amount, decimals)} ${symbol}`;
  const lines = [`${plan.chain} ${plan.network}: ${plan.kind} plan ${plan.id.slice(0, 16)}…, read from its transactions:`];
  if (plan.refund) lines.push(`  refund of payment ${plan.refund.paymentId} (${formatHolding({ ...plan.refund })} of what it received)`);
  for (const tx of reading.txs) {
    const pays = tx.pays.map((p) => `${coin(p.amount, p.decimals, p.symbol)}${p.token ? ` (token ${p.token})` : ''} to ${p.to}${p.to === plan.to ? '' : ' (an address of this plan)'}`);
    const nativeMoved = tx.pays.filter((p) => p.token === null && p.to === plan.to).reduce((sum, p) => sum + p.amount, 0n);
    const share = feeShare(tx.fee, nativeMoved);
    lines.push(`  ${tx.id}: pays ${pays.join(' + ') || 'nothing'}; fee at most ${coin(tx.fee, native.decimals, native.symbol)}${share ? ` (${share} of the ${native.symbol} it moves)` : ''} paid by ${tx.feePaidBy}`);
  }
  const moved = [...reading.moves.values()].map((m) => `${coin(m.amount, m.decimals, m.symbol)}${m.token ? ` (token ${m.token})` : ''}`).join(' + ') || 'nothing';
  const share = feeShare(reading.fee, reading.nativeMoved);
  lines.push(`  total: ${moved} to ${plan.to} in ${reading.txs.length} transaction${reading.txs.length === 1 ? '' : 's'}; fees at most ${coin(reading.fee, native.decimals, native.symbol)}${share ? ` (${share} of the ${native.symbol} moved)` : ''}`);
  return lines.join('\n');
}
