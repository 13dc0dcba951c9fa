import { createPublicKey, verify } from 'node:crypto';
import { Address, beginCell, Cell, contractAddress, loadMessage, loadMessageRelaxed, type Message, type MessageRelaxed, type Slice, type StateInit } from '@ton/core';
import { CHAIN_DEFAULTS } from '../../chains/chain-defaults.ts';
import { InvalidAddressError, UsageError } from '../../domain/errors.ts';
import type { DecodedPay, DecodedSweepTx, FamilySweepVerifier, SweepPlan, UnsignedSweepTx } from '../sweep.ts';
import { tonAddresses } from './address.ts';
import { MODE_CARRY_ALL, MODE_PAY_FEES_SEPARATELY, normalizedHash, ORDER_FEE, readJettonTransfer, TonSweepPayloadSchema, walletOrder, type TonSweepPayload } from './sweep-messages.ts';
import { MAX_MESSAGES, SUBWALLET_ID, WALLET_V4R2_CODE, walletStateInit } from './wallet-v4.ts';

// What a TON plan's transactions do, read from their bytes (docs/sweeps/ton.md#what-the-verifier-reads):
// pure and offline, with @ton/core's cells only. A transaction is one external message to a wallet
// v4r2 whose body is signature | subwallet id | valid_until | seqno | op | (mode, ^message)×1…4; the
// unsigned payload is read by building that order cell from it and decoding the cell, the signed raw
// by decoding the message, so both go through the same reader. Each internal message is a plain TON
// transfer (no body) or a TEP-74 jetton transfer; the send modes are the planner's: 1 everywhere,
// and 128 ("carry the remaining balance") only as the last message of a deposit's order in a sweep.
// The fee is the documented per-order bound (ORDER_FEE) plus the TON attached to jetton transfers,
// which the jetton wallets burn or send back to the response destination.

const V4R2_CODE_HASH = WALLET_V4R2_CODE.hash();
/** The DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): node:crypto reads a raw 32-byte public key only this way. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

interface OrderMessage {
  mode: number;
  cell: Cell;
  message: MessageRelaxed;
}

interface WalletOrder {
  subwalletId: number;
  validUntil: number;
  seqno: number;
  op: number;
  messages: OrderMessage[];
}

function fail(tx: UnsignedSweepTx, what: string): never {
  throw new UsageError(`${tx.id}: ${what}: refused`);
}

function payloadOf(plan: SweepPlan, tx: UnsignedSweepTx): TonSweepPayload {
  if (plan.family !== 'ton') throw new UsageError(`this is a ${plan.family} plan, not a TON one`);
  const parsed = TonSweepPayloadSchema.safeParse(tx.payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`${tx.id}: not a TON order payload (${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape'})`);
  }
  return parsed.data;
}

/** The address in the form validateAddress returns for the plan's network. */
function canonical(plan: SweepPlan, address: Address | string, tx: UnsignedSweepTx): string {
  try {
    return tonAddresses.validate(typeof address === 'string' ? address : address.toRawString(), plan.testnet, {});
  } catch (err) {
    if (err instanceof InvalidAddressError) fail(tx, `${String(address)} is not a TON address`);
    throw err;
  }
}

/** A wallet v4r2 order from its cell: every field, every message; nothing after them. */
function readOrder(s: Slice, tx: UnsignedSweepTx): WalletOrder {
  try {
    const subwalletId = s.loadUint(32);
    const validUntil = s.loadUint(32);
    const seqno = s.loadUint(32);
    const op = s.loadUint(8);
    const messages: OrderMessage[] = [];
    while (s.remainingRefs > 0) {
      const mode = s.loadUint(8);
      const cell = s.loadRef();
      const m = cell.beginParse();
      const message = loadMessageRelaxed(m);
      if (m.remainingBits > 0 || m.remainingRefs > 0) throw new Error(`message ${messages.length} has data after it`);
      messages.push({ mode, cell, message });
    }
    if (s.remainingBits > 0) throw new Error('data after the messages');
    return { subwalletId, validUntil, seqno, op, messages };
  } catch (err) {
    fail(tx, `the wallet order does not read as wallet v4r2's (${(err as Error).message})`);
  }
}

