import { z } from 'zod';
import { encodeBase58 } from '../base58check.ts';
import type { FamilySweepSigner, SignedSweepTx, SweepCandidate, SweepKey, SweepPlan } from '../sweep.ts';
import { UsageError } from '../../domain/errors.ts';
import { ed25519PublicKey, ed25519Sign } from '../ed25519-keys.ts';
import { findSolanaIndex, solanaKeyAt, solanaPath } from './ed25519-keys.ts';
import { associatedTokenAddress, readSweepMessage, type SweepMessage } from './sweep-message.ts';

// The offline half of a Solana sweep: no database, no network, no chain client. Keys come from
// the wallet seed (SLIP-0010 at m/44'/501'/i'/0'); every transaction's message is decoded and
// checked against the plan before anything is signed: each lamport and token leaving a deposit
// goes to the plan's cold address (or its associated token account), and the fee payer only pays
// fees and the cold wallet's token account. What the signer signs is what the summary shows.
// A refund plan is held tighter: one deposit, no account closed, and only the refund's coin moving,
// exactly as the summary shows; without a fee payer the deposit pays its own fee.

/** The part of a plan transaction the Solana planner writes (UnsignedSweepTx.payload). */
export const SolanaSweepPayloadSchema = z.strictObject({
  /** The compiled legacy message, base64: exactly the bytes the signers sign. */
  message: z.string().regex(/^[A-Za-z0-9+/]+=*$/, 'base64'),
  /** The recent blockhash in the message; valid about 150 slots (≈ 1 min) after planning. */
  blockhash: z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/),
  /** The last block height at which the network still accepts the transaction (getLatestBlockhash). */
  lastValidBlockHeight: z.string().regex(/^\d+$/),
  /** The cluster's fee for the message, lamports (getFeeForMessage): signatures and priority, not token accounts' rent. Informational: the verifier reads the fee from the message. */
  fee: z.string().regex(/^\d+$/),
  /** Per token account the message closes, the lamports it held at planning: they go to the close's destination, and the message does not state them. */
  closes: z.record(z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/), z.string().regex(/^\d+$/)).optional(),
});
export type SolanaSweepPayload = z.infer<typeof SolanaSweepPayloadSchema>;

/** An address shortened for messages: enough to find it in the plan, not a full copy for logs. */
export const short = (address: string) => `${address.slice(0, 4)}…${address.slice(-4)}`;

function deriveKey(seed: Uint8Array, candidate: SweepCandidate, _plan: SweepPlan, searchLimit: number): SweepKey {
  if (candidate.derivationIndex !== null) {
    const key = solanaKeyAt(seed, candidate.derivationIndex);
    if (key.address !== candidate.address) {
      throw new UsageError(`${short(candidate.address)}: the seed's ${solanaPath(candidate.derivationIndex)} is another address; is this the seed the pool came from?`);
    }
    return key;
  }
  const index = findSolanaIndex(seed, candidate.address, searchLimit);
  if (index === null) {
    throw new UsageError(
      `${short(candidate.address)} is not among the seed's first ${searchLimit} accounts (${solanaPath(0)} … ${solanaPath(searchLimit - 1)}): not signed. Another seed, a passphrase, or a higher index (raise the search limit)?`,
    );
  }
  return solanaKeyAt(seed, index);
}

interface Moved {
  sol: bigint;
  tokens: Map<string, bigint>;
}

