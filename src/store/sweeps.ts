import { isLivePayment } from '../domain/lifecycle.ts';
import type { SweepTxStatus } from '../domain/sweep-lifecycle.ts';
import { newId } from '../domain/ids.ts';
import type { Executor, Reader } from './executor.ts';
import { reservedDeposits } from './plan-reservations.ts';
import { boolOf, dateOf, nullableDate } from './raw-sql.ts';

// Every statement sweeps need (docs/sweeps.md), in one place: which pool addresses a plan may
// empty, the plans and their transactions (their status is written by src/store/lifecycle.ts).

export interface PoolRef {
  chain: string;
  isTestnet: boolean;
}

export interface SweepCandidateRow {
  address: string;
  derivationIndex: number | null;
  source: string;
}

/**
 * The pool addresses a plan may empty: leased to a payment that has ended (COMPLETED, FAILED,
 * EXPIRED, REFUNDED) and in no sweep transaction still on its way. A FREE address was never given
 * to a buyer, and the indexers watch only leased ones, so the ledger knows of no funds on it: it is
 * left out without a word. An address whose payment is still live is named in `skipped`.
 */
export async function sweepCandidates(r: Reader, pool: PoolRef, now: Date): Promise<{ candidates: SweepCandidateRow[]; skipped: { address: string; reason: string }[] }> {
  const rows = await r.all<{ address: string; derivation_index: number | string | null; source: string; payment_status: string | null }>(
    `select w.address, w.derivation_index, w.source, p.status as payment_status
       from wallet_address w left join payment p on p.id = w.payment_id
      where w.chain = ? and w.is_testnet = ? and w.status = 'LEASED'
      order by w.derivation_index, w.created_at, w.id`,
    [pool.chain, pool.isTestnet],
  );
  const inFlight = await addressesInFlight(r, pool);
  const reserved = await reservedDeposits(r, pool, now);
  const candidates: SweepCandidateRow[] = [];
  const skipped: { address: string; reason: string }[] = [];
  for (const w of rows) {
    if (w.payment_status === null || isLivePayment(w.payment_status)) {
      skipped.push({ address: w.address, reason: `leased to an open payment (${w.payment_status ?? 'unknown'})` });
    } else if (inFlight.has(w.address)) {
      skipped.push({ address: w.address, reason: 'in a sweep transaction not yet final (run sweep broadcast)' });
    } else if (reserved.has(w.address)) {
      const held = reserved.get(w.address)!;
      skipped.push({ address: w.address, reason: `reserved by ${held.kind} plan ${held.planId.slice(0, 16)}… (broadcast it, or \`chaingate ${held.kind} cancel\`)` });
    } else {
      candidates.push({ address: w.address, derivationIndex: w.derivation_index === null ? null : Number(w.derivation_index), source: w.source });
    }
  }
  return { candidates, skipped };
}

/** Whether an address belongs to the pool (a sweep's destination must not). */
export async function isPoolAddress(r: Reader, pool: PoolRef, address: string): Promise<boolean> {
  return (await r.get('select 1 as x from wallet_address where chain = ? and is_testnet = ? and address = ?', [pool.chain, pool.isTestnet, address])) !== undefined;
}

/** Deposits of the pool in a sweep transaction that is signed or sent but not final. */
async function addressesInFlight(r: Reader, pool: PoolRef): Promise<Set<string>> {
  const rows = await r.all<{ deposits: string }>(
    `select deposits from sweep_tx where chain = ? and is_testnet = ? and status in ('SIGNED', 'SENT')`,
    [pool.chain, pool.isTestnet],
  );
  return new Set(rows.flatMap((r) => JSON.parse(r.deposits) as string[]));
}

export interface PlanRecord {
  id: string;
  chain: string;
  network: string;
  isTestnet: boolean;
  kind: string;
  toAddress: string;
  feePayer: string | null;
  body: string;
  /** Until when the plan, not yet broadcast, reserves its deposits (src/store/plan-reservations.ts). */
  expiresAt: Date;
}

