import type { ResolvedNetwork } from '../chains/registry.ts';
import type { ChainFamily, ChainSlug } from '../chains/slugs.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../logger.ts';

// Money out (docs/sweeps.md): the server plans, an offline machine signs, the server broadcasts. A
// family takes part with three modules in its folder, each loaded only by the step that needs it:
//  - sweep-plan.ts   (server, network): live balances and fees, then unsigned transactions;
//  - sweep-sign.ts   (offline: no database, no network, no chain client): keys from the seed, signatures;
//  - sweep-send.ts   (server, network): broadcast and follow to finality.
// Amounts are atomic units as decimal strings in the files (JSON has no bigint) and bigint in code.

/** A pool address the plan may move funds out of, as the ledger knows it. */
export interface SweepCandidate {
  address: string;
  /** Child index `0/i` under the account key; null for addresses from a list file (the signer then searches). */
  derivationIndex: number | null;
  /** The pool's key source: an account key's fingerprint, or "file". */
  source: string;
}

/** One coin or token a deposit holds. `token` is the contract / mint / jetton master; null for the native coin. */
export interface Holding {
  symbol: string;
  token: string | null;
  decimals: number;
  /** Atomic units, decimal string. */
  amount: string;
}

/** What the plan does with one deposit, for the human summary and the signer's checks. */
export interface PlannedDeposit extends SweepCandidate {
  holdings: Holding[];
  /** What moves to the destination, per symbol (atomic, decimal string). */
  moves: Holding[];
  /** What its transactions can cost in fees, in the native coin (atomic), whoever pays (the deposit or the fee payer): the sum over the plan equals what the transactions' bytes allow (src/sweep/check-decoded.ts). */
  fee: string;
  /** What stays behind and why (dust, rent, a fee that would eat the amount); empty when nothing stays. */
  leftBehind: { holding: Holding; reason: string }[];
}

/** One unsigned transaction of a plan; `payload` is the family's own unsigned form (PSBT base64, an EIP-7702 tx request, …). */
export interface UnsignedSweepTx {
  /** Stable within the plan: "tx-0", "tx-1", … */
  id: string;
  /** Addresses whose keys must sign (deposits, and the fee payer where there is one). */
  signers: string[];
  /** Deposits this transaction empties (their addresses). */
  deposits: string[];
  /** Transactions that must be final before this one is sent (a gas top-up before the transfers it pays for). */
  after: string[];
  payload: unknown;
}

export interface SweepPlan {
  format: 'chaingate-sweep-plan/1';
  /** SHA-256 over the plan without this field, hex: what `signed.json` and the database refer to. */
  id: string;
  kind: 'sweep' | 'refund';
  chain: ChainSlug;
  family: ChainFamily;
  network: string;
  testnet: boolean;
  /** Destination of every move (the cold address). */
  to: string;
  feePayer: string | null;
  createdAt: string;
  deposits: PlannedDeposit[];
  /** Refund plans only: the payment refunded and what the refund covers of it (atomic, decimal string). */
  refund?: { paymentId: string; symbol: string; token: string | null; decimals: number; amount: string };
  /** Pool addresses left out of the plan, and why (leased, open payment, nothing to move, below --min). */
  skipped: { address: string; reason: string }[];
  transactions: UnsignedSweepTx[];
}

/** One signed transaction, ready to broadcast. */
export interface SignedSweepTx {
  id: string;
  /** The family's raw form: hex for EVM/Tron/bitcoin, base64 for Solana and TON. */
  raw: string;
  /** The transaction's hash as the chain's explorers show it. */
  txid: string;
}

export interface SignedSweep {
  format: 'chaingate-sweep-signed/1';
  planId: string;
  chain: ChainSlug;
  network: string;
  testnet: boolean;
  transactions: SignedSweepTx[];
}

/** Per-deposit keys the offline signer derived from the seed, checked against the plan's addresses. */
export interface SweepKey {
  address: string;
  /** 32-byte private key (secp256k1 or ed25519 seed, by family). */
  privateKey: Uint8Array;
}

/**
 * A refund (docs/refunds.md): a plan of kind "refund" has exactly one candidate (the payment's
 * deposit, or a merchant wallet address with `source: "wallet"` and no derivation index) and moves
 * exactly `amount` of one coin from it to `to` (the buyer). Nothing else on the address moves: every
 * other holding and the remainder stay (listed in `leftBehind`, reason "not refunded: …"), and a
 * later sweep takes them.
 *
 * The network fee: a fee payer pays it where the plan names one (as for sweeps); else the address
 * pays it in the native coin. When the coin refunded is the native coin and the address pays, the
 * fee comes out of what stays if that covers it (the buyer receives `amount`), otherwise out of the
 * refund itself (the buyer receives `amount − fee`; a full refund of a bitcoin deposit is the usual
 * case). Either way `amount` is what the refund covers of the payment: the planned deposit's `moves`
 * holds what the buyer receives and its `fee` what the address paid. A planner refuses (UsageError)
 * an address holding less than the refund, or too little native coin for its fee with no fee payer.
 */
export interface RefundAsk {
  symbol: string;
  /** Token contract / mint / jetton master; null for the native coin. */
  token: string | null;
  decimals: number;
  /** Atomic units taken off the address for the buyer. */
  amount: bigint;
}

