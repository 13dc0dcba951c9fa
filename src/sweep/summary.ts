import { formatUnits } from '../domain/money.ts';
import type { Holding, SweepPlan } from '../families/sweep.ts';

// What a plan does, in words: printed by `sweep plan` on the server and again by `sweep sign` on
// the offline machine just before it signs, from the same plan fields the signer checks the
// transactions against.

export function formatHolding(h: Pick<Holding, 'amount' | 'decimals' | 'symbol'>): string {
  return `${formatUnits(BigInt(h.amount), h.decimals)} ${h.symbol}`;
}

export interface PlanTotals {
  /** Per symbol: what moves to the destination, atomic. */
  moves: Record<string, { amount: bigint; decimals: number }>;
  /** What the transactions pay in fees, in the native coin, atomic. */
  fee: bigint;
  /** Per symbol: what stays on the deposits. */
  leftBehind: Record<string, { amount: bigint; decimals: number }>;
}

export function planTotals(plan: SweepPlan): PlanTotals {
  const moves: PlanTotals['moves'] = {};
  const leftBehind: PlanTotals['leftBehind'] = {};
  let fee = 0n;
  for (const d of plan.deposits) {
    for (const m of d.moves) (moves[m.symbol] ??= { amount: 0n, decimals: m.decimals }).amount += BigInt(m.amount);
    for (const l of d.leftBehind) (leftBehind[l.holding.symbol] ??= { amount: 0n, decimals: l.holding.decimals }).amount += BigInt(l.holding.amount);
    fee += BigInt(d.fee);
  }
  return { moves, fee, leftBehind };
}

const sum = (totals: Record<string, { amount: bigint; decimals: number }>): string =>
  Object.entries(totals)
    .map(([symbol, t]) => `${formatUnits(t.amount, t.decimals)} ${symbol}`)
    .join(', ') || 'nothing';

/** The human summary of a plan: per deposit what moves, the fee, what stays and why; then the totals. */
export function describePlan(plan: SweepPlan, nativeDecimals: number, nativeSymbol: string): string {
  const lines = [`${plan.chain} ${plan.network}: ${plan.kind} plan ${plan.id.slice(0, 16)}… to ${plan.to}${plan.feePayer ? ` (fees paid by ${plan.feePayer})` : ''}`];
  if (plan.refund) lines.push(`  refund of payment ${plan.refund.paymentId}: covers ${formatHolding({ ...plan.refund })} of what it received`);
  for (const d of plan.deposits) {
    const where = d.derivationIndex === null ? d.address : `#${d.derivationIndex} ${d.address}`;
    const fee = BigInt(d.fee) === 0n ? '' : `, fee ${formatUnits(BigInt(d.fee), nativeDecimals)} ${nativeSymbol}`;
    lines.push(`  ${where}: moves ${d.moves.map(formatHolding).join(' + ') || 'nothing'}${fee}`);
    for (const l of d.leftBehind) lines.push(`      leaves ${formatHolding(l.holding)}: ${l.reason}`);
  }
  if (plan.skipped.length > 0) {
    const reasons = new Map<string, number>();
    for (const s of plan.skipped) reasons.set(s.reason, (reasons.get(s.reason) ?? 0) + 1);
    lines.push(`  skipped ${plan.skipped.length} pool address${plan.skipped.length === 1 ? '' : 'es'}:`);
    for (const [reason, n] of reasons) lines.push(`      ${n} × ${reason}`);
  }
  const t = planTotals(plan);
  lines.push(`  total: ${sum(t.moves)} to ${plan.to} in ${plan.transactions.length} transaction${plan.transactions.length === 1 ? '' : 's'}, fees ${formatUnits(t.fee, nativeDecimals)} ${nativeSymbol}`);
  if (Object.keys(t.leftBehind).length > 0) lines.push(`  left behind: ${sum(t.leftBehind)}`);
  return lines.join('\n');
}

/** JSON form of the totals (atomic decimal strings). */
export function totalsJson(plan: SweepPlan): { moves: Record<string, string>; fee: string; leftBehind: Record<string, string> } {
  const t = planTotals(plan);
  const flat = (r: Record<string, { amount: bigint }>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v.amount.toString()]));
  return { moves: flat(t.moves), fee: t.fee.toString(), leftBehind: flat(t.leftBehind) };
}
