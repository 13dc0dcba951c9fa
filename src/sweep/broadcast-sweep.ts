import type { Common } from '../common.ts';
import { isLivePayment } from '../domain/lifecycle.ts';
import { applySweepFact, finalizeSweepTx } from '../store/lifecycle.ts';
import { depositConflicts, lockForBroadcast, planState } from '../store/plan-reservations.ts';
import { poolReader } from '../store/raw-sql.ts';
import { findPayment } from '../store/records.ts';
import { receivedTotal, refundedTotals, refundsOfPayment } from '../store/refunds.ts';
import type { Executor } from '../store/executor.ts';
import { formatUnits } from '../domain/money.ts';
import { findPlan, plansToFollow, recordSignedTxs, txsOfPlan, type SignedTxRecord } from '../store/sweeps.ts';
import { UsageError } from '../domain/errors.ts';
import type { SweepTxStatus } from '../domain/sweep-lifecycle.ts';
import type { DecodedSignedTx, FamilySweepSender, SignedSweep, SweepPlan } from '../families/sweep.ts';
import { verifySigned } from './check-decoded.ts';
import { checkPlan, parseSignedText, readPlanFile, readSignedFile } from './plan-file.ts';
import { sweepNetwork } from './plan-sweep.ts';

// `chaingate sweep broadcast` (docs/sweeps.md#broadcast): the signed file is read by the family's
// verifier and must be exactly the recorded plan's transactions, signed by its keys, hashing to the
// txids it names; then, in one write that locks the payment and deposits, the world is checked again
// (deposits free, the refund still fits) and every signed transaction is recorded before the first is sent, then each is sent (unless the chain already has it) and followed to the
// network's finality. Each state change goes through the sweep lifecycle (src/store/lifecycle.ts
// applySweepFact, one Database.write each). Running it again resumes: a final transaction is never
// sent again, a pending one is only looked at, a refused one is tried again with the same bytes.

export interface BroadcastInput {
  /** Which command runs: a refund plan is broadcast by `refund broadcast`, which checks its amount again. */
  kind?: 'sweep' | 'refund';
  /** The signed file's path, or its name in what is said when `signedText` holds it. */
  signed: string;
  /** The signed file's content (the dashboard's upload) instead of reading `signed`. */
  signedText?: string;
  /** Only this plan's signed file is accepted (the dashboard's page of one plan). */
  planId?: string;
  /** Runs inside the write that records the signed transactions (the dashboard's audit row). */
  inWrite?: (x: Executor, plan: SweepPlan) => Promise<void>;
  plan?: string;
  wait: boolean;
  /** How long --wait follows the transactions before it gives up (and says how to resume). */
  waitMs?: number;
}

export interface BroadcastTxView {
  id: string;
  txid: string;
  status: SweepTxStatus;
  error: string | null;
  deposits: number;
  moves: Record<string, string>;
  fee: string;
}

export interface BroadcastResult {
  planId: string;
  chain: string;
  network: string;
  transactions: BroadcastTxView[];
  /** Whether every transaction is final. */
  done: boolean;
}

/** What a transaction moves to the plan's destination, per symbol (atomic), read from its bytes. */
function movesOf(plan: SweepPlan, tx: DecodedSignedTx): Record<string, string> {
  const totals: Record<string, bigint> = {};
  for (const p of tx.pays) if (p.to === plan.to) totals[p.symbol] = (totals[p.symbol] ?? 0n) + p.amount;
  return Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, v.toString()]));
}

/** The signed file, checked against the plan the database recorded (and the plan file, when given). */
async function loadSigned(common: Common, input: BroadcastInput): Promise<{ signed: SignedSweep; plan: SweepPlan }> {
  const signed = input.signedText !== undefined ? parseSignedText(input.signedText, input.signed) : readSignedFile(input.signed);
  if (input.planId !== undefined && signed.planId !== input.planId) {
    throw new UsageError(`${input.signed} was signed for plan ${signed.planId.slice(0, 16)}…, not this plan ${input.planId.slice(0, 16)}…`);
  }
  const record = await findPlan(poolReader(common.db), signed.planId);
  if (!record) {
    throw new UsageError(`${input.signed} is for plan ${signed.planId.slice(0, 16)}…, which this database never made: broadcast it where \`sweep plan\` ran, or make a new plan`);
  }
  if (record.chain !== signed.chain || record.network !== signed.network || record.isTestnet !== signed.testnet) {
    throw new UsageError(`${input.signed} says ${signed.chain} ${signed.network}, but its plan is for ${record.chain} ${record.network}: refused`);
  }
  const plan = checkPlan(JSON.parse(record.body), `the recorded plan ${record.id.slice(0, 16)}…`);
  if (input.plan !== undefined) {
    const file = readPlanFile(input.plan);
    if (file.id !== signed.planId) throw new UsageError(`${input.plan} is plan ${file.id.slice(0, 16)}…, but ${input.signed} was signed for plan ${signed.planId.slice(0, 16)}…`);
  }
  const planned = plan.transactions.map((t) => t.id).sort().join(',');
  if (signed.transactions.map((t) => t.id).sort().join(',') !== planned) {
    throw new UsageError(`${input.signed} does not hold the plan's transactions (${planned}): sign the plan again`);
  }
  return { signed, plan };
}

