import { UsageError } from '../../domain/errors.ts';
import type { FamilySweepPlanner, Holding, PlannedDeposit, SweepPlan } from '../sweep.ts';
import { tronAddresses } from './address.ts';
import { AccountSchema, chainPrices, MaxSizeSchema, ResourceSchema, tronSweepApi } from './sweep-api.ts';
import { bandwidthOfAccount, hold, lendFor as lendAt, referenceHeader, tokenBalance, transactionList, transferEnergy, withMargin } from './sweep-build.ts';
import { selfPaying } from './sweep-fee.ts';
import { to41, transferData, type TronSweepPayload } from './sweep-payload.ts';
import { ENERGY, type TronContract } from './sweep-proto.ts';
import { planTronRefund } from './sweep-refund.ts';

// The server half of a Tron sweep (docs/sweeps/tron.md). Live state from java-tron's HTTP API, then
// one unsigned transaction per contract (Tron has one contract and one owner per transaction):
//  - TRX: a TransferContract of the balance to the cold address, less the bandwidth burn when the
//    deposit's staked bandwidth or free 600 points a day do not cover it;
//  - each TRC-20 of the registry: transfer(address,uint256) from the deposit. A deposit holding only
//    tokens has no TRX and may not even exist as an account (a TRC-20 transfer does not create one),
//    so the fee payer first creates it (AccountCreateContract) and then either lends it energy from
//    its stake (DelegateResourceContract, taken back by UnDelegateResourceContract after the
//    transfer), or, when its stake cannot lend enough, tops it up with the TRX the energy burns.
// Every transaction refers to the head block and expires 24 h after it (java-tron's limit), and is
// priced as java-tron charges it (sweep-fee.ts); a deposit's `fee` is the sum over the transactions
// made for it, the fee payer's included.
// A refund (`refund` set) is one exact move from one address: sweep-refund.ts plans it.

export { MAX_EXPIRATION_MS } from './sweep-build.ts';

