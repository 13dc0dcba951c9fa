import type { ResolvedNetwork } from '../../chains/registry.ts';
import { UsageError } from '../../domain/errors.ts';
import { formatUnits } from '../../domain/money.ts';
import type { Logger } from '../../logger.ts';
import type { Holding, PlannedDeposit, RefundAsk, SweepCandidate, SweepPlan } from '../sweep.ts';
import { tronToHex } from './address.ts';
import { AccountSchema, chainPrices, MaxSizeSchema, ResourceSchema, type TronCall } from './sweep-api.ts';
import { bandwidthOfAccount, hold, lendFor, referenceHeader, tokenBalance, transactionList, transferEnergy, withMargin } from './sweep-build.ts';
import { selfPaying } from './sweep-fee.ts';
import { to41, transferData, type TronSweepPayload } from './sweep-payload.ts';
import { ENERGY, type TronContract } from './sweep-proto.ts';

// A Tron refund (docs/sweeps/tron.md#refunds): exactly the refund of one coin from one address to
// the buyer, nothing else moved. TRX: one TransferContract whose bandwidth (or the buyer's new
// account, unless the fee payer creates it) the address burns, out of what stays when that covers
// it, else out of the refund. A TRC-20: one transfer(buyer, amount) whose energy the fee payer lends
// or tops up as in a sweep, or, with no fee payer, the address burns from its own TRX. The planned
// deposit's `fee` is every fee of the plan's transactions, the fee payer's included (sweep-fee.ts).

interface RefundInput {
  network: ResolvedNetwork;
  log: Logger;
  call: TronCall;
  candidates: SweepCandidate[];
  /** The buyer, validated. */
  to: string;
  feePayer: string | null;
  refund: RefundAsk;
}

type Body = Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>;

