import type { Common } from '../common.ts';
import { poolAddress, receivedTotal, recordRefund, refundedTotals, refundsOfPayment, sweepsOfAddress } from '../store/refunds.ts';
import { reservedDeposits } from '../store/plan-reservations.ts';
import { poolReader } from '../store/raw-sql.ts';
import { findPayment, type StoredPayment } from '../store/records.ts';
import { recordPlan } from '../store/sweeps.ts';
import type { Executor } from '../store/executor.ts';
import { UsageError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { isLivePayment } from '../domain/lifecycle.ts';
import { formatUnits, isDecimalString, parseUnits } from '../domain/money.ts';
import type { RefundAsk, SweepCandidate, SweepPlan } from '../families/sweep.ts';
import { planId, writePlanFile } from './plan-file.ts';
import { checkedAddress, planHeader, planRecord, sweepNetwork } from './plan-sweep.ts';

// `chaingate refund plan` (docs/refunds.md): how much of a payment may go back, from where, and
// a refund plan (kind "refund") built by the chain family's sweep planner, which `sweep sign`
// signs offline like any plan. The refund is recorded with its plan in one write.

export interface PlanRefundInput {
  payment: string;
  to: string;
  /** Coin units (decimal string); absent: the over-payment. */
  amount?: string;
  /** `deposit` (the default) or a merchant wallet address. */
  fromAddress?: string;
  feePayer: string | null;
  /** Where to write plan.json; null: only recorded (the dashboard serves it from the record). */
  out: string | null;
  /** Runs inside the write that records the plan (the dashboard's audit row). */
  inWrite?: (x: Executor, plan: SweepPlan, refundId: string) => Promise<void>;
}

export interface PlanRefundResult {
  plan: SweepPlan;
  refundId: string;
  /** Atomic units of the payment's coin. */
  received: bigint;
  alreadyRefunded: bigint;
}

/** What the payment received, what refunds already cover, and the amount of this one (atomic). */
function refundAmount(payment: StoredPayment, received: bigint, committed: bigint, asked: string | undefined): bigint {
  const fmt = (v: bigint) => `${formatUnits(v, payment.decimals)} ${payment.cryptoCurrency}`;
  const left = received - committed;
  if (asked !== undefined) {
    if (!isDecimalString(asked)) throw new UsageError(`--amount ${asked}: not a decimal amount such as 0.5`);
    let amount: bigint;
    try {
      amount = parseUnits(asked, payment.decimals);
    } catch {
      throw new UsageError(`--amount ${asked}: ${payment.cryptoCurrency} has ${payment.decimals} decimals`);
    }
    if (amount <= 0n) throw new UsageError('--amount must be more than 0');
    if (amount > left) {
      throw new UsageError(
        `--amount ${asked} ${payment.cryptoCurrency} is more than was received: the payment received ${fmt(received)}${committed > 0n ? `, of which refunds already cover ${fmt(committed)}` : ''}; at most ${fmt(left)} can be refunded`,
      );
    }
    return amount;
  }
  const over = overPayment(payment, received, committed);
  if (over <= 0n) {
    throw new UsageError(
      `payment ${payment.id} has no over-payment to refund (received ${fmt(received)}, expected ${payment.expectedAmount} ${payment.cryptoCurrency}${committed > 0n ? `, refunds already cover ${fmt(committed)}` : ''}): give --amount to refund part or all of ${fmt(left)}`,
    );
  }
  return over;
}

/** What `refund plan` refunds when no amount is given: what the payment received beyond what the merchant keeps, less refunds committed. */
function overPayment(payment: StoredPayment, received: bigint, committed: bigint): bigint {
  // The merchant keeps the expected amount of a completed payment; of any other, nothing.
  let kept = 0n;
  if (payment.status === 'COMPLETED') {
    try {
      kept = parseUnits(payment.expectedAmount, payment.decimals);
    } catch {
      throw new UsageError(`payment ${payment.id} was priced verbatim (expected ${payment.expectedAmount} is not a ${payment.cryptoCurrency} amount): give --amount`);
    }
  }
  return received - kept - committed;
}

export interface RefundOffer {
  /** Atomic units of the payment's coin. */
  received: bigint;
  committed: bigint;
  /** What a refund without an amount would cover (0: none; null: the payment was priced verbatim). */
  overPayment: bigint | null;
  /** The most a refund may cover now. */
  left: bigint;
}

/** What a refund of this payment may cover now, by the same rules `planRefund` applies (the dashboard's form shows it). */
export async function refundOffer(common: Common, payment: StoredPayment, now = new Date()): Promise<RefundOffer> {
  const reader = poolReader(common.db);
  const received = await receivedTotal(reader, payment);
  const { committed } = refundedTotals(await refundsOfPayment(reader, payment.id, now));
  let over: bigint | null;
  try {
    over = overPayment(payment, received, committed);
  } catch {
    over = null;
  }
  return { received, committed, overPayment: over === null ? null : over > 0n ? over : 0n, left: received - committed };
}

export async function planRefund(common: Common, input: PlanRefundInput, now = new Date()): Promise<PlanRefundResult> {
  const reader = poolReader(common.db);
  const payment = await findPayment(reader, input.payment.trim());
  if (!payment) throw new UsageError(`no payment ${JSON.stringify(input.payment)}`);
  if (payment.status === 'REFUNDED') throw new UsageError(`payment ${payment.id} is already REFUNDED in full`);
  if (isLivePayment(payment.status)) throw new UsageError(`payment ${payment.id} is ${payment.status}: a payment is refunded once it has ended (COMPLETED, FAILED or EXPIRED)`);
  const { network, family } = sweepNetwork(common, payment.blockchain, payment.isTestnet);
  if (network.network !== payment.network) throw new UsageError(`payment ${payment.id} is on ${payment.blockchain} ${payment.network}, but this configuration's ${payment.isTestnet ? 'testnet' : 'mainnet'} is ${network.network}`);
  const pool = { chain: network.chain, isTestnet: network.testnet };

  const to = checkedAddress(network, '--to', input.to);
  if (await poolAddress(reader, pool, to)) throw new UsageError(`--to is an address of the ${network.chain} deposit pool: refund to the buyer's own address`);
  const feePayer = input.feePayer === null ? null : checkedAddress(network, '--fee-payer', input.feePayer);

  const received = await receivedTotal(reader, payment);
  if (received === 0n) throw new UsageError(`payment ${payment.id} received nothing: there is nothing to refund`);
  const refunds = await refundsOfPayment(reader, payment.id, now);
  const { committed } = refundedTotals(refunds);
  const amount = refundAmount(payment, received, committed, input.amount);

  const candidate = await refundSource(common, payment, pool, input.fromAddress, now);
  const ask: RefundAsk = { symbol: payment.cryptoCurrency, token: payment.tokenAddress, decimals: payment.decimals, amount };
  const planner = await family.sweep.planner();
  const planned = await planner.plan({ network, config: common.config, log: common.log, candidates: [candidate], to, feePayer, min: {}, refund: ask });
  if (planned.transactions.length === 0) throw new UsageError(`the ${network.chain} planner found nothing to send from ${candidate.address}: ${planned.skipped.map((s) => s.reason).join('; ') || 'no reason given'}`);
  const body: Omit<SweepPlan, 'id'> = {
    ...planHeader(network, 'refund', to, feePayer, now),
    refund: { paymentId: payment.id, symbol: ask.symbol, token: ask.token, decimals: ask.decimals, amount: amount.toString() },
    deposits: planned.deposits,
    skipped: planned.skipped,
    transactions: planned.transactions,
  };
  const plan: SweepPlan = { ...body, id: planId(body) };
  const refundId = newId();
  await common.db.write(async (x) => {
    await recordPlan(x, planRecord(plan, now), now);
    await recordRefund(x, {
      id: refundId,
      paymentId: payment.id,
      planId: plan.id,
      chain: network.chain,
      network: network.network,
      isTestnet: network.testnet,
      symbol: ask.symbol,
      tokenAddress: ask.token,
      decimals: ask.decimals,
      amount: amount.toString(),
      toAddress: to,
      fromAddress: candidate.address,
      fromKind: candidate.source === 'wallet' ? 'wallet' : 'deposit',
      feeFromPayment: feeFromPayment(plan, ask, candidate).toString(),
      createdAt: now,
    });
    await input.inWrite?.(x, plan, refundId);
  });
  if (input.out !== null) writePlanFile(input.out, plan);
  return { plan, refundId, received, alreadyRefunded: committed };
}

/**
 * The fee the payment's own funds pay on top of the refund: a native refund from the deposit with no
 * fee payer whose buyer receives the whole amount (the fee came out of what stays). Otherwise the fee
 * is the fee payer's, the merchant wallet's, a token deposit's gas, or already inside the amount.
 */
function feeFromPayment(plan: SweepPlan, ask: RefundAsk, candidate: SweepCandidate): bigint {
  if (ask.token !== null || plan.feePayer !== null || candidate.source === 'wallet') return 0n;
  const deposit = plan.deposits.find((d) => d.address === candidate.address);
  const moved = deposit?.moves.find((m) => m.token === null)?.amount;
  return deposit && moved !== undefined && BigInt(moved) === ask.amount ? BigInt(deposit.fee) : 0n;
}

/** The address the refund is paid from: the payment's deposit unless it was swept, or the wallet named. */
async function refundSource(common: Common, payment: StoredPayment, pool: { chain: string; isTestnet: boolean }, fromAddress: string | undefined, now: Date): Promise<SweepCandidate> {
  const reader = poolReader(common.db);
  const { network } = sweepNetwork(common, pool.chain, pool.isTestnet);
  if (fromAddress !== undefined) {
    const address = checkedAddress(network, '--from-address', fromAddress);
    if (await poolAddress(reader, pool, address)) throw new UsageError(`--from-address ${address} is a deposit address of the pool: leave out --from-address to refund from the payment's own deposit`);
    return { address, derivationIndex: null, source: 'wallet' };
  }
  if (payment.paymentType !== 'DIRECT') {
    throw new UsageError(`payment ${payment.id} was paid through the contract into the treasury ${payment.address}: refund from a wallet address with --from-address`);
  }
  const deposit = await poolAddress(reader, pool, payment.address);
  if (!deposit) throw new UsageError(`the deposit ${payment.address} is not in the ${pool.chain} pool any more: refund from a wallet address with --from-address`);
  const held = (await reservedDeposits(reader, pool, now)).get(payment.address);
  if (held && held.kind === 'sweep') {
    throw new UsageError(`the deposit ${payment.address} is reserved by sweep plan ${held.planId.slice(0, 16)}…, not yet broadcast: broadcast it and refund from a wallet address with --from-address, or \`chaingate sweep cancel ${held.planId.slice(0, 16)}\` first`);
  }
  const sweeps = await sweepsOfAddress(reader, pool, payment.address);
  const last = sweeps[0];
  if (last) {
    const what = last.status === 'FINAL' ? `was swept on ${last.at.toISOString().slice(0, 10)}` : 'is in a sweep on its way';
    throw new UsageError(`the deposit ${payment.address} ${what} (sweep plan ${last.planId.slice(0, 16)}…): its funds are in your cold wallet, not on the deposit; refund from a wallet address with --from-address <address>`);
  }
  return { address: payment.address, derivationIndex: deposit.derivationIndex, source: deposit.source };
}