/** Records a plan once; writing the same plan again (same id, so same content) changes nothing. */
export async function recordPlan(x: Executor, plan: PlanRecord, now: Date): Promise<void> {
  await x.run(
    `insert into sweep_plan (id, chain, network, is_testnet, kind, to_address, fee_payer, body, expires_at, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (id) do nothing`,
    [plan.id, plan.chain, plan.network, plan.isTestnet, plan.kind, plan.toAddress, plan.feePayer, plan.body, plan.expiresAt, now],
  );
}

/** A recorded plan: its file as written (`body`), and where it sends. */
export interface SweepPlanRow extends Omit<PlanRecord, 'expiresAt'> {
  createdAt: Date;
  expiresAt: Date | null;
  cancelledAt: Date | null;
}

type RawPlan = {
  id: string;
  chain: string;
  network: string;
  is_testnet: unknown;
  kind: string;
  to_address: string;
  fee_payer: string | null;
  body: string;
  created_at: unknown;
  expires_at: unknown;
  cancelled_at: unknown;
};

const planOf = (p: RawPlan): SweepPlanRow => ({
  id: p.id,
  chain: p.chain,
  network: p.network,
  isTestnet: boolOf(p.is_testnet),
  kind: p.kind,
  toAddress: p.to_address,
  feePayer: p.fee_payer,
  body: p.body,
  createdAt: dateOf(p.created_at),
  expiresAt: nullableDate(p.expires_at),
  cancelledAt: nullableDate(p.cancelled_at),
});

export async function findPlan(r: Reader, id: string): Promise<SweepPlanRow | null> {
  const row = await r.get<RawPlan>('select * from sweep_plan where id = ?', [id]);
  return row ? planOf(row) : null;
}

export interface SignedTxRecord {
  planId: string;
  txKey: string;
  chain: string;
  network: string;
  isTestnet: boolean;
  txid: string;
  raw: string;
  deposits: string[];
  moves: Record<string, string>;
  fee: string;
}

/**
 * Records the signed transactions of a plan before any is sent. A transaction already recorded
 * with the same txid is kept as it is (a resumed broadcast); one recorded with another txid means
 * the plan was signed twice into different transactions, and sending both could not both succeed
 * but would confuse the record: refused, naming both, and nothing of the file is recorded.
 */
export async function recordSignedTxs(x: Executor, txs: SignedTxRecord[]): Promise<{ conflict: { txKey: string; recorded: string; given: string } | null }> {
  const fresh: SignedTxRecord[] = [];
  for (const tx of txs) {
    const existing = await x.get<{ txid: string }>('select txid from sweep_tx where plan_id = ? and tx_key = ?', [tx.planId, tx.txKey]);
    if (!existing) fresh.push(tx);
    else if (existing.txid !== tx.txid) return { conflict: { txKey: tx.txKey, recorded: existing.txid, given: tx.txid } };
  }
  const now = new Date();
  for (const tx of fresh) {
    await x.run(
      `insert into sweep_tx (id, plan_id, tx_key, chain, network, is_testnet, txid, raw, deposits, moves, fee, status, error, attempts, sent_at, final_at, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'SIGNED', null, 0, null, null, ?, ?)`,
      [newId(), tx.planId, tx.txKey, tx.chain, tx.network, tx.isTestnet, tx.txid, tx.raw, JSON.stringify(tx.deposits), JSON.stringify(tx.moves), tx.fee, now, now],
    );
  }
  return { conflict: null };
}

/** A recorded transaction of a plan; `deposits` and `moves` as stored (JSON text). */
export interface SweepTxRow {
  id: string;
  planId: string;
  txKey: string;
  txid: string;
  raw: string;
  deposits: string;
  moves: string;
  fee: string;
  status: SweepTxStatus;
  error: string | null;
  attempts: number;
  sentAt: Date | null;
  finalAt: Date | null;
}

