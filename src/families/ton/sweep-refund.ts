import { Address, internal } from '@ton/core';
import type { Holding, PlannedDeposit, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { UsageError } from '../../domain/errors.ts';
import { refundCandidate, type RefundInput } from '../sweep-refund.ts';
import { createJettonWallets } from './jetton-wallets.ts';
import { tonSweepApi } from './sweep-api.ts';
import { encodeMessage, JETTON_TRANSFER_VALUE, jettonTransferBody, MODE_PAY_FEES_SEPARATELY, ORDER_FEE, type TonSweepPayload } from './sweep-messages.ts';
import { short } from './sweep-sign.ts';
import { CONCURRENCY, hold, PLAN_LIFETIME_S, raw, V4R2_CODE_HASH, validate } from './sweep-common.ts';

// A TON refund (RefundAsk in ../sweep.ts): one wallet v4r2 order from the one address with one
// internal message, sent with mode 1 and never mode 128 (which would carry whatever else arrived):
// TON to the buyer, not bounceable, or a TEP-74 transfer of the amount to the address's own jetton
// wallet with the buyer as destination, no forward TON, and the excess gas back to the address.
// With a fee payer, its order first tops the address up by the order's planned gas, so the address
// pays nothing of its own (the planned deposit's `fee` still states both orders' fees, as the
// verifier reads them from the bytes); else the address pays its gas, and for a TON refund the fee comes out of
// what stays when that covers it, else out of the refund.

const NOT_REFUNDED = 'not refunded: it stays on the address for the next sweep';

export async function planTonRefund({ network, config, log, candidates, to: toInput, feePayer: feePayerInput, refund }: RefundInput): Promise<Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>> {
  const to = validate(toInput, network.testnet, '--to');
  const feePayer = feePayerInput === null ? null : validate(feePayerInput, network.testnet, '--fee-payer');
  const candidate = refundCandidate(candidates, refund);
  const owner = candidate.address;
  if (raw(owner) === raw(to)) throw new UsageError('the buyer\'s address is the address the refund is made from');
  if (feePayer !== null && raw(feePayer) === raw(owner)) throw new UsageError('the fee payer is the address the refund is made from: leave --fee-payer out and that address pays its own gas');
  if (feePayer !== null && raw(feePayer) === raw(to)) throw new UsageError('the fee payer is the buyer\'s address: name a wallet of yours');
  const native = network.native;
  const api = tonSweepApi(network, config, log);

  const state = await api.account(owner);
  if (state.status === 'frozen') throw new UsageError(`${short(owner)} is frozen (storage debt): unfreeze it first`);
  if (state.status === 'active' && state.codeHash !== V4R2_CODE_HASH) throw new UsageError(`${short(owner)} is deployed with other code than wallet v4r2: not an address this seed's wallets sign for`);
  // Every registry jetton's wallet of the address (for what stays), and the refunded one's even outside the registry.
  const masters = [...new Set([...network.tokens.flatMap((t) => (t.address ? [t.address] : [])), ...(refund.token ? [refund.token] : [])].map(raw))];
  const jettonWallets = await createJettonWallets(api.v3, masters, CONCURRENCY).resolve(new Map([[raw(owner), owner]]));
  const live = await api.jettonBalances([...jettonWallets.keys()]);
  const jettons: { master: string; wallet: string; holding: Holding }[] = [];
  for (const [wallet, { master }] of jettonWallets) {
    const j = live.get(wallet);
    if (!j || j.balance === 0n) continue;
    if (j.owner !== raw(owner) || j.master !== raw(master)) throw new UsageError(`toncenter says jetton wallet ${short(wallet)} belongs to ${short(j.owner)} (${short(j.master)}), not to ${short(owner)}: refusing to plan on it`);
    const token = network.tokens.find((t) => t.address !== null && raw(t.address) === raw(master));
    const refunded = refund.token !== null && raw(refund.token) === raw(master);
    const symbol = token?.symbol ?? (refunded ? refund.symbol : 'unknown');
    jettons.push({ master, wallet, holding: hold(symbol, token?.address ?? (refunded ? refund.token : master), token?.decimals ?? refund.decimals, j.balance) });
  }
  const holdings = [...jettons.map((j) => j.holding), ...(state.balance > 0n ? [hold(native.symbol, null, native.decimals, state.balance)] : [])];
  const validUntil = Math.floor(Date.now() / 1000) + PLAN_LIFETIME_S;
  const buyer = Address.parse(to);
  const what = `${refund.symbol} (atomic)`;

  let message: TonSweepPayload['messages'][number];
  let gas: bigint; // what the order spends at most: the top-up, or the address's fee
  let moves: Holding[];
  let tonOut = 0n;
  const leftBehind: PlannedDeposit['leftBehind'] = [];
  if (refund.token === null) {
    if (state.balance < refund.amount) throw new UsageError(`${short(owner)} holds ${state.balance} ${what}, less than the refund of ${refund.amount}`);
    gas = ORDER_FEE;
    tonOut = refund.amount;
    if (feePayer === null && state.balance - refund.amount < ORDER_FEE) {
      // What stays cannot carry the order's fee: it comes out of the refund.
      if (refund.amount <= ORDER_FEE) throw new UsageError(`${short(owner)} holds ${state.balance} nanoton: a refund of ${refund.amount} leaves too little for the order's fee of ${ORDER_FEE}, and is itself smaller: pass --fee-payer <a wallet of yours>`);
      tonOut = refund.amount - ORDER_FEE;
    }
    message = { mode: MODE_PAY_FEES_SEPARATELY, message: encodeMessage(internal({ to: buyer, value: tonOut, bounce: false })) };
    moves = [hold(native.symbol, null, native.decimals, tonOut)];
  } else {
    const mine = jettons.find((j) => raw(j.master) === raw(refund.token!));
    const balance = mine ? BigInt(mine.holding.amount) : 0n;
    if (!mine || balance < refund.amount) throw new UsageError(`${short(owner)} holds ${balance} ${what}, less than the refund of ${refund.amount}`);
    gas = ORDER_FEE + JETTON_TRANSFER_VALUE;
    if (feePayer === null && state.balance < gas) {
      throw new UsageError(`${short(owner)} holds ${state.balance} nanoton, less than the ${gas} a jetton transfer's order needs (${JETTON_TRANSFER_VALUE} attached, ${ORDER_FEE} for the order): pass --fee-payer <a wallet of yours> to top it up`);
    }
    const body = jettonTransferBody({ queryId: BigInt(validUntil) * 16n, amount: refund.amount, destination: buyer, responseDestination: Address.parse(owner), forwardTonAmount: 0n });
    message = { mode: MODE_PAY_FEES_SEPARATELY, jetton: refund.token, message: encodeMessage(internal({ to: Address.parse(mine.wallet), value: JETTON_TRANSFER_VALUE, bounce: true, body })) };
    moves = [hold(refund.symbol, refund.token, refund.decimals, refund.amount)];
    if (balance > refund.amount) leftBehind.push({ holding: hold(refund.symbol, refund.token, refund.decimals, balance - refund.amount), reason: `not refunded: the rest of the ${refund.symbol} stays on the address` });
  }
  for (const j of jettons) if (refund.token === null || raw(j.master) !== raw(refund.token)) leftBehind.push({ holding: j.holding, reason: NOT_REFUNDED });
  const ownFee = feePayer === null ? gas : 0n;
  // The plan states every fee its orders can cost, whoever pays: the fee payer's top-up order too.
  const fee = feePayer === null ? gas : gas + ORDER_FEE;
  // What the order's gas does not use (and the jetton transfer's excess) comes back and stays too.
  const tonStays = state.balance - tonOut - ownFee;
  if (tonStays > 0n) leftBehind.push({ holding: hold(native.symbol, null, native.decimals, tonStays), reason: `${NOT_REFUNDED}, with what the order's gas does not use` });

  const transactions: UnsignedSweepTx[] = [];
  if (feePayer !== null) {
    const payer = await api.account(feePayer);
    if (payer.status === 'frozen' || (payer.status === 'active' && payer.codeHash !== V4R2_CODE_HASH)) throw new UsageError(`the fee payer ${short(feePayer)} must be a wallet v4r2 of the seed (m/44'/607'/i'); it is ${payer.status === 'frozen' ? 'frozen' : 'another contract'}`);
    if (payer.balance < gas + ORDER_FEE) throw new UsageError(`the fee payer ${short(feePayer)} holds ${payer.balance} nanoton; the refund's top-up needs ${gas + ORDER_FEE} (${gas} and its own order's fee ${ORDER_FEE}): fund it first`);
    // Not bounceable: an address never deployed keeps the TON instead of bouncing it.
    const topUp = { mode: MODE_PAY_FEES_SEPARATELY, message: encodeMessage(internal({ to: Address.parse(owner), value: gas, bounce: false })) };
    const payerActive = payer.status === 'active';
    const payload: TonSweepPayload = {
      wallet: feePayer,
      seqno: payerActive ? await api.seqno(feePayer) : 0,
      validUntil,
      deploy: !payerActive,
      ...(payerActive ? { publicKey: await api.publicKey(feePayer) } : {}),
      balance: payer.balance.toString(),
      messages: [topUp],
    };
    transactions.push({ id: 'tx-0', signers: [feePayer], deposits: [], after: [], payload });
  }
  const active = state.status === 'active';
  const payload: TonSweepPayload = {
    wallet: owner,
    seqno: active ? await api.seqno(owner) : 0,
    validUntil,
    deploy: !active,
    ...(active ? { publicKey: await api.publicKey(owner) } : {}),
    balance: (state.balance + (feePayer === null ? 0n : gas)).toString(),
    messages: [message],
  };
  transactions.push({ id: `tx-${transactions.length}`, signers: [owner], deposits: [owner], after: transactions.map((t) => t.id), payload });
  log.info({ chain: network.chain, symbol: refund.symbol, topUp: feePayer !== null }, 'ton refund planned');
  return { deposits: [{ ...candidate, holdings, moves, fee: fee.toString(), leftBehind }], skipped: [], transactions };
}
