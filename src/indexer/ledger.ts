import type { Executor } from '../store/executor.ts';
import {
  claimIsOffChain,
  cursorRow,
  dropBlocksAbove,
  fenceLease,
  findTransfer,
  hasInFlightPayment,
  inFlightPayments,
  moveCursor,
  paymentOfTransfer,
  storeBlocks,
  storedBlockTime,
  transfersAtHeights,
  type CursorRow,
} from '../store/ledger-rows.ts';
import type { Database } from '../store/orm.ts';
import { poolReader } from '../store/raw-sql.ts';
import { applyDepth, failPayment, recomputeCredit, type DepthContext } from '../store/payment-transitions.ts';
import { paymentById, type StoredPayment } from '../store/records.ts';
import { ownTransfer } from '../store/sweeps.ts';
import { emitPaymentEvent, markReorged, recordTransfer } from '../store/lifecycle.ts';
import { classifyTransfer, isInFlight, type Classification } from '../domain/lifecycle.ts';
import { formatUnits } from '../domain/money.ts';
import type { BlockRef, SeenTransfer } from '../families/source.ts';
import { BaseError, ChainError } from '../domain/errors.ts';

// The ledger: the only writer of chain facts. It is a deterministic function of the chain. Each
// range is applied block by block, in chain order; before a block's transfers are judged, the
// payments they touch are brought to the height just below, and after them to that height; the
// rest are brought to the range's end. So an indexer that was down, read the history in other
// range sizes or was killed mid-way credits, confirms and completes exactly what a live one did,
// with the same timestamps (block times) and events. Each range, rollback and finality step is one
// Database.write: every read it decides on goes through that write's executor, so it sees its own rows.

export interface ChainKey {
  chain: string;
  network: string;
  isTestnet: boolean;
}

/**
 * What a transfer means for its payment (pure rules in src/domain/lifecycle.ts). `own` says why it is
 * the deployment's own money (sent by one of its sweep or refund transactions, or by a plan's fee
 * payer): recorded OWN, never credited, never announced as late funds, never counted as received.
 */
export function classify(t: SeenTransfer, payment: StoredPayment | null, own: string | null = null): Classification {
  // The reader knows this value is no payment: never credited, even to a payment in that coin.
  if (payment && !t.reverted && t.notCreditedReason) return { status: 'NOT_CREDITED', note: t.notCreditedReason, lateReason: null };
  if (payment && !t.reverted && own !== null) return { status: 'OWN', note: own, lateReason: null };
  return classifyTransfer(t, payment ? {
    status: payment.status,
    tokenAddress: payment.tokenAddress,
    cryptoCurrency: payment.cryptoCurrency,
    expiresAt: payment.expiresAt,
    requiredConfirmations: payment.requiredConfirmations,
    lastCreditBlock: payment.blockNumber === null ? null : BigInt(payment.blockNumber),
  } : null);
}

const blockTimeDate = (seconds: number | bigint) => new Date(Number(seconds) * 1000);

function chainOrder(a: SeenTransfer, b: SeenTransfer): number {
  if (a.blockNumber !== b.blockNumber) return a.blockNumber < b.blockNumber ? -1 : 1;
  if (a.txHash !== b.txHash) return a.txHash < b.txHash ? -1 : 1;
  return a.logIndex - b.logIndex;
}

export interface RangeInput {
  /** First and last height this range covers (the last may be a skipped slot). */
  from: bigint;
  to: bigint;
  blocks: BlockRef[];
  transfers: SeenTransfer[];
  windowSize: number;
  leaseOwner: string;
  /** The node's finalized height at this tick, or null where the chain has no finality signal. */
  finalized: bigint | null;
}

const leaseLost = (key: ChainKey) => new LeaseLostError(`${key.chain} ${key.network}: this indexer no longer holds the lease`);

/**
 * Writes one processed block range in a single transaction: every observed transfer (unique per
 * chain + tx + log index, so a replay after a crash counts nothing twice), the credits and state
 * changes they cause, the unfinalized-window block hashes and the cursor.
 */
