import { z } from 'zod';
import type { HttpClient } from '../http-client.ts';
import { assertLinked, type BlockRef, type ChainSource, type RangeResult, type SeenTransfer, type WatchSet } from '../source.ts';
import { ChainError } from '../../domain/errors.ts';

/** getGenesisHash of each Solana cluster: the indexer refuses an endpoint serving another one. */
export const SOLANA_GENESIS: Readonly<Record<string, string>> = {
  MAINNET: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d',
  DEVNET: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG',
};

// Agave's RPC error codes (rpc-client-api/src/custom_error.rs).
/** "Block not available for slot N": not (yet) confirmed on this node. Above the finalized slot: stop and come back. */
export const BLOCK_NOT_AVAILABLE = -32004;
/** "Slot N was skipped, or missing due to ledger jump to recent snapshot" / "… in long-term storage": no block there. */
const SKIPPED = new Set([-32007, -32009]);
/** Token balances get log indexes from here on, so they never meet a SOL balance's account index. */
export const TOKEN_LOG_INDEX_BASE = 1_000_000;

/**
 * An RPC answer's text as JSON, u64 intact. Agave writes u64 (lamports, fees, compute units) as bare
 * JSON numbers, beyond 2^53 once an account holds more than 9,007,199 SOL (large exchange and stake
 * accounts do): such an integer is read from its source text as a bigint, never rounded through a
 * float. Without the reviver's source text (an older runtime) it stays a rounded number, which the
 * schemas refuse wherever an amount is read.
 */
export function parseLossless(text: string): unknown {
  // Any integer of at most 15 digits is safe; without a longer run of digits the plain parse (about
  // four times faster on a large block) loses nothing.
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && context?.source !== undefined && /^-?\d+$/.test(context.source) ? BigInt(context.source) : value,
  );
}

const pubkey = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'a base58 public key');
/** A u64: a safe integer, a bigint (beyond 2^53, from parseLossless) or a decimal string. */
const lamports = z.union([z.number().int().nonnegative(), z.bigint().nonnegative(), z.string().regex(/^\d+$/)]).transform((v) => BigInt(v));
const TokenBalanceSchema = z.looseObject({
  accountIndex: z.number().int().nonnegative(),
  mint: pubkey,
  owner: pubkey.optional(),
  programId: pubkey.optional(),
  uiTokenAmount: z.looseObject({ amount: z.string().regex(/^\d+$/) }),
});
/**
 * Only the entries of watched accounts are read, and checked when read (deposits()): whatever
 * another account's balance or token balance holds never makes the block unreadable.
 */
const MetaSchema = z.looseObject({
  err: z.unknown(),
  preBalances: z.array(z.unknown()),
  postBalances: z.array(z.unknown()),
  preTokenBalances: z.array(z.unknown()).nullish(),
  postTokenBalances: z.array(z.unknown()).nullish(),
  loadedAddresses: z.looseObject({ writable: z.array(pubkey), readonly: z.array(pubkey) }).optional(),
});
/**
 * A transaction as getBlock / getTransaction return it, in either form we ask for:
 * transactionDetails "accounts" (accountKeys as objects, lookup-table accounts included with
 * source "lookupTable") or encoding "json" (message.accountKeys strings, then meta.loadedAddresses).
 */
const TxSchema = z.union([
  z.looseObject({ transaction: z.looseObject({ signatures: z.array(z.string()).min(1), accountKeys: z.array(z.looseObject({ pubkey })) }), meta: MetaSchema.nullable() }).transform((t) => ({
    signature: t.transaction.signatures[0]!,
    keys: t.transaction.accountKeys.map((k) => k.pubkey),
    meta: t.meta,
  })),
  z.looseObject({ transaction: z.looseObject({ signatures: z.array(z.string()).min(1), message: z.looseObject({ accountKeys: z.array(pubkey) }) }), meta: MetaSchema.nullable() }).transform((t) => ({
    signature: t.transaction.signatures[0]!,
    keys: [...t.transaction.message.accountKeys, ...(t.meta?.loadedAddresses?.writable ?? []), ...(t.meta?.loadedAddresses?.readonly ?? [])],
    meta: t.meta,
  })),
]);
const BlockSchema = z.looseObject({
  blockhash: pubkey,
  previousBlockhash: pubkey,
  blockTime: z.number().int().nullable(),
  transactions: z.array(TxSchema).optional(),
});
const TransactionResultSchema = TxSchema;
const SignaturesSchema = z.array(z.looseObject({ signature: z.string(), slot: z.number().int().nonnegative(), err: z.unknown() }));
type SolanaBlock = z.infer<typeof BlockSchema>;
type SolanaTx = z.infer<typeof TxSchema>;