type RawTx = Omit<SweepTxRow, 'planId' | 'txKey' | 'attempts' | 'sentAt' | 'finalAt'> & { plan_id: string; tx_key: string; attempts: number | string; sent_at: unknown; final_at: unknown };

const TX_COLUMNS = 'id, plan_id, tx_key, txid, raw, deposits, moves, fee, status, error, attempts, sent_at, final_at';

const txOf = (t: RawTx): SweepTxRow => ({
  id: t.id,
  planId: t.plan_id,
  txKey: t.tx_key,
  txid: t.txid,
  raw: t.raw,
  deposits: t.deposits,
  moves: t.moves,
  fee: t.fee,
  status: t.status,
  error: t.error,
  attempts: Number(t.attempts),
  sentAt: nullableDate(t.sent_at),
  finalAt: nullableDate(t.final_at),
});

/**
 * Plans whose broadcast began (a transaction was sent at least once) and has not ended: some
 * transaction not yet final, none failed. `serve` follows these (a failed one waits for a person).
 */
export async function plansToFollow(r: Reader): Promise<string[]> {
  const rows = await r.all<{ plan_id: string }>(
    `select distinct t.plan_id from sweep_tx t
      where t.status in ('SIGNED', 'SENT')
        and not exists (select 1 from sweep_tx f where f.plan_id = t.plan_id and f.status = 'FAILED')
        and exists (select 1 from sweep_tx a where a.plan_id = t.plan_id and (a.attempts > 0 or a.status in ('SENT', 'FINAL')))
      order by t.plan_id`,
  );
  return rows.map((r) => r.plan_id);
}

/** The recorded transactions of plans, by plan and key. */
async function txsOfPlans(r: Reader, planIds: string[]): Promise<SweepTxRow[]> {
  if (planIds.length === 0) return [];
  const rows = await r.all<RawTx>(`select ${TX_COLUMNS} from sweep_tx where plan_id in (${planIds.map(() => '?').join(', ')}) order by tx_key`, planIds);
  return rows.map(txOf);
}

export async function txsOfPlan(r: Reader, planId: string): Promise<SweepTxRow[]> {
  return txsOfPlans(r, [planId]);
}

export interface SweepSummaryRow {
  planId: string;
  chain: string;
  network: string;
  isTestnet: boolean;
  to: string;
  createdAt: Date;
  txs: { txKey: string; txid: string; status: SweepTxStatus; deposits: string[]; moves: Record<string, string>; fee: string; error: string | null; attempts: number; sentAt: Date | null; finalAt: Date | null }[];
}

function txView(t: SweepTxRow): SweepSummaryRow['txs'][number] {
  return {
    txKey: t.txKey,
    txid: t.txid,
    status: t.status,
    deposits: JSON.parse(t.deposits) as string[],
    moves: JSON.parse(t.moves) as Record<string, string>,
    fee: t.fee,
    error: t.error,
    attempts: t.attempts,
    sentAt: t.sentAt,
    finalAt: t.finalAt,
  };
}

/** Sweep plans (refunds are listed by `refund list`), newest first, with their transactions (a plan not yet broadcast has none). */
export async function listSweeps(r: Reader, filter: { chain?: string | undefined; limit: number }): Promise<SweepSummaryRow[]> {
  const plans = (
    await r.all<RawPlan>(
      `select * from sweep_plan where kind = 'sweep'${filter.chain ? ' and chain = ?' : ''} order by created_at desc, id limit ?`,
      filter.chain ? [filter.chain, filter.limit] : [filter.limit],
    )
  ).map(planOf);
  const txs = await txsOfPlans(r, plans.map((p) => p.id));
  return plans.map((p) => ({
    planId: p.id,
    chain: p.chain,
    network: p.network,
    isTestnet: p.isTestnet,
    to: p.toAddress,
    createdAt: p.createdAt,
    txs: txs.filter((t) => t.planId === p.id).map(txView),
  }));
}

