import type { EntityManager } from '@mikro-orm/sql';
import { IndexedBlock } from '../db/entities/indexed-block.entity.ts';
import { IndexerCursor } from '../db/entities/indexer-cursor.entity.ts';
import { ObservedTransfer, type TransferStatus } from '../db/entities/observed-transfer.entity.ts';
import { Payment } from '../db/entities/payment.entity.ts';
import type { Database } from '../db/orm.ts';
import { applyConfirmations, failPayment, recomputeCredit } from '../db/payment-transitions.ts';
import { inTransaction } from '../db/transaction.ts';
import type { BlockRef, SeenTransfer, WatchSet } from './source.ts';

export interface ChainKey {
  chain: string;
  network: string;
  isTestnet: boolean;
}

const LIVE = ['PENDING', 'PROCESSING', 'CONFIRMING'] as const;

/** Addresses still worth watching: live payments, and settled or expired ones for a while (late/extra funds). */
export async function loadWatchSet(db: Database, key: ChainKey, paymentContract: string | null, lateWatchMs: number, now = new Date()): Promise<WatchSet> {
  const rows = await db.em().find(
    Payment,
    {
      blockchain: key.chain,
      isTestnet: key.isTestnet,
      paymentType: 'DIRECT',
      $or: [{ status: { $in: [...LIVE] } }, { updatedAt: { $gte: new Date(now.getTime() - lateWatchMs) } }],
    },
    { fields: ['address'] },
  );
  return { addresses: new Set(rows.map((p) => p.address)), paymentContract };
}

export async function readCursor(db: Database, key: ChainKey): Promise<IndexerCursor | null> {
  return db.em().findOne(IndexerCursor, { chain: key.chain, network: key.network });
}

function sameAddress(a: string | null | undefined, b: string | null | undefined): boolean {
  return (a ?? '').toLowerCase() === (b ?? '').toLowerCase();
}

async function findPayment(em: EntityManager, key: ChainKey, t: SeenTransfer): Promise<Payment | null> {
  if (t.kind === 'contract') {
    if (!t.externalId) return null;
    return em.findOne(Payment, { externalId: t.externalId, blockchain: key.chain, isTestnet: key.isTestnet, paymentType: 'SMART_CONTRACT' });
  }
  const candidates = await em.find(Payment, { blockchain: key.chain, isTestnet: key.isTestnet, paymentType: 'DIRECT', address: t.to });
  return candidates[0] ?? null;
}

/** What a transfer means for its payment (spec rules 10 and 12: amounts never block; late funds are not credited). */
export function classify(t: SeenTransfer, payment: Payment | null): { status: TransferStatus; note: string | null } {
  if (!payment) return { status: 'UNMATCHED', note: 'no payment uses this address or externalId' };
  if (t.reverted) return { status: 'REVERTED', note: 'transaction reverted on chain' };
  const coinMatches = t.token === null ? payment.tokenAddress === null || payment.tokenAddress === undefined : sameAddress(t.token, payment.tokenAddress);
  if (!coinMatches) {
    return { status: 'NOT_CREDITED', note: t.token ? `token ${t.token} is not the registry's ${payment.cryptoCurrency} contract` : `native coin sent to a ${payment.cryptoCurrency} payment` };
  }
  if (payment.status === 'COMPLETED') return { status: 'EXTRA', note: 'arrived after the payment completed' };
  if (payment.status === 'PENDING' && t.blockTime * 1000 > payment.expiresAt.getTime()) return { status: 'LATE', note: 'sent after the payment window closed' };
  if ((LIVE as readonly string[]).includes(payment.status)) return { status: 'CREDITED', note: null };
  return { status: 'LATE', note: `payment is ${payment.status}` };
}

/**
 * Writes one processed block range in a single transaction: every observed transfer (unique per
 * chain + tx + log index, so a replay after a crash counts nothing twice), the credits and state
 * changes they cause, the unfinalized-window block hashes and the cursor.
 */