export class SolanaRpcError extends ChainError {
  override readonly name = 'SolanaRpcError';
}

const EnvelopeSchema = z.looseObject({ result: z.unknown().optional(), error: z.looseObject({ code: z.number(), message: z.string().catch(''), data: z.unknown().optional() }).optional() });

/** A JSON-RPC answer's text, read with u64 intact: its error, or its (unchecked) result. The indexer and the sweeps read answers alike. */
export function readAnswer(method: string, text: string): { error: { code: number; message: string; data?: unknown } } | { error?: undefined; result: unknown } {
  let body: unknown;
  try {
    body = parseLossless(text);
  } catch {
    throw new SolanaRpcError(`${method}: the answer is not JSON (${text.slice(0, 80)})`);
  }
  const envelope = EnvelopeSchema.safeParse(body);
  if (!envelope.success || !('result' in envelope.data || envelope.data.error)) throw new SolanaRpcError(`${method}: not a JSON-RPC response`);
  const { error, result } = envelope.data;
  return error ? { error } : { result };
}

/** A result checked against its schema, or SolanaRpcError naming the method and the first problem. */
export function checkResult<T extends z.ZodType>(method: string, schema: T, result: unknown): z.infer<T> {
  const parsed = schema.safeParse(result);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SolanaRpcError(`malformed answer to ${method}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape'}`);
  }
  return parsed.data;
}

/** One field the reader uses, checked where it is read; a bad one names the transaction and the path. */
function field<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SolanaRpcError(`malformed ${where}${issue?.path.length ? `.${issue.path.join('.')}` : ''}: ${issue?.message ?? 'unexpected shape'}`);
  }
  return parsed.data;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

export interface SolanaSourceOptions {
  http: HttpClient;
  /**
   * `blocks` (default): every slot with getBlock, transactionDetails "accounts": cost independent of
   * the open payments, bandwidth of the whole chain (a paid endpoint on mainnet). `addresses`:
   * getSignaturesForAddress on each open deposit and its token accounts, finalized commitment: cheap
   * for a few open payments, grows with them (docs/indexers.md).
   */
  mode?: 'blocks' | 'addresses';
  /** getBlock calls in flight at once (blocks mode). */
  concurrency?: number;
  /** Token mints (USDC) whose associated token accounts are watched in addresses mode. */
  mints?: string[];
  /** Associated token account of an owner for a mint (addresses mode). */
  tokenAccountOf?: (owner: string, mint: string) => Promise<string[]>;
}

/**
 * Reads Solana. A deposit is a rise in a watched account's lamports (SOL) or in a token balance
 * whose owner is a watched address (SPL and Token-2022 tokens such as USDC land in the owner's
 * token account). Failed transactions move nothing and are passed over. Skipped slots have no
 * block: the range simply has a gap. Blocks are read at the `confirmed` commitment and completion
 * waits for the `finalized` slot.
 */