/** Checks one message against the plan; adds what each deposit sends to `moved`. */
function check(plan: SweepPlan, txId: string, txDeposits: readonly string[], txSigners: readonly string[], message: SweepMessage, moved: Map<string, Moved>): void {
  const at = `plan ${txId}`;
  // A refund without a fee payer is paid by its one deposit.
  const feePayer = plan.feePayer ?? (plan.kind === 'refund' && plan.deposits.length === 1 ? plan.deposits[0]!.address : null);
  if (feePayer === null) throw new UsageError(`${at}: a Solana plan names its fee payer; this one has none`);
  if (message.feePayer !== feePayer) throw new UsageError(`${at}: the message's fee payer ${short(message.feePayer)} is not the plan's ${short(feePayer)}`);
  const ours = new Set(txDeposits);
  const planned = new Set(plan.deposits.map((d) => d.address));
  for (const d of txDeposits) if (!planned.has(d)) throw new UsageError(`${at}: ${short(d)} is not a deposit of the plan`);
  const expected = [...new Set([feePayer, ...txDeposits])].sort();
  if ([...message.signers].sort().join() !== expected.join() || [...txSigners].sort().join() !== expected.join()) {
    throw new UsageError(`${at}: the message's signers are not the fee payer and this transaction's deposits`);
  }
  const from = (address: string, role: string) => {
    if (!ours.has(address)) throw new UsageError(`${at}: ${role} ${short(address)} is not one of this transaction's deposits`);
    let m = moved.get(address);
    if (!m) moved.set(address, (m = { sol: 0n, tokens: new Map() }));
    return m;
  };
  const toCold = (destination: string, what: string, expectedTo: string) => {
    if (destination !== expectedTo) throw new UsageError(`${at}: ${what} goes to ${short(destination)}, not to the plan's destination ${short(plan.to)}: refused`);
  };
  for (const action of message.actions) {
    switch (action.kind) {
      case 'transfer-sol':
        toCold(action.to, 'a SOL transfer', plan.to);
        from(action.from, 'the SOL sender').sol += action.lamports;
        break;
      case 'create-ata':
        if (action.payer !== feePayer) throw new UsageError(`${at}: the cold token account is paid by ${short(action.payer)}, not the fee payer`);
        toCold(action.owner, 'a token account created', plan.to);
        toCold(action.ata, 'a token account created', associatedTokenAddress(plan.to, action.mint, action.tokenProgram));
        break;
      case 'transfer-token': {
        toCold(action.destination, 'a token transfer', associatedTokenAddress(plan.to, action.mint, action.program));
        const m = from(action.authority, 'the token owner');
        m.tokens.set(action.mint, (m.tokens.get(action.mint) ?? 0n) + action.amount);
        break;
      }
      case 'close-account':
        if (plan.kind === 'refund') throw new UsageError(`${at}: a refund closes no token account: refused`);
        toCold(action.destination, 'a closed token account\'s rent', plan.to);
        from(action.owner, 'the token account owner');
        break;
      case 'compute-limit':
      case 'compute-price':
        // The planners set no priority fee; a plan that does was not made by them.
        throw new UsageError(`${at}: a compute-budget instruction, which the planner never writes: refused`);
    }
  }
}

/** The totals signed per deposit must be the plan's summary: every token move exactly, SOL no more than shown. */
function compareWithSummary(plan: SweepPlan, moved: Map<string, Moved>): void {
  for (const deposit of plan.deposits) {
    const m = moved.get(deposit.address) ?? { sol: 0n, tokens: new Map<string, bigint>() };
    const shownSol = BigInt(deposit.moves.find((h) => h.token === null)?.amount ?? '0');
    if (m.sol > shownSol) throw new UsageError(`deposit ${short(deposit.address)}: the transactions send ${m.sol} lamports, the summary shows ${shownSol}: refused`);
    const shown = new Map(deposit.moves.filter((h) => h.token !== null).map((h) => [h.token!, BigInt(h.amount)]));
    for (const mint of new Set([...shown.keys(), ...m.tokens.keys()])) {
      if ((shown.get(mint) ?? 0n) !== (m.tokens.get(mint) ?? 0n)) {
        throw new UsageError(`deposit ${short(deposit.address)}: the transactions move ${m.tokens.get(mint) ?? 0n} of mint ${short(mint)}, the summary shows ${shown.get(mint) ?? 0n}: refused`);
      }
    }
  }
  for (const address of moved.keys()) if (!plan.deposits.some((d) => d.address === address)) throw new UsageError(`${short(address)} sends funds but is not a deposit of the plan`);
}