export async function applyRange(db: Database, key: ChainKey, range: RangeInput): Promise<{ credited: number; recorded: number; reorged: number }> {
  return db.write(async (x) => {
    // Fencing: only the lease holder may write; a process that lost its lease rolls back here.
    if (!(await fenceLease(x, key, range.leaseOwner))) throw leaseLost(key);
    const depth = depthContext(x, key, range, await cursorRow(x, key));

    const reorged = await dropClaimsOffChain(x, key, range);
    let credited = 0;
    let recorded = 0;
    const sorted = [...range.transfers].sort(chainOrder);
    for (let i = 0; i < sorted.length; ) {
      const height = sorted[i]!.blockNumber;
      const touched = new Set<string>();
      for (; i < sorted.length && sorted[i]!.blockNumber === height; i++) {
        const t = sorted[i]!;
        const existing = await findTransfer(x, key, t.txHash, t.logIndex);
        if (existing && existing.status !== 'REORGED') {
          // Already recorded: a replay after a crash, or a /confirm claim the chain now bears out.
          if (existing.status === 'CREDITED' && existing.paymentId) touched.add(existing.paymentId);
          continue;
        }
        let payment = await paymentOfTransfer(x, key, t);
        if (payment && !touched.has(payment.id)) {
          await applyDepth(x, payment.id, { ...depth, at: height - 1n });
          payment = await paymentById(x, payment.id);
        }
        const verdict = classify(t, payment, payment ? await ownTransfer(x, key, t.txHash, t.from) : null);
        await recordTransfer(
          x,
          {
            chain: key.chain,
            network: key.network,
            txHash: t.txHash,
            logIndex: t.logIndex,
            blockNumber: t.blockNumber.toString(),
            blockHash: t.blockHash,
            fromAddress: t.from,
            toAddress: t.to,
            tokenAddress: t.token,
            symbol: payment && verdict.status !== 'UNMATCHED' && verdict.status !== 'NOT_CREDITED' && verdict.status !== 'OWN' ? payment.cryptoCurrency : null,
            amount: t.amount.toString(),
            paymentId: payment?.id ?? null,
            status: verdict.status,
            note: verdict.note,
          },
          existing?.id ?? null,
        );
        recorded++;
        if (!payment) continue;
        const at = blockTimeDate(t.blockTime);
        if (verdict.status === 'CREDITED') {
          credited++;
          await recomputeCredit(x, payment.id, at);
          touched.add(payment.id);
        } else if (verdict.status === 'REVERTED' && isInFlight(payment.status) && payment.transactionHash === t.txHash) {
          // Only the transaction the payment is matched with can fail it (spec: PROCESSING or
          // CONFIRMING -> FAILED). A reverted or bounced transfer to a PENDING payment is recorded
          // and nothing else: anyone can send one, and failing the payment would turn the buyer's
          // real transfer into late funds.
          await failPayment(x, payment.id, `transaction ${t.txHash} reverted on chain`, at);
        }
        if (verdict.lateReason) {
          await emitPaymentEvent(x, payment.id, 'payment.late_funds', at, {
            transfer: {
              txHash: t.txHash,
              logIndex: t.logIndex,
              blockNumber: t.blockNumber.toString(),
              amount: formatUnits(t.amount, payment.decimals),
              reason: verdict.lateReason,
            },
          });
        }
      }
      for (const id of touched) await applyDepth(x, id, { ...depth, at: height });
    }

    // Everything still in flight on this chain, at the height now processed.
    for (const id of await inFlightPayments(x, key)) await applyDepth(x, id, { ...depth, at: range.to });

    await storeBlocks(x, key, range.blocks, range.windowSize);
    // The cursor moves to the end of the range even where the range ended in heights without a
    // block (skipped slots); its hash and time are those of the newest real block.
    await moveCursor(x, key, range.to, range.blocks.at(-1) ?? null);
    return { credited, recorded, reorged };
  });
}

/** A buyer's claim: one payment-contract event of a receipt, for the payment it names. */
export interface Claim {
  transfer: Omit<SeenTransfer, 'blockTime'>;
  paymentId: string;
  /** The payment's coin, recorded as the indexer records a credited transfer's. */
  symbol: string;
}

/**
 * Writes a buyer's claim (POST /checkout/…/confirm) in one transaction: the transfer recorded
 * CREDITED like applyRange records it (same unique row, so the indexer's later sighting adds
 * nothing) and the payment's credit recomputed at `at`. A claim, not a fact: the indexer re-checks
 * its block like any other and un-credits the transfer if it leaves the canonical chain before
 * completion. Returns null, writing nothing, when the ledger holds another block at that height.
 */
export async function applyClaim(db: Database, key: { chain: string; network: string }, claim: Claim, at: Date): Promise<StoredPayment | null> {
  const t = claim.transfer;
  return db.write(async (x) => {
    if (await claimIsOffChain(x, key, t.blockNumber, t.blockHash)) return null;
    if (!(await findTransfer(x, key, t.txHash, t.logIndex))) {
      await recordTransfer(x, {
        ...key,
        txHash: t.txHash,
        logIndex: t.logIndex,
        blockNumber: t.blockNumber.toString(),
        blockHash: t.blockHash,
        fromAddress: t.from,
        toAddress: t.to,
        tokenAddress: t.token,
        symbol: claim.symbol,
        amount: t.amount.toString(),
        paymentId: claim.paymentId,
        status: 'CREDITED',
        note: 'claimed by the buyer (/confirm); re-checked by the indexer',
      });
    }
    return recomputeCredit(x, claim.paymentId, at);
  });
}