export async function broadcastSweep(common: Common, input: BroadcastInput, progress: (line: string) => void = () => {}, now = () => new Date()): Promise<BroadcastResult> {
  const { signed, plan } = await loadSigned(common, input);
  const kind = input.kind ?? 'sweep';
  if (plan.kind !== kind) throw new UsageError(`${input.signed} is a signed ${plan.kind} plan: broadcast it with \`chaingate ${plan.kind} broadcast\``);
  const { network, family } = sweepNetwork(common, plan.chain, plan.testnet);
  if (network.network !== plan.network) throw new UsageError(`the plan is for ${plan.chain} ${plan.network}, but this configuration's ${plan.testnet ? 'testnet' : 'mainnet'} is ${network.network}`);
  const verified = verifySigned(plan, signed, await family.sweep.verifier(), input.signed);
  const sender = await family.sweep.sender();

  const txs: SignedTxRecord[] = plan.transactions.map((t) => {
    const s = signed.transactions.find((x) => x.id === t.id)!;
    const read = verified.get(t.id)!;
    // Until the chain's answer replaces it, the fee recorded is the most the bytes allow.
    return { planId: plan.id, txKey: t.id, chain: plan.chain, network: plan.network, isTestnet: plan.testnet, txid: read.txid, raw: s.raw, deposits: t.deposits, moves: movesOf(plan, read), fee: read.fee.toString() };
  });
  const refused = await common.db.write(async (x) => {
    const pool = { chain: plan.chain, isTestnet: plan.testnet };
    await lockForBroadcast(x, pool, plan.deposits.map((d) => d.address), plan.refund?.paymentId ?? null);
    const recorded = await txsOfPlan(x, plan.id);
    // A resumed broadcast (this plan's transactions already recorded) was checked when they were.
    if (recorded.length === 0) {
      const why = await worldRefusal(x, plan, now());
      if (why !== null) return why;
    }
    const { conflict } = await recordSignedTxs(x, txs);
    if (conflict) {
      return `${conflict.txKey} of this plan was recorded as ${conflict.recorded}, but ${input.signed} holds ${conflict.given}: the plan was signed twice; broadcast the first signed file, or make a new plan`;
    }
    await input.inWrite?.(x, plan);
    return null;
  });
  if (refused !== null) throw new UsageError(`refused, nothing sent: ${refused}`);

  const deadline = Date.now() + (input.waitMs ?? 6 * 3_600_000);
  const pollMs = Math.min(Math.max(Math.floor(network.blockTimeMs / 4), 250), 30_000);
  for (;;) {
    await onePass(common, plan, sender, network, progress);
    const rows = await txsOfPlan(poolReader(common.db), plan.id);
    const done = rows.every((r) => r.status === 'FINAL');
    const stuck = rows.some((r) => r.status === 'FAILED');
    if (!input.wait || done || stuck || Date.now() > deadline) {
      return {
        planId: plan.id,
        chain: plan.chain,
        network: plan.network,
        done,
        transactions: rows.map((r) => ({ id: r.txKey, txid: r.txid, status: r.status, error: r.error, deposits: (JSON.parse(r.deposits) as string[]).length, moves: JSON.parse(r.moves) as Record<string, string>, fee: r.fee })),
      };
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/**
 * Why the plan may not be recorded now, or null: inside the broadcast's write, after the row locks.
 * The plan is neither cancelled nor expired; its deposits are not leased to a live payment, in
 * another plan's transaction on its way, or swept; a refund still fits what its payment has left
 * after the refunds already broadcast, and the payment has ended and is not refunded already.
 */
async function worldRefusal(x: Executor, plan: SweepPlan, now: Date): Promise<string | null> {
  const state = await planState(x, plan.id);
  if (state?.cancelledAt) return `plan ${plan.id.slice(0, 16)}… was cancelled on ${state.cancelledAt.toISOString()}: make a new plan`;
  if (state?.expiresAt && state.expiresAt.getTime() <= now.getTime()) return `plan ${plan.id.slice(0, 16)}… expired on ${state.expiresAt.toISOString()} (a plan reserves its deposits for a day): make a new plan`;
  const conflicts = await depositConflicts(x, { chain: plan.chain, isTestnet: plan.testnet }, plan.deposits.map((d) => d.address), plan.id);
  if (conflicts.length > 0) return conflicts.join('; ');
  if (!plan.refund) return null;
  const refund = plan.refund;
  const payment = await findPayment(x, refund.paymentId);
  if (!payment) return `the refund's payment ${refund.paymentId} is not in this database`;
  if (payment.status === 'REFUNDED') return `payment ${payment.id} is already REFUNDED`;
  if (isLivePayment(payment.status)) return `payment ${payment.id} is ${payment.status}`;
  const refunds = await refundsOfPayment(x, payment.id);
  const mine = refunds.find((r) => r.planId === plan.id);
  const uses = BigInt(mine?.uses ?? refund.amount);
  // Of the others, those already broadcast: among plans that both got past planning, the first broadcast wins.
  const others = refundedTotals(refunds, plan.id).broadcast;
  const received = await receivedTotal(x, payment);
  if (others + uses > received) {
    const fmt = (v: bigint) => `${formatUnits(v, refund.decimals)} ${refund.symbol}`;
    return `with this refund of ${fmt(uses)}, refunds of payment ${payment.id} would use ${fmt(others + uses)}, more than the ${fmt(received)} it received (another refund was broadcast since this one was planned)`;
  }
  return null;
}

/** One look at every transaction of the plan: send what the chain lacks, record what it says. */
async function onePass(common: Common, plan: SweepPlan, sender: FamilySweepSender, network: Parameters<FamilySweepSender['status']>[0], progress: (line: string) => void): Promise<void> {
  const rows = await txsOfPlan(poolReader(common.db), plan.id);
  const byKey = new Map(rows.map((r) => [r.txKey, r]));
  let staleChecked = false;
  for (const tx of plan.transactions) {
    const row = byKey.get(tx.id)!;
    if (row.status === 'FINAL') continue;
    const seen = await sender.status(network, common.config, row.txid);
    if (seen.state === 'final') {
      await common.db.write((x) => finalizeSweepTx(x, row.id, seen.fee ? { fee: seen.fee } : {}, plan.refund?.paymentId ?? null));
      progress(`${tx.id} ${row.txid}: final`);
      continue;
    }
    if (seen.state === 'failed') {
      await common.db.write((x) => applySweepFact(x, row.id, 'reverted', { error: seen.error ?? 'failed on chain' }));
      progress(`${tx.id} ${row.txid}: failed on chain: ${seen.error ?? ''}`);
      continue;
    }
    if (seen.state === 'pending') {
      if (row.status !== 'SENT') await common.db.write((x) => applySweepFact(x, row.id, 'accepted', { error: null }));
      continue;
    }
    // Unknown to the chain: a transaction sent before and since dropped is simply sent again.
    if (row.status === 'SENT') await common.db.write((x) => applySweepFact(x, row.id, 'dropped'));
    const waiting = tx.after.filter((id) => byKey.get(id)?.status !== 'FINAL');
    if (waiting.length > 0) {
      progress(`${tx.id}: waits for ${waiting.join(', ')} to be final`);
      continue;
    }
    // Before the plan's first send, the planner's view is checked against the chain once.
    const anySent = rows.some((r) => r.attempts > 0 || r.status === 'SENT' || r.status === 'FINAL');
    if (!anySent && !staleChecked && sender.stale) {
      staleChecked = true;
      const why = await sender.stale(network, common.config, plan);
      if (why !== null) {
        await common.db.write((x) => applySweepFact(x, row.id, 'rejected', { error: `stale plan (the planner's check): ${why}`, attempted: true }));
        progress(`${tx.id}: not sent: the plan is stale: ${why}`);
        return;
      }
    }
    const answer = await sender.broadcast(network, common.config, { id: tx.id, raw: row.raw, txid: row.txid });
    if (answer.accepted) {
      await common.db.write((x) => applySweepFact(x, row.id, 'accepted', { error: null, attempted: true }));
      progress(`${tx.id} ${row.txid}: sent`);
    } else {
      await common.db.write((x) => applySweepFact(x, row.id, 'rejected', { error: `the node refused it: ${answer.error}`, attempted: true }));
      progress(`${tx.id} ${row.txid}: refused by the node: ${answer.error}`);
    }
  }
}

/**
 * `serve`'s follow-up of broadcasts (docs/dashboard.md#following-a-broadcast): the same one pass
 * `broadcast --wait` repeats, once over every plan whose broadcast began and has not ended. A pass
 * sends what the chain lacks (a transaction waiting for an earlier one) and records what it says,
 * through the sweep lifecycle's conditional writes, so a CLI following the same plan meanwhile is
 * harmless: both read the chain, and a status moves once.
 */
export async function followBroadcasts(common: Common): Promise<number> {
  const ids = await plansToFollow(poolReader(common.db));
  for (const id of ids) {
    try {
      const record = await findPlan(poolReader(common.db), id);
      if (!record) continue;
      const plan = checkPlan(JSON.parse(record.body), `the recorded plan ${id.slice(0, 16)}…`);
      const { network, family } = sweepNetwork(common, plan.chain, plan.testnet);
      await onePass(common, plan, await family.sweep.sender(), network, () => {});
    } catch (err) {
      common.log.warn({ err, planId: id }, 'following a broadcast failed; tried again at the next tick');
    }
  }
  return ids.length;
}