export async function applyRange(
  db: Database,
  key: ChainKey,
  range: { blocks: BlockRef[]; transfers: SeenTransfer[]; windowSize: number; leaseOwner: string; to: bigint },
  now = new Date(),
): Promise<{ credited: number; recorded: number }> {
  return inTransaction(db, async (em) => {
    // Fencing: only the lease holder may write; a process that lost its lease rolls back here.
    const fenced = await em.nativeUpdate(IndexerCursor, { chain: key.chain, network: key.network, leaseOwner: range.leaseOwner }, { updatedAt: now });
    if (fenced === 0) throw new LeaseLostError(`${key.chain} ${key.network}: this indexer no longer holds the lease`);
    let credited = 0;
    let recorded = 0;
    const touched = new Set<string>();
    for (const t of range.transfers) {
      const existing = await em.findOne(ObservedTransfer, { chain: key.chain, network: key.network, txHash: t.txHash, logIndex: t.logIndex });
      if (existing && existing.status !== 'REORGED') continue;
      const payment = await findPayment(em, key, t);
      const { status, note } = classify(t, payment);
      const fields = {
        blockNumber: t.blockNumber.toString(),
        blockHash: t.blockHash,
        fromAddress: t.from,
        toAddress: t.to,
        tokenAddress: t.token,
        symbol: payment && status !== 'UNMATCHED' && status !== 'NOT_CREDITED' ? payment.cryptoCurrency : null,
        amount: t.amount.toString(),
        paymentId: payment?.id ?? null,
        status,
        note,
      };
      if (existing) em.assign(existing, fields);
      else em.create(ObservedTransfer, { chain: key.chain, network: key.network, txHash: t.txHash, logIndex: t.logIndex, ...fields });
      recorded++;
      if (status === 'CREDITED') {
        credited++;
        touched.add(payment!.id);
      }
      if (status === 'REVERTED' && payment && (LIVE as readonly string[]).includes(payment.status)) {
        await em.flush();
        const creditedBefore = await em.count(ObservedTransfer, { paymentId: payment.id, status: 'CREDITED' });
        if (creditedBefore === 0) await failPayment(em, payment.id, `transaction ${t.txHash} reverted on chain`, now);
      }
    }
    await em.flush();
    for (const paymentId of touched) await recomputeCredit(em, paymentId, now);

    for (const b of range.blocks) {
      await em.nativeDelete(IndexedBlock, { chain: key.chain, network: key.network, number: b.number.toString() });
      em.create(IndexedBlock, { chain: key.chain, network: key.network, number: b.number.toString(), hash: b.hash, parentHash: b.parentHash });
    }
    // The cursor moves to the end of the range even where the range ended in heights without a
    // block (skipped slots); its hash is that of the newest real block.
    const last = range.blocks.at(-1);
    if (last) await em.nativeDelete(IndexedBlock, { chain: key.chain, network: key.network, number: { $lt: (last.number - BigInt(range.windowSize)).toString() } });
    await em.nativeUpdate(IndexerCursor, { chain: key.chain, network: key.network }, { blockNumber: range.to.toString(), ...(last ? { blockHash: last.hash } : {}), updatedAt: now });
    await em.flush();
    return { credited, recorded };
  });
}

/** Confirmations = head - block + 1 for every payment in flight on this chain and network. */
export async function updateConfirmations(db: Database, key: ChainKey, head: bigint, now = new Date()): Promise<void> {
  const inFlight = await db.em().find(Payment, { blockchain: key.chain, isTestnet: key.isTestnet, status: { $in: ['PROCESSING', 'CONFIRMING'] } }, { fields: ['id'] });
  for (const p of inFlight) await inTransaction(db, (em) => applyConfirmations(em, p.id, head, now));
}

export class LeaseLostError extends Error {
  override readonly name = 'LeaseLostError';
}

export class DeepReorgError extends Error {
  override readonly name = 'DeepReorgError';
}

/**
 * Undo everything above `forkPoint`: transfers there are marked REORGED and un-credited, their
 * payments recomputed (back to PENDING when nothing is left), window blocks dropped, and the
 * cursor moved back. A completed payment losing funds means the reorg was deeper than finality:
 * that stops the indexer loudly instead of guessing.
 */
export async function rollbackTo(db: Database, key: ChainKey, fork: BlockRef, now = new Date()): Promise<string[]> {
  return inTransaction(db, async (em) => {
    const dropped = await em.find(IndexedBlock, { chain: key.chain, network: key.network, number: { $gt: fork.number.toString() } }, { fields: ['number'] });
    const numbers = dropped.map((b) => String(b.number));
    const above = numbers.length
      ? await em.find(ObservedTransfer, { chain: key.chain, network: key.network, status: { $ne: 'REORGED' }, blockNumber: { $in: numbers } })
      : [];
    const payments = new Set(above.filter((t) => t.status === 'CREDITED' && t.paymentId).map((t) => t.paymentId!));
    for (const id of payments) {
      const p = await em.findOneOrFail(Payment, { id });
      if (p.status === 'COMPLETED') {
        throw new DeepReorgError(`reorg below block ${fork.number} removes funds of COMPLETED payment ${id}: deeper than the required confirmations`);
      }
    }
    for (const t of above) {
      t.status = 'REORGED';
      t.note = `block ${t.blockNumber} left the canonical chain`;
    }
    await em.flush();
    for (const id of payments) await recomputeCredit(em, id, now);
    await em.nativeDelete(IndexedBlock, { chain: key.chain, network: key.network, number: { $gt: fork.number.toString() } });
    await em.nativeUpdate(IndexerCursor, { chain: key.chain, network: key.network }, { blockNumber: fork.number.toString(), blockHash: fork.hash, updatedAt: now });
    return [...payments];
  });
}