/** sweep-plan.ts: reads live balances and fees through the family's endpoints, builds the unsigned transactions. */
export interface FamilySweepPlanner {
  plan(input: {
    network: ResolvedNetwork;
    config: Config;
    log: Logger;
    candidates: SweepCandidate[];
    to: string;
    feePayer: string | null;
    /** Per symbol: holdings below this (atomic) are left behind and said so. */
    min: Record<string, bigint>;
    /** Optional (bitcoin PSBT): the pool's account xpubs (a BIP84 and a BIP86 one for a mixed pool), so each input carries its BIP32 derivation for other signers (Sparrow, a hardware wallet). */
    accountKeys?: readonly string[];
    /** Optional (bitcoin PSBT): the master key's fingerprint (8 hex digits) those derivations start from, one for all the account keys. */
    masterFingerprint?: string | null;
    /** Set for a refund plan (see RefundAsk): one candidate, one exact move; unset for a sweep. */
    refund?: RefundAsk;
  }): Promise<Pick<SweepPlan, 'deposits' | 'skipped' | 'transactions'>>;
}

/** sweep-sign.ts: pure; given the seed-derived keys, signs every transaction of the plan or throws saying why. */
export interface FamilySweepSigner {
  /** The key of a deposit from the wallet seed: `index` when the pool derived it, else a search over the first `searchLimit` children. */
  deriveKey(seed: Uint8Array, candidate: SweepCandidate, plan: SweepPlan, searchLimit: number): SweepKey;
  /**
   * Optional, for families whose plans name a fee payer (EVM): its key from the same seed, which the
   * caller adds to `keys` beside the deposits' before `sign`; throws saying where it looked.
   */
  deriveFeePayerKey?(seed: Uint8Array, plan: SweepPlan, searchLimit: number): SweepKey;
  sign(plan: SweepPlan, keys: ReadonlyMap<string, SweepKey>): SignedSweepTx[];
  /** Optional: the key of a deposit from an account-level extended private key (xprv/zprv/tprv/vprv) instead of a seed. */
  deriveKeyFromAccount?(accountKey: string, candidate: SweepCandidate, plan: SweepPlan, searchLimit: number): SweepKey;
}

/** One value a transaction pays out: to whom, which coin, how much. */
export interface DecodedPay {
  /** The recipient, in the family's canonical address form (what validateAddress returns for the plan's network). */
  to: string;
  symbol: string;
  /** Token contract / mint / jetton master; null for the native coin. */
  token: string | null;
  decimals: number;
  /** Atomic units. */
  amount: bigint;
}

/**
 * What one transaction does, read from its bytes alone (never from the plan's summary fields):
 * the signer prints this, and the checks in src/sweep/check-decoded.ts compare it with the plan.
 */
export interface DecodedSweepTx {
  id: string;
  /** Accounts whose funds the transaction spends or whose signature it needs (deposits, fee payer), canonical form. */
  spends: string[];
  /** Every value it moves to another account: to the plan's destination, and internal moves (a gas top-up, a change output back to a deposit). */
  pays: DecodedPay[];
  /** The most it can cost in network fees, native atomic units (EVM gasLimit × maxFeePerGas, bitcoin inputs − outputs, …). */
  fee: bigint;
  /** Who pays that fee (canonical form). */
  feePaidBy: string;
  /** The chain the bytes commit to where the family's transactions carry one (EVM chain id, as a decimal string); null where they carry none. */
  chainId: string | null;
}

/** A signed transaction read from its raw bytes: its content, and the hash computed from them. */
export interface DecodedSignedTx extends DecodedSweepTx {
  /** The transaction's hash as computed from `raw` (bitcoin double-SHA256 of the non-witness serialisation, EVM keccak of the envelope, …). */
  txid: string;
}

/**
 * sweep-verify.ts: pure and offline (loaded by `sweep sign` and by `sweep broadcast`). Reads what a
 * transaction really does. Throws UsageError, with one line naming what is wrong, when the bytes are
 * not a transaction of this family, do not decode, or (signed) carry a signature that does not verify
 * against the accounts the unsigned transaction names.
 */
export interface FamilySweepVerifier {
  /** What the plan's unsigned transaction does, from its payload. */
  decodeUnsigned(plan: SweepPlan, tx: UnsignedSweepTx): DecodedSweepTx;
  /**
   * What a signed transaction does, from its raw bytes: its hash computed from them, every signature
   * verified against the key of the account it claims (`tx.signers`), and (families that can) that it
   * is the unsigned transaction `tx` signed: same inputs / nonce / blockhash / seqno, same outputs.
   */
  decodeSigned(plan: SweepPlan, tx: UnsignedSweepTx, raw: string): DecodedSignedTx;
}

/** sweep-send.ts: submits a signed transaction and tells where it stands. Sending the same raw twice is harmless. */
export interface FamilySweepSender {
  broadcast(network: ResolvedNetwork, config: Config, tx: SignedSweepTx): Promise<{ accepted: true } | { accepted: false; error: string }>;
  status(network: ResolvedNetwork, config: Config, txid: string): Promise<{ state: 'pending' | 'final' | 'failed' | 'unknown'; fee?: string; error?: string }>;
  /** Optional: before the first send, why the plan can no longer go through as signed (an input spent, a balance moved), or null. */
  stale?(network: ResolvedNetwork, config: Config, plan: SweepPlan): Promise<string | null>;
}
