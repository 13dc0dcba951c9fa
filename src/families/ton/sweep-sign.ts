import { Address, beginCell, contractAddress, external, storeMessage } from '@ton/core';
import type { FamilySweepSigner, PlannedDeposit, SignedSweepTx, SweepCandidate, SweepKey, SweepPlan } from '../sweep.ts';
import { UsageError } from '../../domain/errors.ts';
import { ed25519PublicKey, ed25519Sign } from '../ed25519-keys.ts';
import { decodeMessage, MODE_CARRY_ALL, MODE_PAY_FEES_SEPARATELY, normalizedHash, readJettonTransfer, short, TonSweepPayloadSchema, walletOrder, type TonSweepPayload } from './sweep-messages.ts';
import { checkRefund } from './sweep-refund-check.ts';
import { findTonIndex, parseTonAddress, tonKeyAt, tonPath, walletStateInit } from './wallet-v4.ts';

// The offline half of a TON sweep: no database, no network, no chain client (@ton/core's cells
// only). Keys come from the wallet seed (SLIP-0010 at m/44'/607'/i', each key's wallet v4r2);
// every internal message of every order is decoded before anything is signed: a deposit sends
// jetton transfers whose jettons and excess go to the plan's destination and then its remaining
// TON (mode 128) to the destination; the fee payer only tops up deposits of the plan, no more than
// their planned gas. What the signer signs is what the summary shows. A refund plan is checked by
// sweep-refund-check.ts instead: one message of the exact amount, never mode 128.

export { short };

function deriveKey(seed: Uint8Array, candidate: SweepCandidate, plan: SweepPlan, searchLimit: number): SweepKey {
  const target = parseTonAddress(candidate.address, 'the plan\'s address');
  const index = candidate.derivationIndex ?? findTonIndex(seed, target, searchLimit);
  if (index === null) {
    throw new UsageError(
      `${short(candidate.address)} is not the wallet v4r2 of any of the seed's first ${searchLimit} keys (${tonPath(0)} … ${tonPath(searchLimit - 1)}): not signed. Another seed, or a higher index (raise the search limit)?`,
    );
  }
  const key = tonKeyAt(seed, index, plan.testnet);
  if (!Address.parse(key.address).equals(target)) {
    throw new UsageError(`${short(candidate.address)}: the seed's ${tonPath(index)} gives another wallet; is this the seed the pool came from?`);
  }
  return { address: candidate.address, privateKey: key.privateKey };
}

interface Moved {
  jettons: Map<string, bigint>;
  gas: bigint;
  toppedUp: bigint;
  swept: boolean;
}

const rawOf = (a: string) => Address.parse(a).toRawString();

/** Checks one order against the plan; adds what it moves to `moved` (per deposit, by raw address). */
function check(plan: SweepPlan, txId: string, signers: readonly string[], txDeposits: readonly string[], payload: TonSweepPayload, deposits: Map<string, PlannedDeposit>, moved: Map<string, Moved>): void {
  const at = `plan ${txId}`;
  const to = parseTonAddress(plan.to, 'the plan\'s destination');
  if (signers.length !== 1 || signers[0] !== payload.wallet) throw new UsageError(`${at}: a TON order is signed by the one wallet that sends it (${short(payload.wallet)})`);
  const wallet = rawOf(payload.wallet);
  const entry = (raw: string) => {
    let m = moved.get(raw);
    if (!m) moved.set(raw, (m = { jettons: new Map(), gas: 0n, toppedUp: 0n, swept: false }));
    return m;
  };
  const deposit = deposits.get(wallet);
  if (deposit) {
    if (txDeposits.length !== 1 || rawOf(txDeposits[0]!) !== wallet) throw new UsageError(`${at}: the order of deposit ${short(payload.wallet)} must empty that deposit and no other`);
    const m = entry(wallet);
    if (m.swept) throw new UsageError(`${at}: deposit ${short(payload.wallet)} is swept by two orders`);
    payload.messages.forEach((item, i) => {
      const msg = decodeMessage(item.message, `${at} message ${i}`);
      if (msg.info.type !== 'internal') throw new UsageError(`${at} message ${i}: not an internal message`);
      if (msg.init) throw new UsageError(`${at} message ${i}: carries a state_init (a contract deployment): refused`);
      const last = i === payload.messages.length - 1;
      if (last) {
        // Everything that remains, to the destination, nothing else.
        if (item.mode !== MODE_CARRY_ALL) throw new UsageError(`${at}: the last message must carry the remaining balance (mode 128), not mode ${item.mode}: refused`);
        if (!msg.info.dest.equals(to)) throw new UsageError(`${at}: the remaining TON goes to ${short(msg.info.dest.toString())}, not to the plan's destination ${short(plan.to)}: refused`);
        if (msg.body.bits.length > 0 || msg.body.refs.length > 0) throw new UsageError(`${at}: the last message carries a body: refused`);
        if (item.jetton !== undefined) throw new UsageError(`${at}: the last message is a TON transfer, not a jetton's`);
        m.swept = true;
        return;
      }
      if (item.mode !== MODE_PAY_FEES_SEPARATELY) throw new UsageError(`${at} message ${i}: a jetton transfer is sent with mode 1, not ${item.mode}: refused`);
      if (item.jetton === undefined) throw new UsageError(`${at} message ${i}: does not say which jetton it moves`);
      const transfer = readJettonTransfer(msg.body, `${at} message ${i}`);
      if (!transfer.destination.equals(to)) throw new UsageError(`${at} message ${i}: the jettons go to ${short(transfer.destination.toString())}, not to the plan's destination ${short(plan.to)}: refused`);
      if (!transfer.responseDestination?.equals(to)) throw new UsageError(`${at} message ${i}: the excess TON goes elsewhere than the plan's destination: refused`);
      if (transfer.forwardTonAmount > msg.info.value.coins) throw new UsageError(`${at} message ${i}: forwards more TON than it carries`);
      const master = rawOf(item.jetton);
      m.jettons.set(master, (m.jettons.get(master) ?? 0n) + transfer.amount);
      m.gas += msg.info.value.coins;
    });
    if (!m.swept) throw new UsageError(`${at}: the order does not end by sending the rest to the destination`);
    return;
  }
  if (plan.feePayer === null || wallet !== rawOf(plan.feePayer)) throw new UsageError(`${at}: ${short(payload.wallet)} is neither a deposit of the plan nor its fee payer: refused`);
  if (txDeposits.length !== 0) throw new UsageError(`${at}: the fee payer's order empties no deposit`);
  payload.messages.forEach((item, i) => {
    const msg = decodeMessage(item.message, `${at} message ${i}`);
    if (msg.info.type !== 'internal') throw new UsageError(`${at} message ${i}: not an internal message`);
    const target = msg.info.dest.toRawString();
    if (!deposits.has(target)) throw new UsageError(`${at} message ${i}: the fee payer pays ${short(msg.info.dest.toString())}, which is not a deposit of the plan: refused`);
    if (item.mode !== MODE_PAY_FEES_SEPARATELY || msg.init || msg.body.bits.length > 0 || msg.body.refs.length > 0 || item.jetton !== undefined) {
      throw new UsageError(`${at} message ${i}: a gas top-up is a plain transfer (mode 1, no body): refused`);
    }
    entry(target).toppedUp += msg.info.value.coins;
  });
}

