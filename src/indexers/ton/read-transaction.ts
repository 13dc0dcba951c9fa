import { Cell } from '@ton/core';
import type { SeenTransfer } from '../source.ts';
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
// - except the two messages that are about jettons, never a TON payment, recorded NOT_CREDITED:
//   transfer_notification (op 0x7362d09c) and excesses (op 0xd53276db). A notification from anyone
//   but the deposit's own jetton wallet is a fake (token `unverified-jetton-wallet:<sender>`, the
//   jetton amount it claims); from its own wallet only the TON it carries is recorded (token
//   `nanoton:transfer_notification`) — the jetton receipt on the wallet is the credit. Excesses:
//   token `nanoton:excesses`.
// - a bounced message (one the deposit sent, coming back) is not a payment: ignored.
// On a deposit's jetton wallet: a successful internal_transfer (op 0x178d4519) credits the jettons
// it carries, for the deposit; the standard wallet accepts it only from its master or another
// wallet of the same master.

export const OP_TRANSFER_NOTIFICATION = 0x7362d09c;
export const OP_INTERNAL_TRANSFER = 0x178d4519;
export const OP_EXCESSES = 0xd53276db;

export interface Watched {
  /** Deposit (raw) -> as the watch set holds it. */
  owners: Map<string, string>;
  /** Jetton wallet (raw) -> its deposit and master. */
  wallets: Map<string, JettonWalletOwner>;
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
  const base = { txHash: hex(tx.hash), blockNumber: at.number, blockHash: at.hash, blockTime: at.time, from: msg.source };
  const outcome = incomingOutcome(tx);
  const failed = outcome.ok ? {} : { revertReason: outcome.reason };

  const owner = watched.owners.get(account);
  if (owner) {
    if (msg.bounced) return [];
    const value = msg.value ?? 0n;
    if (msg.opcode === OP_TRANSFER_NOTIFICATION) {
      const sender = raw(msg.source);
      if (watched.wallets.get(sender)?.owner === owner) {
        // The deposit's own wallet: the receipt there is the credit; the TON it carries is not.
        if (value <= 0n || !outcome.ok) return [];
        return [{ ...base, logIndex: -2, to: owner, token: 'nanoton:transfer_notification', amount: value, kind: 'native', reverted: false }];
      }
      const claimed = jettonAmount(msg.message_content?.body, OP_TRANSFER_NOTIFICATION) ?? 0n;
      return [{ ...base, logIndex: -2, to: owner, token: `unverified-jetton-wallet:${sender}`, amount: claimed, kind: 'token', reverted: false }];
    }
    if (value <= 0n) return [];
    if (msg.opcode === OP_EXCESSES) {
      if (!outcome.ok) return [];
      return [{ ...base, logIndex: -1, to: owner, token: 'nanoton:excesses', amount: value, kind: 'native', reverted: false }];
    }
    return [{ ...base, logIndex: -1, to: owner, token: null, amount: value, kind: 'native', reverted: !outcome.ok, ...failed }];
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