/** The jetton the plan holds under this master: symbol, decimals and the token form the plan writes; refused when the plan holds none. */
function heldJetton(plan: SweepPlan, master: string, tx: UnsignedSweepTx): { symbol: string; token: string; decimals: number } {
  let raw: string;
  try {
    raw = Address.parse(master).toRawString();
  } catch {
    fail(tx, `names jetton master ${master}, which is not a TON address`);
  }
  const same = (token: string | null) => token !== null && Address.parse(token).toRawString() === raw;
  const held = plan.deposits.flatMap((d) => d.holdings).find((h) => same(h.token));
  if (!held) fail(tx, `moves jetton ${master}, which no address of the plan holds`);
  const registry = CHAIN_DEFAULTS.ton[plan.testnet ? 'testnet' : 'mainnet'].tokens;
  for (const [symbol, t] of Object.entries(registry)) {
    if (same(t.address) && (symbol !== held.symbol || t.decimals !== held.decimals)) {
      fail(tx, `the plan calls jetton ${master} ${held.symbol} with ${held.decimals} decimals; the registry says ${symbol} with ${t.decimals}`);
    }
  }
  return { symbol: held.symbol, token: held.token!, decimals: held.decimals };
}

/** What an order does: whom it pays, what it can cost. `payload` gives what bytes cannot: the jetton each transfer moves, the wallet's balance for mode 128. */
function describe(plan: SweepPlan, tx: UnsignedSweepTx, payload: TonSweepPayload, order: WalletOrder): DecodedSweepTx {
  const wallet = canonical(plan, payload.wallet, tx);
  // The bytes do not name the network (wallet v4r2 signs no global id); the plan's addresses do: test-only on testnet, not on mainnet.
  const testOnly = Address.isFriendly(payload.wallet) && Address.parseFriendly(payload.wallet).isTestOnly;
  if (testOnly !== plan.testnet) fail(tx, `the order's wallet ${payload.wallet} is written for ${testOnly ? 'testnet' : 'mainnet'}, but the plan says ${plan.chain} ${plan.network}`);
  if (order.subwalletId !== SUBWALLET_ID) fail(tx, `the order is for subwallet ${order.subwalletId}, not the default ${SUBWALLET_ID} the deposits are made with`);
  if (order.op !== 0) fail(tx, `the order's op is ${order.op}, not 0 (a simple send): wallet v4r2 op ${order.op} installs or removes a plugin`);
  if (order.messages.length < 1 || order.messages.length > MAX_MESSAGES) fail(tx, `the order holds ${order.messages.length} messages; wallet v4r2 sends 1 to ${MAX_MESSAGES}`);
  if (order.messages.length !== payload.messages.length) fail(tx, `the order holds ${order.messages.length} messages, the payload describes ${payload.messages.length}`);
  const isDeposit = plan.deposits.some((d) => canonical(plan, d.address, tx) === wallet);
  const native = CHAIN_DEFAULTS.ton.native;
  const pays: DecodedPay[] = [];
  let attached = 0n;
  const own = new Set([canonical(plan, plan.to, tx), ...plan.deposits.map((d) => canonical(plan, d.address, tx)), ...(plan.feePayer ? [canonical(plan, plan.feePayer, tx)] : [])]);
  let carried: number | null = null; // the index in `pays` of the mode-128 message
  for (const [i, { mode, message }] of order.messages.entries()) {
    const at = `message ${i}`;
    const info = message.info;
    if (info.type !== 'internal') fail(tx, `${at} is not an internal message`);
    if (message.init) fail(tx, `${at} carries a state_init (deploys a contract)`);
    if (info.value.other && info.value.other.size > 0) fail(tx, `${at} carries extra currencies`);
    if (info.bounced) fail(tx, `${at} is flagged bounced`);
    const last = i === order.messages.length - 1;
    if (mode === MODE_CARRY_ALL) {
      if (plan.kind !== 'sweep') fail(tx, `${at} is sent with mode 128 (carry the whole balance); a ${plan.kind} sends with mode 1 only`);
      if (!isDeposit || !last) fail(tx, `${at} is sent with mode 128 (carry the whole balance); only the last message of a deposit's sweep order is`);
    } else if (mode !== MODE_PAY_FEES_SEPARATELY) {
      fail(tx, `${at} is sent with mode ${mode}; the plan's messages use mode 1${plan.kind === 'sweep' ? ' (and 128 for the rest of a deposit)' : ''} only`);
    }
    const to = canonical(plan, info.dest, tx);
    const hint = payload.messages[i]!.jetton;
    const plain = message.body.bits.length === 0 && message.body.refs.length === 0;
    if (plain) {
      if (hint !== undefined) fail(tx, `${at} is a plain TON transfer, but the payload says it moves jetton ${hint}`);
      if (mode === MODE_CARRY_ALL) {
        if (info.value.coins !== 0n) fail(tx, `${at} carries the whole balance (mode 128) and names a value of ${info.value.coins}`);
        carried = pays.length;
        pays.push({ to, symbol: native.symbol, token: null, decimals: native.decimals, amount: 0n });
      } else {
        pays.push({ to, symbol: native.symbol, token: null, decimals: native.decimals, amount: info.value.coins });
      }
      continue;
    }
    if (mode !== MODE_PAY_FEES_SEPARATELY) fail(tx, `${at} carries a body and is sent with mode ${mode}`);
    if (hint === undefined) fail(tx, `${at} carries a body, and the payload names no jetton it moves`);
    const transfer = readJettonTransfer(message.body, `${tx.id} ${at}`);
    const jetton = heldJetton(plan, hint, tx);
    const excessTo = transfer.responseDestination === null ? null : canonical(plan, transfer.responseDestination, tx);
    if (excessTo === null || !own.has(excessTo)) fail(tx, `${at}: the jetton transfer's excess TON goes to ${excessTo ?? 'nobody'}, neither the plan's destination nor one of its addresses`);
    if (transfer.forwardTonAmount > info.value.coins) fail(tx, `${at}: forwards ${transfer.forwardTonAmount} nanoton, more than the ${info.value.coins} it carries`);
    pays.push({ to: canonical(plan, transfer.destination, tx), ...jetton, amount: transfer.amount });
    // The TON attached is gas: the jetton wallets burn part of it and send the rest to the response destination.
    attached += info.value.coins;
  }
  if (carried !== null) {
    const sent = pays.reduce((s, p, k) => (k !== carried && p.token === null ? s + p.amount : s), 0n);
    const rest = BigInt(payload.balance) - sent - attached - ORDER_FEE;
    if (rest < 0n) fail(tx, `the wallet's planned balance of ${payload.balance} nanoton does not cover its messages and the order's fee`);
    pays[carried]!.amount = rest;
  }
  return { id: tx.id, spends: [wallet], pays, fee: ORDER_FEE + attached, feePaidBy: wallet, chainId: null };
}