export async function planTronRefund({ network, log, call, candidates, to, feePayer, refund }: RefundInput): Promise<Body> {
  const candidate = candidates[0];
  if (candidates.length !== 1 || !candidate) throw new UsageError(`a refund moves coins from one address, not ${candidates.length}`);
  const address = candidate.address;
  if (to === address) throw new UsageError('the refund goes back to the address it comes from: give the buyer\'s address');
  if (feePayer === address) throw new UsageError('the fee payer is the refunding address itself: leave out --fee-payer, or name another account');
  if (refund.amount <= 0n) throw new UsageError(`a refund moves more than 0 ${refund.symbol}`);
  const trx = network.native;
  if (refund.token === null && refund.symbol !== trx.symbol) throw new UsageError(`the native coin of tron is ${trx.symbol}, not ${refund.symbol}`);
  if (refund.token !== null && tronToHex(refund.token) === null) throw new UsageError(`${refund.token} is not a Tron token contract address`);
  const fmt = (amount: bigint, decimals = trx.decimals, symbol = trx.symbol) => `${formatUnits(amount, decimals)} ${symbol}`;

  const prices = await chainPrices(call);
  const header = await referenceHeader(call);
  const account = await call('/wallet/getaccount', { address: to41(address) }, AccountSchema);
  const exists = account.address !== undefined;
  const resource = exists ? await call('/wallet/getaccountresource', { address: to41(address) }, ResourceSchema) : null;
  const bandwidth = bandwidthOfAccount(resource, prices);

  // Every coin the address holds, so the summary says what stays.
  const tokens = network.tokens.filter((t) => t.address).map((t) => ({ symbol: t.symbol, token: t.address!, decimals: t.decimals }));
  if (refund.token !== null && !tokens.some((t) => t.token === refund.token)) tokens.push({ symbol: refund.symbol, token: refund.token, decimals: refund.decimals });
  const holdings: Holding[] = [];
  let refunded = 0n;
  for (const t of tokens) {
    const amount = await tokenBalance(call, t.token, address);
    if (t.token === refund.token) refunded = amount;
    if (amount > 0n) holdings.push(hold(t.symbol, t.token, t.decimals, amount));
  }
  if (account.balance > 0n) holdings.push(hold(trx.symbol, null, trx.decimals, account.balance));
  if (refund.token === null) refunded = account.balance;
  if (refunded < refund.amount) {
    throw new UsageError(`${address} holds ${fmt(refunded, refund.decimals, refund.symbol)}: less than the refund of ${fmt(refund.amount, refund.decimals, refund.symbol)}`);
  }

  // The fee payer's own transactions: its bandwidth, and what it burns or sends beyond it.
  const { transactions, push, price, feeOf } = transactionList(header, prices);
  const payer = feePayer === null ? null : await payerOf(call, feePayer, network, prices);
  let payerSpend = 0n;
  const fromPayer = (kind: TronSweepPayload['kind'], contract: TronContract, after: string[], createsAccount = false) => {
    const sent = push(kind, feePayer!, contract, { after, deposit: address, bandwidth: payer!.bandwidth, createsAccount });
    payerSpend += sent.fee;
    return sent;
  };
  const leftBehind: PlannedDeposit['leftBehind'] = [];
  let moved: bigint;

  if (refund.token === null) {
    const buyer = await call('/wallet/getaccount', { address: to41(to) }, AccountSchema);
    const transfer = (amount: bigint): TronContract => ({ type: 'TransferContract', owner: to41(address), to: to41(to), amount });
    let before: string[] = [];
    // The fee payer creates the buyer's account, so the refund does not burn 1.1 TRX for it; else
    // a transfer to a new address creates it: 1 TRX, and 0.1 TRX unless staked bandwidth pays.
    let createsAccount = false;
    if (buyer.address === undefined && payer !== null) before = [fromPayer('activate', { type: 'AccountCreateContract', owner: to41(feePayer!), account: to41(to), accountType: 0 }, []).id];
    else createsAccount = buyer.address === undefined;
    const feeAt = (amount: bigint) => price(transfer(amount), { bandwidth, createsAccount });
    // The fee comes out of what stays when that covers it, else out of the refund.
    moved = account.balance - refund.amount >= feeAt(refund.amount) ? refund.amount : selfPaying(refund.amount, feeAt).amount;
    if (moved <= 0n) throw new UsageError(`a refund of ${fmt(refund.amount)} does not cover its own ${fmt(feeAt(refund.amount))} fee`);
    const own = push('trx', address, transfer(moved), { after: before, deposit: address, bandwidth, createsAccount }).fee;
    const stays = account.balance - moved - own;
    if (stays > 0n) leftBehind.push({ holding: hold(trx.symbol, null, trx.decimals, stays), reason: 'not refunded: stays on the address' });
  } else {
    moved = refund.amount;
    const energy = await transferEnergy(call, refund.token, address, to, refund.amount);
    const feeLimit = withMargin(energy) * prices.energyFee;
    const transfer: TronContract = { type: 'TriggerSmartContract', owner: to41(address), contract: to41(refund.token), callValue: 0n, data: transferData(to, refund.amount) };
    const lent = payer === null ? null : lendFor(payer.resource, energy);
    const delegate = payer !== null && lent !== null && lent <= (await call('/wallet/getcandelegatedmaxsize', { owner_address: to41(feePayer!), type: 1 }, MaxSizeSchema)).max_size;
    let before: string[] = [];
    if (payer === null) {
      const need = price(transfer, { feeLimit, bandwidth });
      if (account.balance < need) {
        throw new UsageError(
          `${address} holds ${fmt(account.balance)}, and its ${refund.symbol} transfer may burn up to ${fmt(need)} of energy and bandwidth: pass --fee-payer <address> (an account of this wallet that lends energy or tops up TRX), or send it TRX first`,
        );
      }
    } else if (delegate) {
      if (!exists) before = [fromPayer('activate', { type: 'AccountCreateContract', owner: to41(feePayer!), account: to41(address), accountType: 0 }, []).id];
      before = [fromPayer('delegate', { type: 'DelegateResourceContract', owner: to41(feePayer!), receiver: to41(address), resource: ENERGY, balance: lent!, lock: false, lockPeriod: 0n }, before).id];
    } else {
      before = [fromPayer('top-up', { type: 'TransferContract', owner: to41(feePayer!), to: to41(address), amount: feeLimit }, [], !exists).id];
      payerSpend += feeLimit;
      leftBehind.push({ holding: hold(trx.symbol, null, trx.decimals, feeLimit), reason: 'not refunded: at most this much of the TRX top-up stays unburned on the address (energy estimated with a 20 % margin)' });
    }
    // Its fee limit is the most the energy can burn: with energy lent, usually nothing is.
    const sent = push('token', address, transfer, { after: before, deposit: address, feeLimit, energy, bandwidth });
    if (delegate) fromPayer('undelegate', { type: 'UnDelegateResourceContract', owner: to41(feePayer!), receiver: to41(address), resource: ENERGY, balance: lent! }, [sent.id]);
    if (refunded > refund.amount) leftBehind.push({ holding: hold(refund.symbol, refund.token, refund.decimals, refunded - refund.amount), reason: 'not refunded: stays on the address' });
    if (account.balance > 0n) {
      const reason = payer === null ? `not refunded: stays on the address, less at most ${fmt(sent.fee)} the transfer burns` : 'not refunded: stays on the address';
      leftBehind.push({ holding: hold(trx.symbol, null, trx.decimals, account.balance), reason });
    }
  }
  for (const h of holdings) if (h.token !== refund.token && h.token !== null) leftBehind.push({ holding: h, reason: `not refunded: the refund is in ${refund.symbol}` });
  if (payer !== null && payerSpend > payer.balance) {
    throw new UsageError(`the fee payer holds ${fmt(payer.balance)}; this refund needs up to ${fmt(payerSpend)} (a top-up, a new account at ${fmt(prices.createNewAccountFee)} and its bandwidth, bandwidth): fund it first`);
  }
  log.info({ chain: network.chain, transactions: transactions.length, symbol: refund.symbol, feePayerSpend: payerSpend.toString() }, 'tron refund planned');
  return {
    deposits: [{ ...candidate, holdings, moves: [hold(refund.symbol, refund.token, refund.decimals, moved)], fee: feeOf(address).toString(), leftBehind }],
    skipped: [],
    transactions,
  };
}

/** The fee payer's account: it must exist; its balance, resources and bandwidth. */
async function payerOf(call: TronCall, feePayer: string, network: ResolvedNetwork, prices: Awaited<ReturnType<typeof chainPrices>>) {
  const account = await call('/wallet/getaccount', { address: to41(feePayer) }, AccountSchema);
  if (account.address === undefined) throw new UsageError(`the fee payer ${feePayer} has no account on tron ${network.network}: fund it first`);
  const resource = await call('/wallet/getaccountresource', { address: to41(feePayer) }, ResourceSchema);
  return { balance: account.balance, resource, bandwidth: bandwidthOfAccount(resource, prices) };
}