export const tronSweepPlanner: FamilySweepPlanner = {
  async plan({ network, config, log, candidates, to: toInput, feePayer: feePayerInput, min, refund }) {
    const to = tronAddresses.validate(toInput.trim(), network.testnet, {});
    const feePayer = feePayerInput === null ? null : tronAddresses.validate(feePayerInput.trim(), network.testnet, {});
    if (feePayer !== null && candidates.some((c) => c.address === feePayer)) throw new UsageError('the fee payer is one of the pool\'s deposit addresses: use an account outside the pool');
    if (feePayer === to) throw new UsageError('the fee payer is the destination: use another account to pay fees');
    const { call } = tronSweepApi(network, config, log);
    if (refund) return planTronRefund({ network, log, call, candidates, to, feePayer, refund });
    const prices = await chainPrices(call);
    const header = await referenceHeader(call);
    const tokens = network.tokens.filter((t) => t.address);
    const trx = network.native;
    const minFor = (symbol: string) => min[symbol] ?? 0n;

    interface TokenMove {
      symbol: string;
      token: string;
      decimals: number;
      amount: bigint;
      energy: bigint;
    }
    const work: { planned: PlannedDeposit; exists: boolean; trx: bigint; bandwidth: ReturnType<typeof bandwidthOfAccount>; tokens: TokenMove[] }[] = [];
    const skipped: SweepPlan['skipped'] = [];
    for (const candidate of candidates) {
      const account = await call('/wallet/getaccount', { address: to41(candidate.address) }, AccountSchema);
      const exists = account.address !== undefined;
      const resource = exists ? await call('/wallet/getaccountresource', { address: to41(candidate.address) }, ResourceSchema) : null;
      const bandwidth = bandwidthOfAccount(resource, prices);
      const holdings: Holding[] = [];
      const leftBehind: PlannedDeposit['leftBehind'] = [];
      const moves: TokenMove[] = [];
      for (const t of tokens) {
        const amount = await tokenBalance(call, t.address!, candidate.address);
        if (amount === 0n) continue;
        const h = hold(t.symbol, t.address!, t.decimals, amount);
        holdings.push(h);
        if (amount < minFor(t.symbol)) leftBehind.push({ holding: h, reason: `below --min ${minFor(t.symbol)} ${t.symbol}` });
        else moves.push({ symbol: t.symbol, token: t.address!, decimals: t.decimals, amount, energy: await transferEnergy(call, t.address!, candidate.address, to, amount) });
      }
      if (account.balance > 0n) holdings.push(hold(trx.symbol, null, trx.decimals, account.balance));
      if (holdings.length === 0) {
        skipped.push({ address: candidate.address, reason: 'holds nothing' });
        continue;
      }
      work.push({ planned: { ...candidate, holdings, moves: [], fee: '0', leftBehind }, exists, trx: account.balance, bandwidth, tokens: moves });
    }
    if (work.some((w) => w.tokens.length > 0) && feePayer === null) {
      throw new UsageError('deposits hold TRC-20 tokens and no TRX for energy: a Tron token sweep needs --fee-payer <address>, an account of yours that lends energy from its stake or pays TRX top-ups');
    }

    // Lend energy when the fee payer's stake can cover every token transfer at once, else top up.
    const payerResource = feePayer ? await call('/wallet/getaccountresource', { address: to41(feePayer) }, ResourceSchema) : null;
    const payerAccount = feePayer ? await call('/wallet/getaccount', { address: to41(feePayer) }, AccountSchema) : null;
    if (feePayer && payerAccount?.address === undefined) throw new UsageError(`the fee payer ${feePayer} has no account on tron ${network.network}: fund it first`);
    const lendFor = (energy: bigint) => lendAt(payerResource!, energy);
    const tokenWork = work.filter((w) => w.tokens.length > 0);
    let lendable = 0n;
    if (feePayer && tokenWork.length > 0) lendable = (await call('/wallet/getcandelegatedmaxsize', { owner_address: to41(feePayer), type: 1 }, MaxSizeSchema)).max_size;
    const lendTotal = tokenWork.reduce<bigint | null>((s, w) => {
      const l = lendFor(w.tokens.reduce((e, t) => e + t.energy, 0n));
      return s === null || l === null ? null : s + l;
    }, 0n);
    const delegate = lendTotal !== null && lendTotal > 0n && lendTotal <= lendable;

    const { transactions, push, price, feeOf } = transactionList(header, prices);
    let payerSpend = 0n;
    const payerBandwidth = bandwidthOfAccount(payerResource, prices);
    const fromPayer = (kind: TronSweepPayload['kind'], contract: TronContract, after: string[], deposit: string, createsAccount = false) => {
      const sent = push(kind, feePayer!, contract, { after, deposit, bandwidth: payerBandwidth, createsAccount });
      payerSpend += sent.fee;
      return sent;
    };

    let coldChecked = false;
    for (const w of work) {
      const d = w.planned;
      const moves: Holding[] = [];
      let before: string[] = [];
      if (w.tokens.length > 0) {
        const energy = w.tokens.reduce((e, t) => e + t.energy, 0n);
        const feeLimitOf = (t: TokenMove) => withMargin(t.energy) * prices.energyFee;
        let lent: bigint | null = null;
        if (delegate) {
          if (!w.exists) before = [fromPayer('activate', { type: 'AccountCreateContract', owner: to41(feePayer!), account: to41(d.address), accountType: 0 }, [], d.address).id];
          lent = lendFor(energy)!;
          before = [fromPayer('delegate', { type: 'DelegateResourceContract', owner: to41(feePayer!), receiver: to41(d.address), resource: ENERGY, balance: lent, lock: false, lockPeriod: 0n }, before, d.address).id];
        } else {
          // The top-up covers the energy burn and each transfer's bandwidth, which a new account's free points cover anyway.
          const topUp = w.tokens.reduce((s, t) => s + feeLimitOf(t), 0n);
          const id = fromPayer('top-up', { type: 'TransferContract', owner: to41(feePayer!), to: to41(d.address), amount: topUp }, [], d.address, !w.exists).id;
          payerSpend += topUp;
          before = [id];
          d.leftBehind.push({ holding: hold(trx.symbol, null, trx.decimals, topUp), reason: 'at most this much of the TRX top-up stays unburned on the deposit (energy estimated with a 20 % margin); a later plan sweeps it' });
        }
        const transfers: string[] = [];
        for (const t of w.tokens) {
          // Its fee limit is the most the energy can burn: lent energy usually leaves all of it unburned.
          const sent = push('token', d.address, { type: 'TriggerSmartContract', owner: to41(d.address), contract: to41(t.token), callValue: 0n, data: transferData(to, t.amount) }, {
            after: before,
            deposit: d.address,
            feeLimit: feeLimitOf(t),
            energy: t.energy,
            bandwidth: w.bandwidth,
          });
          transfers.push(sent.id);
          moves.push(hold(t.symbol, t.token, t.decimals, t.amount));
        }
        if (lent !== null) fromPayer('undelegate', { type: 'UnDelegateResourceContract', owner: to41(feePayer!), receiver: to41(d.address), resource: ENERGY, balance: lent }, transfers, d.address);
        before = transfers;
      }
      if (w.trx > 0n) {
        const h = hold(trx.symbol, null, trx.decimals, w.trx);
        if (w.trx < minFor(trx.symbol)) d.leftBehind.push({ holding: h, reason: `below --min ${minFor(trx.symbol)} ${trx.symbol}` });
        else {
          if (!coldChecked) {
            coldChecked = true;
            const cold = await call('/wallet/getaccount', { address: to41(to) }, AccountSchema);
            if (cold.address === undefined) throw new UsageError(`the destination ${to} has no account on tron ${network.network} yet: a TRX transfer to it would burn 1.1 TRX to create it from every deposit; send it any TRX first and plan again`);
          }
          // The transfer pays its own bandwidth out of the balance.
          const transfer = (amount: bigint): TronContract => ({ type: 'TransferContract', owner: to41(d.address), to: to41(to), amount });
          const { amount, fee: burn } = selfPaying(w.trx, (amount) => price(transfer(amount), { bandwidth: w.bandwidth }));
          if (amount <= 0n) d.leftBehind.push({ holding: h, reason: `no more than the ${burn} sun its transfer would burn for bandwidth` });
          else {
            push('trx', d.address, transfer(amount), { after: before, deposit: d.address, bandwidth: w.bandwidth });
            moves.push(hold(trx.symbol, null, trx.decimals, amount));
          }
        }
      }
      d.moves = moves;
      d.fee = feeOf(d.address).toString();
      if (moves.length === 0) skipped.push({ address: d.address, reason: [...new Set(d.leftBehind.map((l) => l.reason))].join('; ') || 'nothing to move' });
    }
    const deposits = work.map((w) => w.planned).filter((d) => d.moves.length > 0);
    if (feePayer && payerAccount && payerSpend > payerAccount.balance) {
      throw new UsageError(`the fee payer holds ${payerAccount.balance} sun; this sweep needs up to ${payerSpend} (top-ups, new accounts at ${prices.createNewAccountFee} and their bandwidth, bandwidth): fund it first`);
    }
    log.info({ chain: network.chain, deposits: deposits.length, transactions: transactions.length, mode: tokenWork.length ? (delegate ? 'delegate' : 'top-up') : 'trx', feePayerSpend: payerSpend.toString() }, 'tron sweep planned');
    return { deposits, skipped, transactions };
  },
};
