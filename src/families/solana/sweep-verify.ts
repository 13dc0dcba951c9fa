import { createPublicKey, verify } from 'node:crypto';
import { getTransactionDecoder, getTransactionEncoder } from '@solana/kit';
import { CHAIN_DEFAULTS } from '../../chains/chain-defaults.ts';
import { UsageError } from '../../domain/errors.ts';
import { decodeBase58, encodeBase58 } from '../base58check.ts';
import type { DecodedPay, DecodedSignedTx, DecodedSweepTx, FamilySweepVerifier, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { messageFee } from './sweep-fee.ts';
import { associatedTokenAddress, readSweepMessage, type SweepMessage } from './sweep-message.ts';
import { SolanaSweepPayloadSchema, short, type SolanaSweepPayload } from './sweep-sign.ts';

// What a Solana sweep or refund transaction does, read from its legacy message bytes with
// @solana/kit (sweep-message.ts), never from the plan's summary: the signer shows this and
// src/sweep/check-decoded.ts compares it with the plan, before signing and again at broadcast on
// the signed bytes. Pure and offline (docs/sweeps/solana.md#what-the-verifier-reads).
//
// Every instruction must be one the planners make (System Transfer, SPL Token / Token-2022
// transferChecked and closeAccount, CreateIdempotent of the destination's associated token
// account) or a compute-budget limit or price, which only raise the fee; anything else is refused.
// A token transfer pays the owner whose associated token account it credits; closeAccount pays
// its destination the closed account's lamports, which the bytes do not state (they are the
// account's balance when the transaction runs), so the payload carries the balance the planner
// read: whatever it says, the lamports go to the destination in the bytes.

const b64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function base64Bytes(text: string, what: string): Uint8Array {
  if (text.length === 0 || !b64.test(text)) throw new UsageError(`${what} is not base64`);
  return new Uint8Array(Buffer.from(text, 'base64'));
}

function payloadOf(tx: UnsignedSweepTx): SolanaSweepPayload & { bytes: Uint8Array } {
  const parsed = SolanaSweepPayloadSchema.safeParse(tx.payload);
  if (!parsed.success) throw new UsageError(`${tx.id}: not a Solana sweep payload (${parsed.error.issues[0]?.message ?? 'unexpected shape'})`);
  return { ...parsed.data, bytes: base64Bytes(parsed.data.message, `${tx.id}: the payload's message`) };
}

/** A mint's symbol and decimals: the registry's for the plan's network, else the plan's holdings; a mint the plan holds nowhere is refused. */
function tokenOf(plan: SweepPlan, mint: string, where: string): { symbol: string; decimals: number } {
  const defaults = CHAIN_DEFAULTS[plan.chain];
  const [here, there] = plan.testnet ? [defaults.testnet, defaults.mainnet] : [defaults.mainnet, defaults.testnet];
  const find = (tokens: typeof here.tokens) => Object.entries(tokens).find(([, t]) => t.address === mint);
  const registered = find(here.tokens);
  const elsewhere = find(there.tokens);
  if (!registered && elsewhere) throw new UsageError(`${where}: mint ${short(mint)} is ${plan.chain} ${there.network}'s ${elsewhere[0]}, but the plan is for ${plan.network}`);
  const held = plan.deposits.flatMap((d) => d.holdings).find((h) => h.token === mint) ?? (plan.refund?.token === mint ? plan.refund : undefined);
  if (!held) throw new UsageError(`${where}: moves mint ${short(mint)}, which no deposit of the plan holds`);
  return registered ? { symbol: registered[0], decimals: registered[1].decimals } : { symbol: held.symbol, decimals: held.decimals };
}

/** What the message does: spends, pays and the fee, each instruction accounted for. */
function readActions(plan: SweepPlan, id: string, message: SweepMessage, closes: Record<string, string>): DecodedSweepTx {
  const sol = CHAIN_DEFAULTS[plan.chain].native;
  const feePayer = message.feePayer;
  const spends = new Set<string>(message.signers);
  const pays: DecodedPay[] = [];
  // Whose associated token account a destination is: the plan's own accounts are the only owners it may name.
  const owners = [plan.to, ...plan.deposits.map((d) => d.address), ...(plan.feePayer === null ? [] : [plan.feePayer])];
  const ownerOf = (ata: string, mint: string, program: string) => owners.find((o) => associatedTokenAddress(o, mint, program) === ata) ?? ata;
  for (const [n, action] of message.actions.entries()) {
    const at = `${id}, instruction ${n}`;
    switch (action.kind) {
      case 'transfer-sol': {
        spends.add(action.from);
        pays.push({ to: action.to, symbol: sol.symbol, token: null, decimals: sol.decimals, amount: action.lamports });
        break;
      }
      case 'transfer-token': {
        const token = tokenOf(plan, action.mint, at);
        if (action.decimals !== token.decimals) throw new UsageError(`${at}: transferChecked says ${action.decimals} decimals for ${token.symbol}, which has ${token.decimals}`);
        spends.add(action.authority);
        pays.push({ to: ownerOf(action.destination, action.mint, action.program), symbol: token.symbol, token: action.mint, decimals: token.decimals, amount: action.amount });
        break;
      }
      case 'close-account': {
        const lamports = closes[action.account];
        if (lamports === undefined) throw new UsageError(`${at}: closes token account ${short(action.account)}, whose balance the payload does not state`);
        spends.add(action.owner);
        pays.push({ to: action.destination, symbol: sol.symbol, token: null, decimals: sol.decimals, amount: BigInt(lamports) });
        break;
      }
      case 'create-ata': {
        // Its rent is part of the fee (sweep-fee.ts), so the fee payer must be the one paying it.
        if (action.payer !== feePayer) throw new UsageError(`${at}: a token account's rent is paid by ${short(action.payer)}, not by the fee payer ${short(feePayer)}`);
        if (action.owner !== plan.to) throw new UsageError(`${at}: creates a token account for ${short(action.owner)}, which is not the plan's destination ${short(plan.to)}`);
        if (associatedTokenAddress(action.owner, action.mint, action.tokenProgram) !== action.ata) throw new UsageError(`${at}: ${short(action.ata)} is not the destination's associated token account`);
        tokenOf(plan, action.mint, at);
        spends.add(action.payer);
        break;
      }
      case 'compute-limit':
      case 'compute-price':
        break; // priced by messageFee
    }
  }
  return { id, spends: [...spends], pays, fee: messageFee(message).total, feePaidBy: feePayer, chainId: null };
}

function decodeUnsigned(plan: SweepPlan, tx: UnsignedSweepTx): DecodedSweepTx {
  const payload = payloadOf(tx);
  const message = readSweepMessage(payload.bytes, tx.id);
  if (message.blockhash !== payload.blockhash) throw new UsageError(`${tx.id}: the payload's blockhash is not the message's`);
  return readActions(plan, tx.id, message, payload.closes ?? {});
}

const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');
const verifies = (signer: string, message: Uint8Array, signature: Uint8Array) => {
  const key = decodeBase58(signer);
  if (key?.length !== 32) return false;
  return verify(null, message, createPublicKey({ key: Buffer.concat([SPKI_ED25519, key]), format: 'der', type: 'spki' }), signature);
};

/** Names how a signed message differs from the plan's, for the refusal. */
function difference(id: string, planned: Uint8Array, signed: Uint8Array): string {
  const a = readSweepMessage(planned, id);
  let b: SweepMessage;
  try {
    b = readSweepMessage(signed, `${id} (signed)`);
  } catch (err) {
    return (err as Error).message;
  }
  const json = (v: unknown) => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
  if (a.feePayer !== b.feePayer) return `its fee payer is ${short(b.feePayer)}, the plan's ${short(a.feePayer)}`;
  if (a.signers.join() !== b.signers.join()) return 'its signers are not the plan\'s';
  if (a.blockhash !== b.blockhash) return `its blockhash is ${short(b.blockhash)}, the plan's ${short(a.blockhash)}`;
  if (a.actions.length !== b.actions.length) return `it holds ${b.actions.length} instructions, the plan's ${a.actions.length}`;
  const n = a.actions.findIndex((x, i) => json(x) !== json(b.actions[i]));
  if (n >= 0) return `its instruction ${n} is ${json(b.actions[n])}, the plan's ${json(a.actions[n])}`;
  return 'its message bytes are not the plan\'s';
}

function decodeSigned(plan: SweepPlan, tx: UnsignedSweepTx, raw: string): DecodedSignedTx {
  const bytes = base64Bytes(raw, `${tx.id}: the signed transaction`);
  let decoded: ReturnType<ReturnType<typeof getTransactionDecoder>['decode']>;
  try {
    decoded = getTransactionDecoder().decode(bytes);
  } catch (err) {
    throw new UsageError(`${tx.id}: not a signed Solana transaction (${(err as Error).message})`);
  }
  // Re-encoding gives back exactly the raw bytes: one signature slot per signer, nothing after the message.
  if (Buffer.compare(Buffer.from(getTransactionEncoder().encode(decoded)), Buffer.from(bytes)) !== 0) throw new UsageError(`${tx.id}: not a well-formed signed Solana transaction`);
  const message = new Uint8Array(decoded.messageBytes);
  const planned = payloadOf(tx).bytes;
  if (Buffer.compare(Buffer.from(message), Buffer.from(planned)) !== 0) {
    throw new UsageError(`${tx.id}: the signed transaction is not the plan's: ${difference(tx.id, planned, message)}`);
  }
  const content = decodeUnsigned(plan, tx);
  const signers = readSweepMessage(message, tx.id).signers;
  const signatures = decoded.signatures as Record<string, Uint8Array | null>;
  if (Object.keys(signatures).length !== signers.length) throw new UsageError(`${tx.id}: carries ${Object.keys(signatures).length} signatures for ${signers.length} signers`);
  for (const signer of signers) {
    const signature = signatures[signer];
    if (!signature || signature.every((b) => b === 0)) throw new UsageError(`${tx.id}: ${short(signer)} has not signed it`);
    if (!verifies(signer, message, signature)) throw new UsageError(`${tx.id}: the signature of ${short(signer)} does not verify`);
  }
  // The first signature (the fee payer's) is the transaction's id, in base58, as explorers show it.
  return { ...content, txid: encodeBase58(signatures[signers[0]!]!) };
}

export const solanaSweepVerifier: FamilySweepVerifier = { decodeUnsigned, decodeSigned };
