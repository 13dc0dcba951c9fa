import type { EntityManager } from '@mikro-orm/sql';
import { IndexedBlock } from '../db/entities/indexed-block.entity.ts';
import { IndexerCursor } from '../db/entities/indexer-cursor.entity.ts';
import { ObservedTransfer } from '../db/entities/observed-transfer.entity.ts';
import { Payment } from '../db/entities/payment.entity.ts';
import type { Database } from '../db/orm.ts';
import { applyDepth, failPayment, recomputeCredit, type DepthContext } from '../db/payment-transitions.ts';
import { inTransaction } from '../db/transaction.ts';
import { emitPaymentEvent, markReorged } from '../db/lifecycle.ts';
import { classifyTransfer, IN_FLIGHT_PAYMENT_STATUSES, isInFlight, type Classification } from '../domain/lifecycle.ts';
import { formatUnits } from '../domain/money.ts';
import type { BlockRef, SeenTransfer } from '../families/source.ts';
import { BaseError, ChainError } from '../domain/errors.ts';

// The ledger: the only writer of chain facts. It is a deterministic function of the chain. Each
// range is applied block by block, in chain order; before a block's transfers are judged, the
// payments they touch are brought to the height just below, and after them to that height; the
// rest are brought to the range's end. So an indexer that was down, read the history in other
// range sizes or was killed mid-way credits, confirms and completes exactly what a live one did,
// with the same timestamps (block times) and events.

export interface ChainKey {
  chain: string;
  network: string;
  isTestnet: boolean;
}

export async function readCursor(db: Database, key: ChainKey): Promise<IndexerCursor | null> {
  return db.em().findOne(IndexerCursor, { chain: key.chain, network: key.network });
}

async function findPayment(em: EntityManager, key: ChainKey, t: SeenTransfer): Promise<Payment | null> {
  if (t.kind === 'contract') {
    if (!t.externalId) return null;
    return em.findOne(Payment, { externalId: t.externalId, blockchain: key.chain, isTestnet: key.isTestnet, paymentType: 'SMART_CONTRACT' });
  }
  return em.findOne(Payment, { blockchain: key.chain, isTestnet: key.isTestnet, paymentType: 'DIRECT', address: t.to });
}

