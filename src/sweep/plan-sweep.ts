import { getNetwork, type ResolvedNetwork } from '../chains/registry.ts';
import type { Common } from '../common.ts';
import { poolReader } from '../store/raw-sql.ts';
import { isPoolAddress, type PlanRecord, recordPlan, sweepCandidates } from '../store/sweeps.ts';
import { InvalidAddressError, UsageError } from '../domain/errors.ts';
import { isDecimalString, parseUnits } from '../domain/money.ts';
import { FAMILIES, resolveChains, validateAddress } from '../families/families.ts';
import type { ChainFamilyAdapter } from '../families/family.ts';
import type { SweepPlan } from '../families/sweep.ts';
import type { Executor } from '../store/executor.ts';
import { planId, writePlanFile } from './plan-file.ts';

// `chaingate sweep plan` (docs/sweeps.md): the ledger says which deposits may be emptied, the
// family's planner reads their live balances and builds unsigned transactions, and the plan is
// written to a file (for the offline signer) and recorded (for the broadcast to check against).

export interface PlanSweepInput {
  chain: string;
  testnet: boolean;
  to: string;
  feePayer: string | null;
  /** `--min` values: a bare decimal for the native coin, or SYMBOL=decimal. */
  min: string[];
  accountKeys: string[];
  masterFingerprint: string | null;
  /** Where to write plan.json; null: only recorded (the dashboard serves it from the record). */
  out: string | null;
  /** Runs inside the write that records the plan (the dashboard's audit row). */
  inWrite?: (x: Executor, plan: SweepPlan) => Promise<void>;
}

export type PlanSweepResult = { written: true; plan: SweepPlan } | { written: false; plan: SweepPlan; reason: string };

/** The network of a sweep command, refusing a chain switched off or one whose family has no sweeps yet. */
export function sweepNetwork(common: Pick<Common, 'config'>, chain: string, testnet: boolean): { network: ResolvedNetwork; family: ChainFamilyAdapter & { sweep: NonNullable<ChainFamilyAdapter['sweep']> } } {
  const network = getNetwork(resolveChains(common.config.chains), chain, testnet);
  if (!network.enabled) throw new UsageError(`${chain} is switched off in the configuration (chains.${chain}.enabled: false)`);
  const family = FAMILIES[network.family];
  if (!family.sweep) throw new UsageError(`sweeps are not yet supported on ${chain}`);
  return { network, family: family as ChainFamilyAdapter & { sweep: NonNullable<ChainFamilyAdapter['sweep']> } };
}

/** The fields every plan file starts with, sweep or refund. */
export function planHeader(network: ResolvedNetwork, kind: SweepPlan['kind'], to: string, feePayer: string | null, now: Date): Omit<SweepPlan, 'id' | 'deposits' | 'skipped' | 'transactions'> {
  return { format: 'chaingate-sweep-plan/1', kind, chain: network.chain, family: network.family, network: network.network, testnet: network.testnet, to, feePayer, createdAt: now.toISOString() };
}

/** How long a plan not yet broadcast reserves its deposits (and a refund its amount): a day to sign it offline. */
export const PLAN_RESERVATION_MS = 24 * 3_600_000;

/** The database's record of a plan (its whole file as the body). */
export function planRecord(plan: SweepPlan, now: Date): PlanRecord {
  return {
    id: plan.id,
    chain: plan.chain,
    network: plan.network,
    isTestnet: plan.testnet,
    kind: plan.kind,
    toAddress: plan.to,
    feePayer: plan.feePayer,
    body: JSON.stringify(plan),
    expiresAt: new Date(now.getTime() + PLAN_RESERVATION_MS),
  };
}

/** An address given on the command line, in its canonical form, or a UsageError naming the flag. */
export function checkedAddress(network: ResolvedNetwork, flag: string, value: string): string {
  try {
    return validateAddress(network.family, value, network.testnet, { network: network.network });
  } catch (err) {
    if (err instanceof InvalidAddressError) throw new UsageError(`${flag}: ${err.message}`);
    throw err;
  }
}

function parseMin(network: ResolvedNetwork, values: string[]): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const value of values) {
    const [symbol, amount] = value.includes('=') ? (value.split('=', 2) as [string, string]) : [network.native.symbol, value];
    const token = network.tokens.find((t) => t.symbol === symbol.toUpperCase());
    if (!token) throw new UsageError(`--min ${value}: ${network.chain} has no ${symbol} (known: ${network.tokens.map((t) => t.symbol).join(', ')})`);
    if (!isDecimalString(amount)) throw new UsageError(`--min ${value}: not a decimal amount such as 0.001`);
    try {
      out[token.symbol] = parseUnits(amount, token.decimals);
    } catch {
      throw new UsageError(`--min ${value}: ${token.symbol} has ${token.decimals} decimals`);
    }
  }
  return out;
}

export async function planSweep(common: Common, input: PlanSweepInput, now = new Date()): Promise<PlanSweepResult> {
  const { network, family } = sweepNetwork(common, input.chain, input.testnet);
  const to = checkedAddress(network, '--to', input.to);
  const feePayer = input.feePayer === null ? null : checkedAddress(network, '--fee-payer', input.feePayer);
  const min = parseMin(network, input.min);
  const reader = poolReader(common.db);
  const pool = { chain: network.chain, isTestnet: network.testnet };
  const { candidates, skipped } = await sweepCandidates(reader, pool, now);
  // Sweeping into a deposit address would hand the funds to a buyer's payment record.
  if (await isPoolAddress(reader, pool, to)) {
    throw new UsageError(`--to is an address of the ${network.chain} deposit pool: sweep to a cold wallet address outside the pool`);
  }
  const base = planHeader(network, 'sweep', to, feePayer, now);
  const planner = await family.sweep.planner();
  const planned =
    candidates.length === 0
      ? { deposits: [], skipped: [], transactions: [] }
      : await planner.plan({ network, config: common.config, log: common.log, candidates, to, feePayer, min, accountKeys: input.accountKeys, masterFingerprint: input.masterFingerprint });
  const body = { ...base, deposits: planned.deposits, skipped: [...skipped, ...planned.skipped], transactions: planned.transactions };
  const plan: SweepPlan = { ...body, id: planId(body as SweepPlan) };
  if (plan.transactions.length === 0) {
    const reason = candidates.length === 0 ? `no ${network.chain} deposit has ended its payment and is free to sweep` : 'no deposit holds anything worth moving';
    return { written: false, plan, reason };
  }
  // Recorded first: a plan file the database does not know could never be broadcast.
  await common.db.write(async (x) => {
    await recordPlan(x, planRecord(plan, now), now);
    await input.inWrite?.(x, plan);
  });
  if (input.out !== null) writePlanFile(input.out, plan);
  return { written: true, plan };
}