/** The totals signed per deposit must be the summary's: jettons exactly, gas and top-ups within the deposit's planned fee. */
function compareWithSummary(deposits: Map<string, PlannedDeposit>, moved: Map<string, Moved>): void {
  for (const [raw, deposit] of deposits) {
    const m = moved.get(raw);
    if (!m?.swept) throw new UsageError(`deposit ${short(deposit.address)}: no order of the plan sweeps it`);
    const fee = BigInt(deposit.fee);
    if (m.gas > fee) throw new UsageError(`deposit ${short(deposit.address)}: the orders attach ${m.gas} nanoton of gas, the summary's fee is ${fee}: refused`);
    if (m.toppedUp > fee) throw new UsageError(`deposit ${short(deposit.address)}: the fee payer sends it ${m.toppedUp} nanoton, more than its fee ${fee}: refused`);
    const shown = new Map(deposit.moves.filter((h) => h.token !== null).map((h) => [rawOf(h.token!), BigInt(h.amount)]));
    for (const master of new Set([...shown.keys(), ...m.jettons.keys()])) {
      if ((shown.get(master) ?? 0n) !== (m.jettons.get(master) ?? 0n)) {
        throw new UsageError(`deposit ${short(deposit.address)}: the orders move ${m.jettons.get(master) ?? 0n} of jetton ${short(master)}, the summary shows ${shown.get(master) ?? 0n}: refused`);
      }
    }
  }
  for (const raw of moved.keys()) if (!deposits.has(raw)) throw new UsageError(`${short(raw)} is paid or swept but is not a deposit of the plan`);
}

function sign(plan: SweepPlan, keys: ReadonlyMap<string, SweepKey>): SignedSweepTx[] {
  if (plan.family !== 'ton') throw new UsageError(`this is a ${plan.family} plan, not a TON one`);
  const deposits = new Map(plan.deposits.map((d) => [rawOf(d.address), d]));
  if (deposits.size !== plan.deposits.length) throw new UsageError('the plan lists a deposit twice');
  const moved = new Map<string, Moved>();
  const decoded = plan.transactions.map((tx) => {
    const parsed = TonSweepPayloadSchema.safeParse(tx.payload);
    if (!parsed.success) throw new UsageError(`plan ${tx.id}: not a TON sweep payload (${parsed.error.issues[0]?.message ?? 'unexpected shape'})`);
    if (plan.kind !== 'refund') check(plan, tx.id, tx.signers, tx.deposits, parsed.data, deposits, moved);
    return { tx, payload: parsed.data };
  });
  if (plan.kind === 'refund') checkRefund(plan, decoded);
  else compareWithSummary(deposits, moved);
  return decoded.map(({ tx, payload }) => {
    const key = keys.get(payload.wallet);
    if (!key) throw new UsageError(`plan ${tx.id}: no key for ${short(payload.wallet)}, which must sign`);
    const init = walletStateInit(ed25519PublicKey(key.privateKey));
    const wallet = contractAddress(0, init);
    if (!wallet.equals(Address.parse(payload.wallet))) throw new UsageError(`plan ${tx.id}: the key given for ${short(payload.wallet)} is another wallet's`);
    const order = walletOrder(payload);
    const signature = ed25519Sign(key.privateKey, order.hash());
    const body = beginCell().storeBuffer(Buffer.from(signature)).storeSlice(order.beginParse()).endCell();
    const ext = external({ to: wallet, body, ...(payload.deploy ? { init } : {}) });
    const message = beginCell().store(storeMessage(ext)).endCell();
    return { id: tx.id, raw: message.toBoc().toString('base64'), txid: normalizedHash(ext).toString('hex') };
  });
}

export const tonSweepSigner: FamilySweepSigner = { deriveKey, sign };
