// The one interface every chain family's reader implements (src/families/<family>/), and the
// factory that connects one (src/families/families.ts lists them).

import type { ResolvedNetwork } from '../chains/registry.ts';
import type { Config } from '../config/schema.ts';
import type { Logger } from '../logger.ts';
import { ChainError } from '../domain/errors.ts';

/**
 * Opens a family's reader for one network. It checks at start that the endpoint serves the
 * configured network (chain id, genesis) and the methods the reader needs, refusing with one clear
 * UsageError that names the config key, so an indexer never credits payments from the wrong network.
 */
export type SourceFactory = (network: ResolvedNetwork, config: Config, log: Logger) => Promise<ChainSource>;

export interface BlockRef {
  number: bigint;
  hash: string;
  parentHash: string;
  /** Unix seconds. */
  timestamp: number;
}

export interface SeenTransfer {
  txHash: string;
  /** Log index; output index on UTXO chains; -1 a native transfer; -1 - n the n-th traced internal transfer. */
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  blockTime: number;
  from: string | null;
  to: string;
  /** Token contract; null for the native coin. */
  token: string | null;
  amount: bigint;
  kind: 'native' | 'token' | 'trace' | 'contract';
  /** Payment-contract events carry the payment's externalId. */
  externalId?: string;
  reverted: boolean;
  /** Why a reverted transfer was not credited, in the chain's own terms (e.g. "bounced: the deposit is not deployed"); recorded as its note. */
  revertReason?: string;
  /**
   * Value that did arrive but that the chain's own rules say is no payment (e.g. the TON attached to a
   * jetton notification): recorded NOT_CREDITED with this note, whatever coin the payment takes.
   */
  notCreditedReason?: string;
}

export interface WatchSet {
  /** Deposit addresses exactly as the pool stores them; each reader normalises for its chain. */
  addresses: Set<string>;
  paymentContract: string | null;
}

export interface RangeResult {
  blocks: BlockRef[];
  transfers: SeenTransfer[];
  /**
   * The last height this result covers, when a reader had to stop short of the requested `to`
   * (e.g. Solana's -32004 above the finalized slot: commit what was read, resume there later).
   * Absent means the whole range was read.
   */
  through?: bigint;
  /**
   * The blocks are not every block of the range (a reader that asks per address): they stamp
   * times only; no parent linkage is checked between them or to the stored tip.
   */
  sparse?: boolean;
}

export interface ChainSource {
  head(): Promise<bigint>;
  /**
   * The newest height the node calls final (EVM `finalized` tag, java-tron's solidified block,
   * Solana's finalized slot, TON's masterchain-committed block), or null where the chain or the
   * node has no such signal. Completion waits for it, with the confirmation count as a floor.
   */
  finalized?(): Promise<bigint | null>;
  /** The canonical block at that height, or null when the chain is not that long (any more). */
  blockAt(n: bigint): Promise<BlockRef | null>;
  fetchRange(from: bigint, to: bigint, watch: WatchSet): Promise<RangeResult>;
  /**
   * One transaction as its receipt shows it, for a buyer's claim that it paid through the payment
   * contract (POST /checkout/…/confirm); null while it is not mined. Only families with a payment
   * contract have it (EVM). A node that cannot be reached or answers garbage is a ChainError
   * (MalformedAnswerError for garbage), after one attempt: the buyer retries, not the reader.
   */
  receipt?(txHash: string, paymentContract: string): Promise<ClaimedReceipt | null>;
  close(): void;
}

/** A transaction read for a buyer's claim (ChainSource.receipt). */
export interface ClaimedReceipt {
  txHash: string;
  /** False: the transaction reverted on chain. */
  succeeded: boolean;
  /** The transaction called the payment contract itself. */
  calledContract: boolean;
  blockNumber: bigint;
  blockHash: string;
  /**
   * The payment contract's payment events in it, read exactly as fetchRange reads them (kind
   * 'contract', externalId set), so a claim and the indexer's later sighting are the same transfer.
   * A receipt carries no block time.
   */
  payments: Omit<SeenTransfer, 'blockTime'>[];
}

/** A ChainSource's receipt capability alone: what serve holds for one claim. */
export type ReceiptReader = Required<Pick<ChainSource, 'receipt' | 'close'>>;

/** The family's reader of claims for one network, without the indexer's start-up checks. */
export type ReceiptReaderFactory = (network: ResolvedNetwork, log: Logger) => ReceiptReader;

/** The node answered, but not in the shape the method promises. */
export class MalformedAnswerError extends ChainError {
  override readonly name = 'MalformedAnswerError';
}

/** A block changed under us while a range was being read; the caller re-checks the chain and retries. */
/** The node does not offer a method the reader needs (or refuses its parameters): retrying cannot help. */
export class RpcUnsupportedError extends ChainError {
  override readonly name = 'RpcUnsupportedError';
}

export class ReorgDuringFetch extends ChainError {
  override readonly name = 'ReorgDuringFetch';
}

/** Throws ReorgDuringFetch unless every block of a range extends the one before it. */
export function assertLinked(blocks: BlockRef[]): void {
  for (let i = 1; i < blocks.length; i++) {
    if (blocks[i]!.parentHash !== blocks[i - 1]!.hash) throw new ReorgDuringFetch(`block ${blocks[i]!.number} does not extend ${blocks[i - 1]!.number}`);
  }
}