export function createSolanaSource(options: SolanaSourceOptions): ChainSource {
  const { http } = options;
  const mode = options.mode ?? 'blocks';
  const concurrency = Math.max(1, options.concurrency ?? 4);

  async function rpc<T extends z.ZodType>(method: string, params: unknown[], schema: T): Promise<{ result: z.infer<T> | null; code?: number; message?: string }> {
    // The answer's text is parsed here, not by the shared client's JSON.parse: u64 beyond 2^53.
    const answer = readAnswer(method, (await http.post('', { jsonrpc: '2.0', id: 1, method, params })) ?? '');
    if (answer.error) return { result: null, code: answer.error.code, message: answer.error.message };
    if (answer.result === null || answer.result === undefined) return { result: null };
    return { result: checkResult(method, schema, answer.result) };
  }

  async function slotAt(commitment: 'confirmed' | 'finalized'): Promise<bigint> {
    const res = await rpc('getSlot', [{ commitment }], z.number().int().nonnegative());
    if (res.result === null) throw new SolanaRpcError(`getSlot (${commitment}): ${res.code ?? ''} ${res.message ?? 'no result'}`);
    return BigInt(res.result);
  }

  /** `unavailable`: -32004, or a null result (Agave answers null where it has no block to give yet). */
  type SlotRead = { kind: 'block'; block: SolanaBlock } | { kind: 'skipped' } | { kind: 'unavailable'; answer: string };

  async function readSlot(slot: bigint, details: 'accounts' | 'none', commitment: 'confirmed' | 'finalized' = 'confirmed'): Promise<SlotRead> {
    const config = { encoding: 'json', transactionDetails: details, maxSupportedTransactionVersion: 0, rewards: false, commitment };
    const res = await rpc('getBlock', [Number(slot), config], BlockSchema);
    if (res.result) return { kind: 'block', block: res.result };
    if (res.code !== undefined && SKIPPED.has(res.code)) return { kind: 'skipped' };
    if (res.code === BLOCK_NOT_AVAILABLE) return { kind: 'unavailable', answer: `${res.code} ${res.message ?? ''}`.trim() };
    // A null result says nothing about whether a block exists there: never read as a skipped slot
    // (the cursor would pass a block it never read, and every later range would fail to link).
    if (res.code === undefined) return { kind: 'unavailable', answer: 'null' };
    throw new SolanaRpcError(`getBlock ${slot}: ${res.code} ${res.message ?? ''}`);
  }

  const refOf = (slot: bigint, b: SolanaBlock): BlockRef => ({ number: slot, hash: b.blockhash, parentHash: b.previousBlockhash, timestamp: b.blockTime ?? 0 });

  function deposits(watch: WatchSet, where: { slot: bigint; hash: string; time: number }, tx: SolanaTx): SeenTransfer[] {
    const meta = tx.meta;
    if (!meta || meta.err !== null) return [];
    const found: SeenTransfer[] = [];
    const base = { txHash: tx.signature, blockNumber: where.slot, blockHash: where.hash, blockTime: where.time, from: null, reverted: false };
    const at = `meta of ${tx.signature}`;
    tx.keys.forEach((key, i) => {
      if (!watch.addresses.has(key)) return;
      const delta = field(lamports, meta.postBalances[i], `${at}: postBalances.${i}`) - field(lamports, meta.preBalances[i], `${at}: preBalances.${i}`);
      if (delta > 0n) found.push({ ...base, logIndex: i, to: key, token: null, amount: delta, kind: 'native' });
    });
    const preTokens = meta.preTokenBalances ?? [];
    for (const [n, raw] of (meta.postTokenBalances ?? []).entries()) {
      if (!isRecord(raw) || typeof raw.owner !== 'string' || !watch.addresses.has(raw.owner)) continue;
      const post = field(TokenBalanceSchema, raw, `${at}: postTokenBalances.${n}`);
      const m = preTokens.findIndex((p) => isRecord(p) && p.accountIndex === post.accountIndex && p.mint === post.mint);
      const pre = m < 0 ? null : field(TokenBalanceSchema, preTokens[m], `${at}: preTokenBalances.${m}`);
      const delta = BigInt(post.uiTokenAmount.amount) - BigInt(pre?.uiTokenAmount.amount ?? '0');
      if (delta > 0n) found.push({ ...base, logIndex: TOKEN_LOG_INDEX_BASE + post.accountIndex, to: raw.owner, token: post.mint, amount: delta, kind: 'token' });
    }
    return found;
  }

  async function fetchBlocks(from: bigint, to: bigint, watch: WatchSet, finalized: bigint): Promise<RangeResult> {
    const details = watch.addresses.size ? 'accounts' : 'none';
    const slots: bigint[] = [];
    for (let s = from; s <= to; s++) slots.push(s);
    const reads: SlotRead[] = new Array(slots.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, slots.length) }, async () => {
        for (let i = next++; i < slots.length; i = next++) reads[i] = await readSlot(slots[i]!, details);
      }),
    );
    const blocks: BlockRef[] = [];
    const transfers: SeenTransfer[] = [];
    for (const [i, read] of reads.entries()) {
      const slot = slots[i]!;
      if (read.kind === 'unavailable') {
        // Above the finalized slot the node cannot serve it yet (not confirmed here, or a skipped
        // slot Agave cannot call skipped before it is rooted): keep what was read before it,
        // end the range there and come back for the rest. At or below it, the node should have
        // it: a fault, backed off and retried, never a gap.
        if (slot > finalized) {
          assertLinked(blocks);
          return { blocks, transfers, through: slot - 1n };
        }
        throw new SolanaRpcError(`getBlock ${slot}: block not available at or below the finalized slot ${finalized} (answer: ${read.answer})`);
      }
      if (read.kind === 'skipped') continue;
      const ref = refOf(slot, read.block);
      blocks.push(ref);
      for (const tx of read.block.transactions ?? []) transfers.push(...deposits(watch, { slot, hash: ref.hash, time: ref.timestamp }, tx));
    }
    assertLinked(blocks);
    return { blocks, transfers };
  }

  /**
   * Addresses mode reads only finalized history, so nothing it reads can be reorganised: the
   * signatures of each watched owner and token account in the range, then each new transaction.
   * The range's end block is returned alone (`sparse`) for its time.
   */
  async function fetchByAddress(from: bigint, to: bigint, watch: WatchSet): Promise<RangeResult> {
    const accounts = new Set<string>();
    for (const owner of watch.addresses) {
      accounts.add(owner);
      for (const mint of options.mints ?? []) for (const ata of (await options.tokenAccountOf?.(owner, mint)) ?? []) accounts.add(ata);
    }
    const signatures = new Map<string, bigint>();
    for (const account of accounts) {
      let before: string | undefined;
      for (;;) {
        const res = await rpc('getSignaturesForAddress', [account, { limit: 1000, commitment: 'finalized', minContextSlot: Number(to), ...(before ? { before } : {}) }], SignaturesSchema);
        if (res.result === null) throw new SolanaRpcError(`getSignaturesForAddress: ${res.code ?? ''} ${res.message ?? 'no result'}`);
        for (const s of res.result) if (BigInt(s.slot) >= from && BigInt(s.slot) <= to && s.err === null) signatures.set(s.signature, BigInt(s.slot));
        const last = res.result.at(-1);
        if (res.result.length < 1000 || !last || BigInt(last.slot) < from) break;
        before = last.signature;
      }
    }
    const transfers: SeenTransfer[] = [];
    const hashes = new Map<bigint, SolanaBlock>();
    for (const [signature, slot] of signatures) {
      const res = await rpc('getTransaction', [signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'finalized' }], TransactionResultSchema);
      if (!res.result) throw new SolanaRpcError(`getTransaction ${signature}: ${res.code ?? ''} ${res.message ?? 'not found'}`);
      let block = hashes.get(slot);
      if (!block) {
        const read = await readSlot(slot, 'none', 'finalized');
        if (read.kind !== 'block') throw new SolanaRpcError(`getBlock ${slot}: no block for a finalized transaction`);
        block = read.block;
        hashes.set(slot, block);
      }
      transfers.push(...deposits(watch, { slot, hash: block.blockhash, time: block.blockTime ?? 0 }, res.result));
    }
    const end = await readSlot(to, 'none', 'finalized');
    return { blocks: end.kind === 'block' ? [refOf(to, end.block)] : [], transfers, sparse: true };
  }

  return {
    // Addresses mode follows the finalized slot: what it reads is already final.
    head: () => slotAt(mode === 'addresses' ? 'finalized' : 'confirmed'),
    finalized: () => slotAt('finalized'),
    async blockAt(slot) {
      const read = await readSlot(slot, 'none');
      return read.kind === 'block' ? refOf(slot, read.block) : null;
    },
    async fetchRange(from, to, watch): Promise<RangeResult> {
      if (mode === 'addresses') return fetchByAddress(from, to, watch);
      return fetchBlocks(from, to, watch, await slotAt('finalized'));
    },
    close() {},
  };
}
