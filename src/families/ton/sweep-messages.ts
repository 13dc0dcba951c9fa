import { type Address, beginCell, Cell, loadMessage, loadMessageRelaxed, storeMessage, storeMessageRelaxed, toNano, type Message, type MessageRelaxed } from '@ton/core';
import { z } from 'zod';
import { UsageError } from '../../domain/errors.ts';
import { SUBWALLET_ID } from './wallet-v4.ts';

// What a TON sweep plan carries and how its bytes are read back: the wallet v4r2 order (subwallet
// id, valid_until, seqno, op 0, then up to four send modes and internal messages) and the TEP-74
// jetton transfer body. The planner writes these, the offline signer decodes every message it is
// about to sign, and the sender reads valid_until back from the signed external message.

/** TEP-74 `transfer` (https://github.com/ton-blockchain/TEPs/blob/master/text/0074-jettons-standard.md). */
export const OP_JETTON_TRANSFER = 0x0f8a7ea5;
/** Send mode 128: carry all the remaining balance of the account (after the earlier messages of the same order). */
export const MODE_CARRY_ALL = 128;
/** Send mode 1: the wallet pays the forwarding fees on top of the value, so the value arrives whole. */
export const MODE_PAY_FEES_SEPARATELY = 1;

/** An address shortened for messages: enough to find it in the plan. */
export const short = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`;

/** TON attached to each jetton transfer; what the jetton wallets do not burn comes back to its response_destination. */
export const JETTON_TRANSFER_VALUE = toNano('0.05');
/**
 * What one wallet v4r2 order costs its sender at most, deploy included (import, gas, forwarding
 * of up to four messages): measured 0.0051 TON (deploy + TON) and 0.0061 TON (deploy + jetton transfer + TON) on @ton/sandbox's mainnet config (docs/sweeps/ton.md), kept with a margin.
 */
export const ORDER_FEE = toNano('0.01');

const base64 = z.string().regex(/^[A-Za-z0-9+/]+=*$/, 'base64');

/** UnsignedSweepTx.payload of a TON plan: one external message to one wallet v4r2. */
export const TonSweepPayloadSchema = z.strictObject({
  /** The wallet that signs and sends (a deposit, or the fee payer), as the plan names it. */
  wallet: z.string(),
  /** The wallet's seqno when planned; 0 for a wallet not deployed yet. */
  seqno: z.number().int().nonnegative().max(0xffff_ffff),
  /** Unix time after which the wallet refuses the message (its valid_until): `sweep broadcast` says "plan again" then. */
  validUntil: z.number().int().positive().max(0xffff_ffff),
  /** Whether the external message carries the wallet's state_init (the wallet is not deployed yet). */
  deploy: z.boolean(),
  /**
   * The wallet's ed25519 public key (hex), read from the deployed wallet at plan time (get_public_key):
   * a message to a deployed wallet carries no state_init, so the verifier takes the key from here and
   * checks that it derives the wallet's address. Absent for a wallet not deployed (the state_init has it).
   */
  publicKey: z.string().regex(/^[0-9a-f]{64}$/, '64 hex digits').optional(),
  /** The wallet's balance when its order runs as planned (nanoton: its balance at plan time plus the plan's top-ups): what a mode-128 message carries is this less the order's cost. */
  balance: z.string().regex(/^\d+$/, 'nanoton, decimal'),
  /** The internal messages in order, each with its send mode; the message is a MessageRelaxed cell, BOC base64. */
  messages: z
    .array(
      z.strictObject({
        mode: z.number().int().min(0).max(255),
        message: base64,
        /** For a jetton transfer: the jetton master whose coins it moves, so the signer can total them per token against the summary. */
        jetton: z.string().optional(),
      }),
    )
    .min(1)
    .max(4),
});
export type TonSweepPayload = z.infer<typeof TonSweepPayloadSchema>;

export interface JettonTransfer {
  queryId: bigint;
  amount: bigint;
  destination: Address;
  responseDestination: Address | null;
  forwardTonAmount: bigint;
}

export function jettonTransferBody(t: JettonTransfer): Cell {
  return beginCell()
    .storeUint(OP_JETTON_TRANSFER, 32)
    .storeUint(t.queryId, 64)
    .storeCoins(t.amount)
    .storeAddress(t.destination)
    .storeAddress(t.responseDestination)
    .storeBit(0) // no custom_payload
    .storeCoins(t.forwardTonAmount)
    .storeBit(0) // forward_payload inline: empty
    .endCell();
}

/** A TEP-74 transfer body, every field; throws on anything else (another op, trailing data, a custom payload). */
export function readJettonTransfer(body: Cell, at: string): JettonTransfer {
  try {
    const s = body.beginParse();
    if (s.loadUint(32) !== OP_JETTON_TRANSFER) throw new Error('not a jetton transfer (op 0x0f8a7ea5)');
    const queryId = s.loadUintBig(64);
    const amount = s.loadCoins();
    const destination = s.loadAddress();
    const responseDestination = s.loadMaybeAddress();
    if (s.loadBit()) throw new Error('it carries a custom payload');
    const forwardTonAmount = s.loadCoins();
    const inRef = s.loadBit();
    if (inRef || s.remainingBits > 0 || s.remainingRefs > 0) throw new Error('it carries a forward payload');
    return { queryId, amount, destination, responseDestination, forwardTonAmount };
  } catch (err) {
    throw new UsageError(`${at}: the jetton transfer does not read as the plan's (${(err as Error).message}): refused`);
  }
}