/** A refund moves one coin from one deposit, exactly the summary's amount, which is the refund's (less the fee for SOL). */
function compareWithRefund(plan: SweepPlan, moved: Map<string, Moved>): void {
  const refund = plan.refund;
  const [deposit, ...more] = plan.deposits;
  if (!refund || !deposit || more.length > 0) throw new UsageError('a refund plan names its refund and exactly one deposit: refused');
  const m = moved.get(deposit.address) ?? { sol: 0n, tokens: new Map<string, bigint>() };
  const [move, ...extra] = deposit.moves;
  if (!move || extra.length > 0 || move.token !== refund.token) throw new UsageError(`the refund's summary moves other coins than its ${refund.symbol}: refused`);
  const shown = BigInt(move.amount);
  const asked = BigInt(refund.amount);
  if (refund.token === null) {
    if (m.tokens.size > 0 || m.sol !== shown) throw new UsageError(`the transactions send ${m.sol} lamports and ${m.tokens.size} tokens, the refund's summary shows ${shown} lamports only: refused`);
    if (shown !== asked && shown !== asked - BigInt(deposit.fee)) throw new UsageError(`the refund is ${asked} lamports, the summary sends ${shown} with a fee of ${deposit.fee}: refused`);
  } else if (m.sol !== 0n || m.tokens.size !== 1 || m.tokens.get(refund.token) !== asked || shown !== asked) {
    throw new UsageError(`the refund is ${asked} of mint ${short(refund.token)}; the transactions move ${m.tokens.get(refund.token) ?? 0n} and ${m.sol} lamports, the summary ${shown}: refused`);
  }
}

/** The wire form: compact-u16 signature count, the signatures in signer order, the message. */
function wire(signatures: Uint8Array[], message: Uint8Array): Uint8Array {
  if (signatures.length > 127) throw new UsageError('more than 127 signers in one transaction');
  const out = new Uint8Array(1 + 64 * signatures.length + message.length);
  out[0] = signatures.length;
  for (const [i, s] of signatures.entries()) out.set(s, 1 + 64 * i);
  out.set(message, 1 + 64 * signatures.length);
  return out;
}

function sign(plan: SweepPlan, keys: ReadonlyMap<string, SweepKey>): SignedSweepTx[] {
  if (plan.family !== 'solana') throw new UsageError(`this is a ${plan.family} plan, not a Solana one`);
  const moved = new Map<string, Moved>();
  const decoded = plan.transactions.map((tx) => {
    const parsed = SolanaSweepPayloadSchema.safeParse(tx.payload);
    if (!parsed.success) throw new UsageError(`plan ${tx.id}: not a Solana sweep payload (${parsed.error.issues[0]?.message ?? 'unexpected shape'})`);
    const bytes = new Uint8Array(Buffer.from(parsed.data.message, 'base64'));
    const message = readSweepMessage(bytes, `plan ${tx.id}`);
    if (message.blockhash !== parsed.data.blockhash) throw new UsageError(`plan ${tx.id}: the payload's blockhash is not the message's`);
    check(plan, tx.id, tx.deposits, tx.signers, message, moved);
    return { tx, bytes, message };
  });
  compareWithSummary(plan, moved);
  if (plan.kind === 'refund') compareWithRefund(plan, moved);
  return decoded.map(({ tx, bytes, message }) => {
    const signatures = message.signers.map((signer) => {
      const key = keys.get(signer);
      if (!key) throw new UsageError(`plan ${tx.id}: no key for ${short(signer)}, which must sign`);
      if (encodeBase58(ed25519PublicKey(key.privateKey)) !== signer) throw new UsageError(`plan ${tx.id}: the key given for ${short(signer)} is another account's`);
      return ed25519Sign(key.privateKey, bytes);
    });
    return { id: tx.id, raw: Buffer.from(wire(signatures, bytes)).toString('base64'), txid: encodeBase58(signatures[0]!) };
  });
}

export const solanaSweepSigner: FamilySweepSigner = { deriveKey, sign };