/** Block times for completion stamps: from the range, else the stored window, else the cursor's. */
function depthContext(x: Executor, key: ChainKey, range: RangeInput, cursor: CursorRow): Omit<DepthContext, 'at'> {
  const sortedBlocks = [...range.blocks].sort((a, b) => (a.number < b.number ? -1 : a.number > b.number ? 1 : 0));
  return {
    finalized: range.finalized,
    async timeOf(height) {
      // The first real block at or above the height (a skipped slot has no time of its own).
      const inRange = sortedBlocks.find((b) => b.number >= height);
      if (inRange && (height >= range.from || sortedBlocks[0]!.number === height)) return blockTimeDate(inRange.timestamp);
      const stored = await storedBlockTime(x, key, height);
      if (stored !== null) return blockTimeDate(stored);
      if (inRange) return blockTimeDate(inRange.timestamp);
      return cursor.blockTime !== null ? blockTimeDate(cursor.blockTime) : new Date();
    },
  };
}

/**
 * Transfers recorded at these heights whose block is not the one the chain now has there: /confirm
 * claims (the buyer's node answered from a block that later left the chain, or never was
 * canonical) and leftovers of an earlier fork. They are un-credited before anything completes.
 */
async function dropClaimsOffChain(x: Executor, key: ChainKey, range: RangeInput): Promise<number> {
  // Only heights whose block this range holds: a reader that skips heights (skipped slots, per-address reads) says nothing of the others.
  const canonical = new Map(range.blocks.filter((b) => b.number >= range.from && b.number <= range.to).map((b) => [b.number.toString(), b.hash]));
  if (canonical.size === 0) return 0;
  const rows = await transfersAtHeights(x, key, [...canonical.keys()]);
  const stale = rows.filter((r) => canonical.get(r.blockNumber) !== r.blockHash);
  const payments = new Set(stale.filter((r) => r.status === 'CREDITED' && r.paymentId).map((r) => r.paymentId!));
  await markReorged(x, stale.map((r) => ({ id: r.id, note: `block ${r.blockNumber} ${r.blockHash.slice(0, 18)}… is not in the canonical chain` })));
  const at = range.blocks[0] ? blockTimeDate(range.blocks[0].timestamp) : new Date();
  for (const id of payments) await recomputeCredit(x, id, at);
  return stale.length;
}

export class LeaseLostError extends BaseError {
  override readonly name = 'LeaseLostError';
}

export class DeepReorgError extends ChainError {
  override readonly name = 'DeepReorgError';
}

/**
 * Undo everything above `forkPoint`: transfers there are marked REORGED and un-credited, their
 * payments recomputed (back to PENDING when nothing is left), window blocks dropped, and the
 * cursor moved back. A completed payment losing funds means the reorg was deeper than finality:
 * that stops the indexer loudly instead of guessing.
 */
export async function rollbackTo(db: Database, key: ChainKey, fork: BlockRef): Promise<string[]> {
  return db.write(async (x) => {
    // Heights from the fork point to the cursor (at most the window): block numbers are stored as strings.
    const cursor = await cursorRow(x, key);
    const heights: string[] = [];
    for (let n = fork.number + 1n; n <= BigInt(cursor.blockNumber); n++) heights.push(n.toString());
    const dropped = heights.length ? await transfersAtHeights(x, key, heights) : [];
    const payments = new Set(dropped.filter((t) => t.status === 'CREDITED' && t.paymentId).map((t) => t.paymentId!));
    for (const id of payments) {
      if ((await paymentById(x, id)).status === 'COMPLETED') {
        throw new DeepReorgError(`reorg below block ${fork.number} removes funds of COMPLETED payment ${id}: deeper than the required confirmations`);
      }
    }
    await markReorged(x, dropped.map((t) => ({ id: t.id, note: `block ${t.blockNumber} left the canonical chain` })));
    const at = blockTimeDate(fork.timestamp);
    for (const id of payments) await recomputeCredit(x, id, at);
    await dropBlocksAbove(x, key, fork.number);
    await moveCursor(x, key, fork.number, fork);
    return [...payments];
  });
}

/** Whether any payment of this chain is counting confirmations (or waiting for finality). */
export async function hasInFlight(db: Database, key: ChainKey): Promise<boolean> {
  return hasInFlightPayment(poolReader(db), key);
}

/**
 * Finality moved while no new block was read: payments whose required depth was already reached
 * complete now, stamped with the time that depth was reached.
 */
export async function applyFinality(db: Database, key: ChainKey, input: { leaseOwner: string; finalized: bigint }): Promise<void> {
  if (!(await hasInFlight(db, key))) return;
  await db.write(async (x) => {
    if (!(await fenceLease(x, key, input.leaseOwner))) throw leaseLost(key);
    const cursor = await cursorRow(x, key);
    const at = BigInt(cursor.blockNumber);
    const depth = depthContext(x, key, { from: at + 1n, to: at, blocks: [], transfers: [], windowSize: 0, leaseOwner: input.leaseOwner, finalized: input.finalized }, cursor);
    for (const id of await inFlightPayments(x, key)) await applyDepth(x, id, { ...depth, at });
  });
}