/** A plan by its id (or a unique prefix of at least 8 hex digits), or the plan of a transaction id. */
export async function findSweep(r: Reader, ref: string): Promise<{ plan: SweepPlanRow; txs: SweepSummaryRow['txs'] } | null> {
  let plan = await findPlan(r, ref);
  if (!plan && /^[0-9a-f]{8,63}$/.test(ref)) {
    const found = await r.all<RawPlan>('select * from sweep_plan where id like ? limit 2', [`${ref}%`]);
    if (found.length === 1) plan = planOf(found[0]!);
  }
  if (!plan) {
    const tx = await r.get<{ plan_id: string }>('select plan_id from sweep_tx where txid = ? limit 1', [ref]);
    if (tx) plan = await findPlan(r, tx.plan_id);
  }
  if (!plan) return null;
  return { plan, txs: (await txsOfPlan(r, plan.id)).map(txView) };
}

export interface SweptTotal {
  chain: string;
  isTestnet: boolean;
  symbol: string;
  /** Atomic units moved by final sweep transactions. */
  swept: string;
  /** Atomic units in sweep transactions signed or sent but not yet final. */
  pending: string;
}

/** What sweeps (not refunds) moved per chain, network and symbol (for `chaingate status`). */
export async function sweptTotals(r: Reader): Promise<SweptTotal[]> {
  const rows = await r.all<{ chain: string; is_testnet: unknown; status: string; moves: string }>(
    `select t.chain, t.is_testnet, t.status, t.moves from sweep_tx t join sweep_plan p on p.id = t.plan_id
      where p.kind = 'sweep' and t.status in ('SIGNED', 'SENT', 'FINAL')`,
  );
  const totals = new Map<string, { chain: string; isTestnet: boolean; symbol: string; swept: bigint; pending: bigint }>();
  for (const row of rows) {
    const isTestnet = boolOf(row.is_testnet);
    for (const [symbol, amount] of Object.entries(JSON.parse(row.moves) as Record<string, string>)) {
      const key = `${row.chain}:${isTestnet}:${symbol}`;
      const entry = totals.get(key) ?? { chain: row.chain, isTestnet, symbol, swept: 0n, pending: 0n };
      if (row.status === 'FINAL') entry.swept += BigInt(amount);
      else entry.pending += BigInt(amount);
      totals.set(key, entry);
    }
  }
  return [...totals.values()]
    .sort((a, b) => a.chain.localeCompare(b.chain) || Number(a.isTestnet) - Number(b.isTestnet) || a.symbol.localeCompare(b.symbol))
    .map((t) => ({ chain: t.chain, isTestnet: t.isTestnet, symbol: t.symbol, swept: t.swept.toString(), pending: t.pending.toString() }));
}

/**
 * Why a transfer is the deployment's own money, or null: its transaction is one a sweep or refund
 * broadcast recorded (a refund's change back to the deposit, a top-up in the plan), or it comes from
 * an address a plan of this chain named as fee payer (TON and Tron top-ups are the fee payer's own
 * transactions, seen on the deposit's side under another hash). Addresses compare case-insensitively:
 * readers differ in EVM checksum case, and base58/bech32 forms differing only in case do not collide.
 */
export async function ownTransfer(r: Reader, key: { chain: string; isTestnet: boolean }, txHash: string, from: string | null): Promise<string | null> {
  const tx = await r.get<{ plan_id: string; kind: string }>(
    'select t.plan_id, p.kind from sweep_tx t join sweep_plan p on p.id = t.plan_id where t.chain = ? and t.is_testnet = ? and lower(t.txid) = lower(?) limit 1',
    [key.chain, key.isTestnet, txHash],
  );
  if (tx) return `sent by this deployment's ${tx.kind} plan ${tx.plan_id.slice(0, 16)}…`;
  if (from === null) return null;
  const payer = await r.get<{ id: string }>('select id from sweep_plan where chain = ? and is_testnet = ? and lower(fee_payer) = lower(?) limit 1', [key.chain, key.isTestnet, from]);
  return payer ? `from the fee payer of plan ${payer.id.slice(0, 16)}…` : null;
}