/** What a transfer means for its payment (pure rules in src/domain/lifecycle.ts). */
export function classify(t: SeenTransfer, payment: Payment | null): Classification {
  // The reader knows this value is no payment: never credited, even to a payment in that coin.
  if (payment && !t.reverted && t.notCreditedReason) return { status: 'NOT_CREDITED', note: t.notCreditedReason, lateReason: null };
  return classifyTransfer(t, payment ? {
    status: payment.status,
    tokenAddress: payment.tokenAddress ?? null,
    cryptoCurrency: payment.cryptoCurrency,
    expiresAt: payment.expiresAt,
    requiredConfirmations: payment.requiredConfirmations,
    lastCreditBlock: payment.blockNumber === null || payment.blockNumber === undefined ? null : BigInt(payment.blockNumber),
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

/**
 * Writes one processed block range in a single transaction: every observed transfer (unique per
 * chain + tx + log index, so a replay after a crash counts nothing twice), the credits and state
 * changes they cause, the unfinalized-window block hashes and the cursor.
 */
export async function applyRange(db: Database, key: ChainKey, range: RangeInput): Promise<{ credited: number; recorded: number; reorged: number }> {
  return inTransaction(db, async (em) => {
    // Fencing: only the lease holder may write; a process that lost its lease rolls back here.
    const fenced = await em.nativeUpdate(IndexerCursor, { chain: key.chain, network: key.network, leaseOwner: range.leaseOwner }, { updatedAt: new Date() });
    if (fenced === 0) throw new LeaseLostError(`${key.chain} ${key.network}: this indexer no longer holds the lease`);
    const cursor = await em.findOneOrFail(IndexerCursor, { chain: key.chain, network: key.network });
    const depth = depthContext(em, key, range, cursor);

    const reorged = await dropClaimsOffChain(em, key, range);
    let credited = 0;
    let recorded = 0;
    const sorted = [...range.transfers].sort(chainOrder);
    for (let i = 0; i < sorted.length; ) {
      const height = sorted[i]!.blockNumber;
      const touched = new Map<string, Payment>();
      for (; i < sorted.length && sorted[i]!.blockNumber === height; i++) {
        const t = sorted[i]!;
        const existing = await em.findOne(ObservedTransfer, { chain: key.chain, network: key.network, txHash: t.txHash, logIndex: t.logIndex });
        if (existing && existing.status !== 'REORGED') {
          // Already recorded: a replay after a crash, or a /confirm claim the chain now bears out.
          if (existing.status === 'CREDITED' && existing.paymentId) touched.set(existing.paymentId, await em.findOneOrFail(Payment, { id: existing.paymentId }));
          continue;
        }
        const payment = await findPayment(em, key, t);
        if (payment && !touched.has(payment.id)) await applyDepth(em, payment, { ...depth, at: height - 1n });
        const verdict = classify(t, payment);
        const fields = {
          blockNumber: t.blockNumber.toString(),
          blockHash: t.blockHash,
          fromAddress: t.from,
          toAddress: t.to,
          tokenAddress: t.token,
          symbol: payment && verdict.status !== 'UNMATCHED' && verdict.status !== 'NOT_CREDITED' ? payment.cryptoCurrency : null,
          amount: t.amount.toString(),
          paymentId: payment?.id ?? null,
          status: verdict.status,
          note: verdict.note,
        };
        if (existing) em.assign(existing, fields);
        else em.create(ObservedTransfer, { chain: key.chain, network: key.network, txHash: t.txHash, logIndex: t.logIndex, ...fields });
        await em.flush();
        recorded++;
        if (!payment) continue;
        const at = blockTimeDate(t.blockTime);
        if (verdict.status === 'CREDITED') {
          credited++;
          touched.set(payment.id, await recomputeCredit(em, payment.id, at));
        } else if (verdict.status === 'REVERTED' && isInFlight(payment.status) && payment.transactionHash === t.txHash) {
          // Only the transaction the payment is matched with can fail it (spec: PROCESSING or
          // CONFIRMING -> FAILED). A reverted or bounced transfer to a PENDING payment is recorded
          // and nothing else: anyone can send one, and failing the payment would turn the buyer's
          // real transfer into late funds.
          await failPayment(em, payment.id, `transaction ${t.txHash} reverted on chain`, at);
        }
        if (verdict.lateReason) {
          await em.refresh(payment);
          await emitPaymentEvent(em, payment, 'payment.late_funds', at, {
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
      for (const payment of touched.values()) await applyDepth(em, payment, { ...depth, at: height });
    }

    // Everything still in flight on this chain, at the height now processed.
    const inFlight = await em.find(Payment, { blockchain: key.chain, isTestnet: key.isTestnet, status: { $in: [...IN_FLIGHT_PAYMENT_STATUSES] } });
    for (const payment of inFlight) await applyDepth(em, payment, { ...depth, at: range.to });

    for (const b of range.blocks) {
      await em.nativeDelete(IndexedBlock, { chain: key.chain, network: key.network, number: b.number.toString() });
      em.create(IndexedBlock, { chain: key.chain, network: key.network, number: b.number.toString(), hash: b.hash, parentHash: b.parentHash, timestamp: String(b.timestamp) });
    }
    // The cursor moves to the end of the range even where the range ended in heights without a
    // block (skipped slots); its hash and time are those of the newest real block.
    const last = range.blocks.at(-1);
    if (last) await em.nativeDelete(IndexedBlock, { chain: key.chain, network: key.network, number: { $lt: (last.number - BigInt(range.windowSize)).toString() } });
    await em.nativeUpdate(
      IndexerCursor,
      { chain: key.chain, network: key.network },
      { blockNumber: range.to.toString(), ...(last ? { blockHash: last.hash, blockTime: String(last.timestamp) } : {}), updatedAt: new Date() },
    );
    await em.flush();
    return { credited, recorded, reorged };
  });
}

/** Block times for completion stamps: from the range, else the stored window, else the cursor's. */
function depthContext(em: EntityManager, key: ChainKey, range: RangeInput, cursor: IndexerCursor): Omit<DepthContext, 'at'> {
  const sortedBlocks = [...range.blocks].sort((a, b) => (a.number < b.number ? -1 : a.number > b.number ? 1 : 0));
  return {
    finalized: range.finalized,
    async timeOf(height) {
      // The first real block at or above the height (a skipped slot has no time of its own).
      const inRange = sortedBlocks.find((b) => b.number >= height);
      if (inRange && (height >= range.from || sortedBlocks[0]!.number === height)) return blockTimeDate(inRange.timestamp);
      const [stored] = await em.find(
        IndexedBlock,
        { chain: key.chain, network: key.network, number: { $gte: height.toString() }, timestamp: { $ne: null } },
        { orderBy: { number: 'asc' }, limit: 1 },
      );
      if (stored?.timestamp) return blockTimeDate(BigInt(stored.timestamp));
      if (inRange) return blockTimeDate(inRange.timestamp);
      return cursor.blockTime ? blockTimeDate(BigInt(cursor.blockTime)) : new Date();
    },
  };
}

/**
 * Transfers recorded at these heights whose block is not the one the chain now has there: /confirm
 * claims (the buyer's node answered from a block that later left the chain, or never was
 * canonical) and leftovers of an earlier fork. They are un-credited before anything completes.
 */
async function dropClaimsOffChain(em: EntityManager, key: ChainKey, range: RangeInput): Promise<number> {
  const canonical = new Map(range.blocks.map((b) => [b.number.toString(), b.hash]));
  const heights: string[] = [];
  for (let n = range.from; n <= range.to; n++) heights.push(n.toString());
  if (heights.length === 0) return 0;
  const rows = await em.find(ObservedTransfer, { chain: key.chain, network: key.network, status: { $ne: 'REORGED' }, blockNumber: { $in: heights } });
  // Only heights whose block this range holds: a reader that skips heights (skipped slots, per-address reads) says nothing of the others.
  const stale = rows.filter((r) => canonical.has(r.blockNumber) && canonical.get(r.blockNumber) !== r.blockHash);
  const payments = new Set(stale.filter((r) => r.status === 'CREDITED' && r.paymentId).map((r) => r.paymentId!));
  markReorged(stale, (r) => `block ${r.blockNumber} ${r.blockHash.slice(0, 18)}… is not in the canonical chain`);
  await em.flush();
  const at = range.blocks[0] ? blockTimeDate(range.blocks[0].timestamp) : new Date();
  for (const id of payments) await recomputeCredit(em, id, at);
  return stale.length;
}

/** Whether a block a /confirm receipt names is the one the indexer holds at that height. */
export async function claimIsOffChain(em: EntityManager, key: Pick<ChainKey, 'chain' | 'network'>, blockNumber: bigint, blockHash: string): Promise<boolean> {
  const stored = await em.findOne(IndexedBlock, { chain: key.chain, network: key.network, number: blockNumber.toString() });
  return stored !== null && stored.hash.toLowerCase() !== blockHash.toLowerCase();
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
  return inTransaction(db, async (em) => {
    // Heights from the fork point to the cursor (at most the window): block numbers are stored as strings.
    const cursor = await em.findOneOrFail(IndexerCursor, { chain: key.chain, network: key.network });
    const heights: string[] = [];
    for (let n = fork.number + 1n; n <= BigInt(cursor.blockNumber); n++) heights.push(n.toString());
    const dropped = heights.length ? await em.find(ObservedTransfer, { chain: key.chain, network: key.network, status: { $ne: 'REORGED' }, blockNumber: { $in: heights } }) : [];
    const payments = new Set(dropped.filter((t) => t.status === 'CREDITED' && t.paymentId).map((t) => t.paymentId!));
    for (const id of payments) {
      const p = await em.findOneOrFail(Payment, { id });
      if (p.status === 'COMPLETED') {
        throw new DeepReorgError(`reorg below block ${fork.number} removes funds of COMPLETED payment ${id}: deeper than the required confirmations`);
      }
    }
    markReorged(dropped, (t) => `block ${t.blockNumber} left the canonical chain`);
    await em.flush();
    const at = blockTimeDate(fork.timestamp);
    for (const id of payments) await recomputeCredit(em, id, at);
    await em.nativeDelete(IndexedBlock, { chain: key.chain, network: key.network, number: { $gt: fork.number.toString() } });
    await em.nativeUpdate(
      IndexerCursor,
      { chain: key.chain, network: key.network },
      { blockNumber: fork.number.toString(), blockHash: fork.hash, blockTime: String(fork.timestamp), updatedAt: new Date() },
    );
    return [...payments];
  });
}

/** Whether any payment of this chain is counting confirmations (or waiting for finality). */
export async function hasInFlight(db: Database, key: ChainKey): Promise<boolean> {
  return (await db.em().count(Payment, { blockchain: key.chain, isTestnet: key.isTestnet, status: { $in: [...IN_FLIGHT_PAYMENT_STATUSES] } })) > 0;
}

/**
 * Finality moved while no new block was read: payments whose required depth was already reached
 * complete now, stamped with the time that depth was reached.
 */
export async function applyFinality(db: Database, key: ChainKey, input: { leaseOwner: string; finalized: bigint }): Promise<void> {
  if (!(await hasInFlight(db, key))) return;
  await inTransaction(db, async (em) => {
    const fenced = await em.nativeUpdate(IndexerCursor, { chain: key.chain, network: key.network, leaseOwner: input.leaseOwner }, { updatedAt: new Date() });
    if (fenced === 0) throw new LeaseLostError(`${key.chain} ${key.network}: this indexer no longer holds the lease`);
    const cursor = await em.findOneOrFail(IndexerCursor, { chain: key.chain, network: key.network });
    const at = BigInt(cursor.blockNumber);
    const depth = depthContext(em, key, { from: at + 1n, to: at, blocks: [], transfers: [], windowSize: 0, leaseOwner: input.leaseOwner, finalized: input.finalized }, cursor);
    const inFlight = await em.find(Payment, { blockchain: key.chain, isTestnet: key.isTestnet, status: { $in: [...IN_FLIGHT_PAYMENT_STATUSES] } });
    for (const payment of inFlight) await applyDepth(em, payment, { ...depth, at });
  });
}