/** The public key a wallet v4r2 state_init carries, when it is exactly the fresh wallet of that key (code, seqno 0, default subwallet, no plugins). */
function stateInitKey(init: StateInit, tx: UnsignedSweepTx): Buffer {
  const { code, data } = init;
  if (!code || !data) fail(tx, 'the state_init carries no code or no data');
  if (!code.hash().equals(V4R2_CODE_HASH)) fail(tx, 'the state_init deploys other code than wallet v4r2');
  if (init.splitDepth !== undefined && init.splitDepth !== null) fail(tx, 'the state_init sets split_depth');
  if (init.special) fail(tx, 'the state_init sets special');
  if (init.libraries && init.libraries.size > 0) fail(tx, 'the state_init carries libraries');
  let key: Buffer;
  try {
    const d = data.beginParse();
    d.skip(64); // seqno, subwallet id: checked below by rebuilding the data
    key = d.loadBuffer(32);
  } catch {
    fail(tx, 'the state_init\'s data does not read as wallet v4r2\'s');
  }
  if (!walletStateInit(key).data?.hash().equals(data.hash())) fail(tx, 'the state_init\'s data is not a fresh wallet v4r2 (seqno 0, default subwallet, no plugins)');
  return key;
}

function verifyEd25519(publicKey: Buffer, message: Buffer, signature: Buffer): boolean {
  try {
    return verify(null, message, createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' }), signature);
  } catch {
    return false;
  }
}

/** Names the first field in which a signed order differs from the plan's. */
function differs(a: WalletOrder, b: WalletOrder): string {
  for (const field of ['subwalletId', 'validUntil', 'seqno', 'op'] as const) if (a[field] !== b[field]) return `its ${field} is ${a[field]}, the plan's ${b[field]}`;
  if (a.messages.length !== b.messages.length) return `it holds ${a.messages.length} messages, the plan's order ${b.messages.length}`;
  for (const [i, m] of a.messages.entries()) {
    const p = b.messages[i]!;
    if (m.mode !== p.mode) return `message ${i} is sent with mode ${m.mode}, the plan's with ${p.mode}`;
    if (!m.cell.hash().equals(p.cell.hash())) return `message ${i} is not the plan's (another destination, value or body)`;
  }
  return 'its bytes are not the plan\'s';
}

function decodeUnsigned(plan: SweepPlan, tx: UnsignedSweepTx): DecodedSweepTx {
  const payload = payloadOf(plan, tx);
  let order: Cell;
  try {
    order = walletOrder(payload);
  } catch (err) {
    fail(tx, `the payload's messages do not make a wallet order (${(err as Error).message})`);
  }
  return describe(plan, tx, payload, readOrder(order.beginParse(), tx));
}

function decodeSigned(plan: SweepPlan, tx: UnsignedSweepTx, raw: string): DecodedSweepTx & { txid: string } {
  const payload = payloadOf(plan, tx);
  let message: Message;
  try {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(raw)) throw new Error('not base64');
    const cells = Cell.fromBoc(Buffer.from(raw, 'base64'));
    if (cells.length !== 1) throw new Error(`${cells.length} root cells`);
    message = loadMessage(cells[0]!.beginParse()); // an inline body is the rest of the cell
  } catch (err) {
    throw new UsageError(`${tx.id}: the signed raw is not a TON message (${(err as Error).message}): refused`);
  }
  if (message.info.type !== 'external-in') fail(tx, `the signed raw is an ${message.info.type} message, not an external one to a wallet`);
  const wallet = Address.parse(payload.wallet);
  if (!message.info.dest.equals(wallet)) fail(tx, `the signed message goes to ${canonical(plan, message.info.dest, tx)}, the plan's order to ${canonical(plan, wallet, tx)}`);

  const body = message.body.beginParse();
  if (body.remainingBits < 512) fail(tx, 'the signed message carries no signature');
  const signature = body.loadBuffer(64);
  const orderCell = beginCell().storeSlice(body).endCell();
  const planned = walletOrder(payload);
  const order = readOrder(orderCell.beginParse(), tx);
  if (!orderCell.hash().equals(planned.hash())) fail(tx, `the signed order is not the plan's: ${differs(order, readOrder(planned.beginParse(), tx))}`);

  // The key: from the state_init when the message deploys the wallet, else from the plan; either way it must derive the wallet's address.
  let key: Buffer;
  if (payload.deploy) {
    if (!message.init) fail(tx, 'the plan deploys the wallet, but the signed message carries no state_init');
    key = stateInitKey(message.init, tx);
    if (payload.publicKey !== undefined && payload.publicKey !== key.toString('hex')) fail(tx, 'the state_init\'s public key is not the one the plan names');
  } else {
    if (message.init) fail(tx, 'the signed message carries a state_init, but the plan\'s wallet is deployed');
    if (payload.publicKey === undefined) fail(tx, 'the plan names no public key for a deployed wallet: the signature cannot be checked');
    key = Buffer.from(payload.publicKey, 'hex');
  }
  if (!contractAddress(0, walletStateInit(key)).equals(wallet)) fail(tx, `the public key ${key.toString('hex').slice(0, 16)}… does not derive ${canonical(plan, wallet, tx)} (wallet v4r2, default subwallet, workchain 0)`);
  if (!verifyEd25519(key, orderCell.hash(), signature)) fail(tx, `the signature does not verify against ${canonical(plan, wallet, tx)}'s key`);
  return { ...describe(plan, tx, payload, order), txid: normalizedHash(message).toString('hex') };
}

export const tonSweepVerifier: FamilySweepVerifier = { decodeUnsigned, decodeSigned };
