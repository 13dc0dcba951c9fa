import { Address, internal } from '@ton/core';
import type { TokenRef } from '../../chains/registry.ts';
import type { FamilySweepPlanner, Holding, PlannedDeposit, SweepCandidate, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { UsageError } from '../../domain/errors.ts';
import { createJettonWallets } from './jetton-wallets.ts';
import { tonSweepApi, type AccountState } from './sweep-api.ts';
import { encodeMessage, JETTON_TRANSFER_VALUE, jettonTransferBody, MODE_CARRY_ALL, MODE_PAY_FEES_SEPARATELY, ORDER_FEE, type TonSweepPayload } from './sweep-messages.ts';
import { short } from './sweep-sign.ts';
import { CONCURRENCY, hold, PLAN_LIFETIME_S, raw, V4R2_CODE_HASH, validate } from './sweep-common.ts';
import { planTonRefund } from './sweep-refund.ts';
import { MAX_MESSAGES } from './wallet-v4.ts';
import { mapLimit } from '../map-limit.ts';

// The server half of a TON sweep: each deposit's account (balance, deployed or not, seqno) and
// jetton balances through toncenter v3, then one external message per deposit wallet v4r2: a
// TEP-74 transfer per jetton (to the deposit's own jetton wallet, computed by the master; jettons
// and excess to the destination), then the rest of its TON with mode 128. A deposit that was never
// deployed carries its state_init and is deployed by that message. Jetton gas comes from the
// deposit's own TON; a deposit without enough is topped up first by the fee payer (up to four
// deposits per fee-payer order), and its sweep waits for that top-up to be final. A refund (input
// `refund`) is sweep-refund.ts.

export { JETTON_TRANSFER_VALUE, ORDER_FEE, PLAN_LIFETIME_S };
/** forward_ton_amount: 1 nanoton, so the destination's wallet gets a transfer_notification and shows the payment. */
export const FORWARD_TON = 1n;

interface DepositWork {
  candidate: SweepCandidate;
  planned: PlannedDeposit;
  state: AccountState;
  seqno: number;
  /** The deployed wallet's public key (hex); undefined for a wallet its order deploys (the state_init carries it). */
  publicKey: string | undefined;
  jettons: { token: TokenRef & { address: string }; wallet: string; amount: bigint }[];
  topUp: bigint;
}

export const tonSweepPlanner: FamilySweepPlanner = {
  async plan({ network, config, log, candidates, to: toInput, feePayer: feePayerInput, min, refund }) {
    if (refund) return planTonRefund({ network, config, log, candidates, to: toInput, feePayer: feePayerInput, refund });
    const to = validate(toInput, network.testnet, '--to');
    const feePayer = feePayerInput === null ? null : validate(feePayerInput, network.testnet, '--fee-payer');
    const pool = new Set(candidates.map((c) => raw(c.address)));
    if (pool.has(raw(to))) throw new UsageError('the destination is one of the pool\'s deposit addresses: sweep to a cold wallet outside the pool');
    if (feePayer !== null && pool.has(raw(feePayer))) throw new UsageError('the fee payer is one of the pool\'s deposit addresses: use a wallet outside the pool');
    const native = network.native;
    const tokens = network.tokens.filter((t): t is TokenRef & { address: string } => t.address !== null);
    const api = tonSweepApi(network, config, log);
    const minFor = (symbol: string) => min[symbol] ?? 0n;

    const states = await mapLimit(candidates, CONCURRENCY, (c) => api.account(c.address));
    // Each deposit's jetton wallet as its master computes it (get_wallet_address), never taken from the index.
    const owners = new Map(candidates.map((c) => [raw(c.address), c.address]));
    const jettonWallets = await createJettonWallets(api.v3, tokens.map((t) => t.address), CONCURRENCY).resolve(owners);
    const balances = await api.jettonBalances([...jettonWallets.keys()]);

    const work: DepositWork[] = [];
    const skipped: SweepPlan['skipped'] = [];
    for (const [i, candidate] of candidates.entries()) {
      const state = states[i]!;
      const ownerRaw = raw(candidate.address);
      const holdings: Holding[] = [];
      const leftBehind: PlannedDeposit['leftBehind'] = [];
      const jettons: DepositWork['jettons'] = [];
      for (const [wallet, { owner, master }] of jettonWallets) {
        if (raw(owner) !== ownerRaw) continue;
        const token = tokens.find((t) => raw(t.address) === raw(master))!;
        const live = balances.get(wallet);
        if (!live || live.balance === 0n) continue;
        if (live.owner !== ownerRaw || live.master !== raw(master)) throw new UsageError(`toncenter says jetton wallet ${short(wallet)} belongs to ${short(live.owner)} (${short(live.master)}), not to deposit ${short(candidate.address)}: refusing to plan on it`);
        const holding = hold(token.symbol, token.address, token.decimals, live.balance);
        holdings.push(holding);
        if (live.balance < minFor(token.symbol)) leftBehind.push({ holding, reason: `below --min ${minFor(token.symbol)} ${token.symbol}` });
        else jettons.push({ token, wallet, amount: live.balance });
      }
      const ton = hold(native.symbol, null, native.decimals, state.balance);
      if (state.balance > 0n) holdings.push(ton);
      const unusable = state.status === 'frozen' ? 'the account is frozen (storage debt): unfreeze it first' : state.status === 'active' && state.codeHash !== V4R2_CODE_HASH ? 'the account is deployed with other code than wallet v4r2: not a deposit this seed made' : null;
      if (unusable !== null) {
        skipped.push({ address: candidate.address, reason: holdings.length ? unusable : 'holds nothing' });
        continue;
      }
      const gas = ORDER_FEE + JETTON_TRANSFER_VALUE * BigInt(jettons.length);
      let topUp = 0n;
      const moves: Holding[] = jettons.map((j) => hold(j.token.symbol, j.token.address, j.token.decimals, j.amount));
      if (jettons.length > 0 && state.balance < gas) {
        if (feePayer === null) {
          for (const j of jettons.splice(0)) leftBehind.push({ holding: hold(j.token.symbol, j.token.address, j.token.decimals, j.amount), reason: `its transfer needs ${gas - ORDER_FEE} nanoton of gas and the order ${ORDER_FEE}; the deposit holds ${state.balance}: name a --fee-payer to top it up` });
          moves.length = 0;
        } else topUp = gas - state.balance;
      }
      const sweepsTon = state.balance - (jettons.length > 0 ? gas : ORDER_FEE);
      if (jettons.length === 0) {
        if (state.balance === 0n) {
          skipped.push({ address: candidate.address, reason: leftBehind.length ? [...new Set(leftBehind.map((l) => l.reason))].join('; ') : 'holds nothing' });
          continue;
        }
        if (state.balance <= ORDER_FEE) leftBehind.push({ holding: ton, reason: `less than the fee of sending it (${ORDER_FEE} nanoton)` });
        else if (state.balance < minFor(native.symbol)) leftBehind.push({ holding: ton, reason: `below --min ${minFor(native.symbol)} ${native.symbol}` });
        if (leftBehind.some((l) => l.holding === ton)) {
          skipped.push({ address: candidate.address, reason: [...new Set(leftBehind.map((l) => l.reason))].join('; ') });
          continue;
        }
      }
      // TON: what stays after the gas moves (at least; the jetton excess comes back to the destination too).
      if (sweepsTon > 0n) moves.push(hold(native.symbol, null, native.decimals, sweepsTon));
      const seqno = state.status === 'active' ? await api.seqno(candidate.address) : 0;
      const publicKey = state.status === 'active' ? await api.publicKey(candidate.address) : undefined;
      // The fee is what the deposit's order can cost (its order and the TON attached to its jetton transfers), whoever funds it.
      work.push({ candidate, state, seqno, publicKey, jettons, topUp, planned: { ...candidate, holdings, moves, fee: (jettons.length > 0 ? gas : ORDER_FEE).toString(), leftBehind } });
    }
    if (work.length === 0) return { deposits: [], skipped, transactions: [] };

    const validUntil = Math.floor(Date.now() / 1000) + PLAN_LIFETIME_S;
    const dest = Address.parse(to);
    const transactions: UnsignedSweepTx[] = [];
    const needTopUp = work.filter((w) => w.topUp > 0n);
    const topUpTx = new Map<DepositWork, string>();
    if (needTopUp.length > 0 && feePayer !== null) {
      const payer = await api.account(feePayer);
      if (payer.status === 'frozen' || (payer.status === 'active' && payer.codeHash !== V4R2_CODE_HASH)) throw new UsageError(`the fee payer ${short(feePayer)} must be a wallet v4r2 of the sweep seed (m/44'/607'/i'); it is ${payer.status === 'frozen' ? 'frozen' : 'another contract'}`);
      const orders = Math.ceil(needTopUp.length / MAX_MESSAGES);
      const needed = needTopUp.reduce((s, w) => s + w.topUp, 0n) + ORDER_FEE * BigInt(orders);
      if (payer.balance < needed) throw new UsageError(`the fee payer ${short(feePayer)} holds ${payer.balance} nanoton; the top-ups need ${needed} (${needTopUp.length} deposit${needTopUp.length === 1 ? '' : 's'} and ${orders} order fee${orders === 1 ? '' : 's'}): fund it first`);
      let seqno = payer.status === 'active' ? await api.seqno(feePayer) : 0;
      const publicKey = payer.status === 'active' ? await api.publicKey(feePayer) : undefined;
      let payerBalance = payer.balance;
      for (let k = 0; k < orders; k++) {
        const batch = needTopUp.slice(k * MAX_MESSAGES, (k + 1) * MAX_MESSAGES);
        const id = `tx-${transactions.length}`;
        // Not bounceable: a deposit that was never deployed keeps the TON instead of bouncing it.
        const messages = batch.map((w) => ({ mode: MODE_PAY_FEES_SEPARATELY, message: encodeMessage(internal({ to: Address.parse(w.candidate.address), value: w.topUp, bounce: false })) }));
        const payload: TonSweepPayload = { wallet: feePayer, seqno, validUntil, deploy: payer.status !== 'active', ...(publicKey ? { publicKey } : {}), balance: payerBalance.toString(), messages };
        transactions.push({ id, signers: [feePayer], deposits: [], after: k > 0 ? [`tx-${transactions.length - 1}`] : [], payload });
        for (const w of batch) topUpTx.set(w, id);
        // The fee payer's order fee is stated on the first deposit it tops up (Σ deposits' fees = Σ orders' fees).
        batch[0]!.planned.fee = (BigInt(batch[0]!.planned.fee) + ORDER_FEE).toString();
        payerBalance -= batch.reduce((s, w) => s + w.topUp, 0n) + ORDER_FEE;
        seqno++;
      }
    }
    for (const w of work) {
      const messages: TonSweepPayload['messages'] = w.jettons.map((j, n) => ({
        mode: MODE_PAY_FEES_SEPARATELY,
        jetton: j.token.address,
        message: encodeMessage(
          internal({
            to: Address.parse(j.wallet),
            value: JETTON_TRANSFER_VALUE,
            bounce: true,
            body: jettonTransferBody({ queryId: BigInt(validUntil) * 16n + BigInt(n), amount: j.amount, destination: dest, responseDestination: dest, forwardTonAmount: FORWARD_TON }),
          }),
        ),
      }));
      if (messages.length >= MAX_MESSAGES) throw new UsageError(`deposit ${short(w.candidate.address)} holds ${messages.length} jettons; one wallet v4r2 order sends at most ${MAX_MESSAGES - 1} beside its TON`);
      // Everything left, to the destination; not bounceable, so a cold wallet that was never deployed receives it too.
      messages.push({ mode: MODE_CARRY_ALL, message: encodeMessage(internal({ to: dest, value: 0n, bounce: false })) });
      const payload: TonSweepPayload = { wallet: w.candidate.address, seqno: w.seqno, validUntil, deploy: w.state.status !== 'active', ...(w.publicKey ? { publicKey: w.publicKey } : {}), balance: (w.state.balance + w.topUp).toString(), messages };
      const after = topUpTx.get(w);
      transactions.push({ id: `tx-${transactions.length}`, signers: [w.candidate.address], deposits: [w.candidate.address], after: after ? [after] : [], payload });
    }
    log.info({ chain: network.chain, deposits: work.length, transactions: transactions.length, topUps: needTopUp.length }, 'ton sweep planned');
    return { deposits: work.map((w) => w.planned), skipped, transactions };
  },
};
