import { Cell } from '@ton/core';
import type { SeenTransfer } from '../source.ts';
import { tonAddresses } from './address.ts';
import { hex, raw } from './raw-address.ts';
import type { JettonWalletOwner } from './jetton-wallets.ts';
import { incomingOutcome } from './outcome.ts';
import type { TonTransaction } from './toncenter-v3.ts';

// What one transaction on a watched account means, from its incoming internal message.
//
// On a deposit (the owner):
// - any successful, non-bounced message with value credits its nanotons as native TON, whatever
//   its body: none, a text comment (op 0), a binary payload or an encrypted comment (any other op);
//   a failed or bounced one is recorded reverted, with the reason;
// - except the two messages that are about jettons, never a TON payment though the TON they carry
//   does stay: transfer_notification (op 0x7362d09c) and excesses (op 0xd53276db). Their TON is
//   recorded as native value, NOT_CREDITED with the reason (a failed one reverted, as above). A
//   notification from anyone but the deposit's own jetton wallet is a fake or another jetton's: the
//   jetton amount it claims is recorded too (token `unverified-jetton-wallet:<sender>`), never
//   credited; from the deposit's own wallet the jettons are credited from the wallet, below.
// - a bounced message (one the deposit sent, coming back) is not a payment: ignored.
// On a deposit's jetton wallet: a successful internal_transfer (op 0x178d4519) credits the jettons
// it carries, for the deposit; the standard wallet accepts it only from its master or another
// wallet of the same master.

export const OP_TRANSFER_NOTIFICATION = 0x7362d09c;
export const OP_INTERNAL_TRANSFER = 0x178d4519;
export const OP_EXCESSES = 0xd53276db;

const GENUINE_NOTIFICATION = 'TON attached to a jetton transfer notification (forward_ton_amount); not a payment';
const EXCESSES = 'TON returned as jetton excesses (the unspent fees of a jetton transfer); not a payment';

export interface Watched {
  /** Deposit (raw) -> as the watch set holds it. */
  owners: Map<string, string>;
  /** Jetton wallet (raw) -> its deposit and master. */
  wallets: Map<string, JettonWalletOwner>;
  /** The network's kind, for the form of `from` (what validateAddress('ton', …, testnet) returns). */
  testnet: boolean;
}

/** The jetton amount of an internal_transfer or transfer_notification body (op, query_id, amount). */
function jettonAmount(body: string | null | undefined, op: number): bigint | null {
  if (!body) return null;
  try {
    const s = Cell.fromBase64(body).beginParse();
    if (s.loadUint(32) !== op) return null;
    s.loadUintBig(64); // query_id
    return s.loadCoins();
  } catch {
    return null;
  }
}

export function readTransaction(tx: TonTransaction, watched: Watched, at: { number: bigint; time: number; hash: string }): SeenTransfer[] {
  const msg = tx.in_msg;
  if (!msg?.source) return []; // external messages carry no value in
  const account = raw(tx.account);
  // The sender in the canonical form (non-bounceable, url-safe), so the ledger can compare it with a plan's fee payer.
  const from = tonAddresses.validate(msg.source, watched.testnet, {});
  const base = { txHash: hex(tx.hash), blockNumber: at.number, blockHash: at.hash, blockTime: at.time, from };
  const outcome = incomingOutcome(tx);
  const failed = outcome.ok ? {} : { revertReason: outcome.reason };

  const owner = watched.owners.get(account);
  if (owner) {
    if (msg.bounced) return [];
    const value = msg.value ?? 0n;
    // The message's TON: credited unless the reader knows it is no payment (the ledger then records why).
    const ton = (notCreditedReason?: string): SeenTransfer[] =>
      value <= 0n ? [] : [{ ...base, logIndex: -1, to: owner, token: null, amount: value, kind: 'native', reverted: !outcome.ok, ...failed, ...(outcome.ok && notCreditedReason ? { notCreditedReason } : {}) }];
    if (msg.opcode === OP_TRANSFER_NOTIFICATION) {
      const sender = raw(msg.source);
      if (watched.wallets.get(sender)?.owner === owner) return ton(GENUINE_NOTIFICATION);
      const claimed = jettonAmount(msg.message_content?.body, OP_TRANSFER_NOTIFICATION) ?? 0n;
      const claim: SeenTransfer = {
        ...base,
        logIndex: -2,
        to: owner,
        token: `unverified-jetton-wallet:${sender}`,
        amount: claimed,
        kind: 'token',
        reverted: false,
        notCreditedReason: `a transfer_notification from ${sender}, not the deposit's jetton wallet, claims ${claimed} jetton units (forged, or another jetton); not a payment`,
      };
      return [claim, ...ton(`TON attached to a forged transfer_notification from ${sender} (not the deposit's jetton wallet: a fake, or another jetton's); not a payment`)];
    }
    if (msg.opcode === OP_EXCESSES) return ton(EXCESSES);
    return ton();
  }

  const wallet = watched.wallets.get(account);
  if (wallet && msg.opcode === OP_INTERNAL_TRANSFER) {
    const received = jettonAmount(msg.message_content?.body, OP_INTERNAL_TRANSFER);
    if (received === null) return [];
    const reason = outcome.ok ? {} : { revertReason: `jetton transfer failed on the deposit's jetton wallet (${outcome.reason})` };
    return [{ ...base, logIndex: -3, to: wallet.owner, token: wallet.master, amount: received, kind: 'token', reverted: !outcome.ok, ...reason }];
  }
  return [];
}