export const encodeMessage = (m: MessageRelaxed): string => beginCell().store(storeMessageRelaxed(m)).endCell().toBoc().toString('base64');

export function decodeMessage(b64: string, at: string): MessageRelaxed {
  try {
    const m = loadMessageRelaxed(Cell.fromBase64(b64).beginParse());
    if (m.info.type !== 'internal') throw new Error('not an internal message');
    return m;
  } catch (err) {
    throw new UsageError(`${at}: a message of the plan does not decode (${(err as Error).message}): refused`);
  }
}

/** The cell the wallet's key signs: subwallet, valid_until, seqno, op 0 (simple send), then mode + message per message. */
export function walletOrder(payload: TonSweepPayload): Cell {
  const b = beginCell().storeUint(SUBWALLET_ID, 32).storeUint(payload.validUntil, 32).storeUint(payload.seqno, 32).storeUint(0, 8);
  for (const m of payload.messages) b.storeUint(m.mode, 8).storeRef(Cell.fromBase64(m.message));
  return b.endCell();
}

/**
 * The normalised hash of an external-in message (TEP-467; docs.ton.org "message lookup"): the
 * message with src addr_none, import_fee 0, no state_init and the body as a reference. It is what
 * toncenter returns as message_hash_norm and finds transactions by, whatever form a relay gave the
 * message: the txid of a TON sweep transaction (docs/sweeps/ton.md#the-txid).
 */
export function normalizedHash(message: Message): Buffer {
  if (message.info.type !== 'external-in') throw new Error(`not an external-in message (${message.info.type})`);
  const normal: Message = { info: { type: 'external-in', src: null, dest: message.info.dest, importFee: 0n }, init: null, body: message.body };
  return beginCell().store(storeMessage(normal, { forceRef: true })).endCell().hash();
}

/** What the sender needs from a signed message: where it goes, its valid_until and seqno, its normalised hash (the txid, hex). */
export function readSignedExternal(raw: string): { wallet: Address; validUntil: number; seqno: number; hash: string } {
  const cell = Cell.fromBase64(raw);
  const m = loadMessage(cell.beginParse());
  if (m.info.type !== 'external-in') throw new Error('not an external message');
  const body = m.body.beginParse();
  body.skip(512); // the signature
  if (body.loadUint(32) !== SUBWALLET_ID) throw new Error('not a wallet v4 order of the default subwallet');
  const validUntil = body.loadUint(32);
  const seqno = body.loadUint(32);
  return { wallet: m.info.dest, validUntil, seqno, hash: normalizedHash(m).toString('hex') };
}
