import { Address } from '@ton/core';
import type { SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { UsageError } from '../../domain/errors.ts';
import { decodeMessage, JETTON_TRANSFER_VALUE, MODE_CARRY_ALL, MODE_PAY_FEES_SEPARATELY, ORDER_FEE, readJettonTransfer, short, type TonSweepPayload } from './sweep-messages.ts';
import { parseTonAddress } from './wallet-v4.ts';

// The offline signer's checks for a TON refund plan (pure, like sweep-sign.ts): the address's one
// order holds one message, sent with mode 1 (never 128, which would carry the whole balance), that
// gives the buyer exactly the summary's amount: TON with no body, or a TEP-74 transfer of the refund
// to the buyer with no forward TON and the excess back to the address. A fee payer's order may only
// top the address up, by no more than the order's planned gas.

const rawOf = (a: string) => Address.parse(a).toRawString();

export function checkRefund(plan: SweepPlan, txs: readonly { tx: UnsignedSweepTx; payload: TonSweepPayload }[]): void {
  const refund = plan.refund;
  const [deposit, ...more] = plan.deposits;
  if (!refund || !deposit || more.length > 0) throw new UsageError('a refund plan names its refund and exactly one address: refused');
  const [move, ...extra] = deposit.moves;
  const sameCoin = move !== undefined && (move.token === null || refund.token === null ? move.token === refund.token : rawOf(move.token) === rawOf(refund.token));
  if (!move || extra.length > 0 || !sameCoin) throw new UsageError(`the refund's summary moves other coins than its ${refund.symbol}: refused`);
  const to = parseTonAddress(plan.to, 'the plan\'s destination');
  const from = rawOf(deposit.address);
  const shown = BigInt(move.amount);
  const asked = BigInt(refund.amount);
  const cap = ORDER_FEE + (refund.token === null ? 0n : JETTON_TRANSFER_VALUE);
  let orders = 0;
  for (const { tx, payload } of txs) {
    const at = `plan ${tx.id}`;
    if (tx.signers.length !== 1 || tx.signers[0] !== payload.wallet) throw new UsageError(`${at}: a TON order is signed by the one wallet that sends it (${short(payload.wallet)})`);
    const messages = payload.messages.map((item, i) => {
      const msg = decodeMessage(item.message, `${at} message ${i}`);
      if (msg.info.type !== 'internal') throw new UsageError(`${at} message ${i}: not an internal message`);
      if (item.mode === MODE_CARRY_ALL) throw new UsageError(`${at} message ${i}: a refund never sends with mode 128 (the whole balance): refused`);
      if (item.mode !== MODE_PAY_FEES_SEPARATELY || msg.init) throw new UsageError(`${at} message ${i}: a refund's message is sent with mode 1 and deploys nothing: refused`);
      return { item, msg, info: msg.info, at: `${at} message ${i}` };
    });
    const wallet = rawOf(payload.wallet);
    if (wallet === from) {
      orders++;
      const [only, ...others] = messages;
      if (!only || others.length > 0 || tx.deposits.length !== 1 || rawOf(tx.deposits[0]!) !== from) throw new UsageError(`${at}: a refund's order holds exactly one message: refused`);
      const { item, msg, info } = only;
      if (refund.token === null) {
        if (item.jetton !== undefined || msg.body.bits.length > 0 || msg.body.refs.length > 0) throw new UsageError(`${only.at}: a TON refund is a plain transfer (no body): refused`);
        if (!info.dest.equals(to)) throw new UsageError(`${only.at}: the TON goes to ${short(info.dest.toString())}, not to the plan's destination ${short(plan.to)}: refused`);
        if (info.value.coins !== shown) throw new UsageError(`${only.at}: the order sends ${info.value.coins} nanoton, the summary shows ${shown}: refused`);
        if (shown !== asked && shown !== asked - BigInt(deposit.fee)) throw new UsageError(`the refund is ${asked} nanoton, the summary sends ${shown} with a fee of ${deposit.fee}: refused`);
      } else {
        if (item.jetton === undefined || rawOf(item.jetton) !== rawOf(refund.token)) throw new UsageError(`${only.at}: does not move the refund's jetton ${short(refund.token)}: refused`);
        const transfer = readJettonTransfer(msg.body, only.at);
        if (!transfer.destination.equals(to)) throw new UsageError(`${only.at}: the jettons go to ${short(transfer.destination.toString())}, not to the plan's destination ${short(plan.to)}: refused`);
        if (transfer.responseDestination?.toRawString() !== from) throw new UsageError(`${only.at}: the excess TON goes elsewhere than back to the address: refused`);
        if (transfer.forwardTonAmount !== 0n) throw new UsageError(`${only.at}: forwards TON to the buyer beside the jettons: refused`);
        if (info.value.coins > JETTON_TRANSFER_VALUE) throw new UsageError(`${only.at}: attaches ${info.value.coins} nanoton, more than a transfer's ${JETTON_TRANSFER_VALUE}: refused`);
        if (transfer.amount !== shown || shown !== asked) throw new UsageError(`${only.at}: the order moves ${transfer.amount} of jetton ${short(refund.token)}, the summary shows ${shown} and the refund is ${asked}: refused`);
      }
    } else if (plan.feePayer !== null && wallet === rawOf(plan.feePayer)) {
      if (tx.deposits.length !== 0) throw new UsageError(`${at}: the fee payer's order empties no address`);
      let sent = 0n;
      for (const { item, msg, info, at: where } of messages) {
        if (info.dest.toRawString() !== from) throw new UsageError(`${where}: the fee payer pays ${short(info.dest.toString())}, which is not the refund's address: refused`);
        if (msg.body.bits.length > 0 || msg.body.refs.length > 0 || item.jetton !== undefined) throw new UsageError(`${where}: a gas top-up is a plain transfer (mode 1, no body): refused`);
        sent += info.value.coins;
      }
      if (sent > cap) throw new UsageError(`${at}: the fee payer sends the address ${sent} nanoton, more than the refund's gas ${cap}: refused`);
    } else {
      throw new UsageError(`${at}: ${short(payload.wallet)} is neither the refund's address nor its fee payer: refused`);
    }
  }
  if (orders !== 1) throw new UsageError(`a refund plan holds exactly one order of its address; this one has ${orders}: refused`);
}
