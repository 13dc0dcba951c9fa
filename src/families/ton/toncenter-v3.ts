import { Address } from '@ton/core';
import { z } from 'zod';
import type { HttpClient } from '../http-client.ts';
import { ChainError } from '../../domain/errors.ts';

// toncenter API v3 (TON Index, https://toncenter.com/api/v3; OpenAPI in ton-org/docs
// ecosystem/rpc/toncenter/v3.yaml): the masterchain head, masterchain blocks, transactions of a list
// of accounts with the masterchain block that committed each (`mc_block_seqno`), and get-methods
// (runGetMethod, v2-compatible). Addresses come back raw ("0:ABCD…"), hashes base64, amounts and
// logical times as decimal strings, opcodes as hex strings ("0x7362d09c").
//
// Every answer is checked here, at the boundary: one that does not have the shape the reader relies
// on is a TonApiError naming the endpoint ("malformed answer to /api/v3/transactions: …"), which the
// indexer logs and retries like any fault; the reader never sees an unchecked field.

const decimal = z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]).transform((v) => BigInt(v));
const opcode = z
  .union([z.string().regex(/^(0x[0-9a-fA-F]{1,8}|-?\d{1,10})$/), z.number().int()])
  .nullable()
  .optional()
  .transform((v) => (v === null || v === undefined ? null : Number(BigInt(v) & 0xffffffffn)));
const base64 = z.string().regex(/^[A-Za-z0-9+/_-]+={0,2}$/, 'not base64');

function isTonAddress(value: string): boolean {
  try {
    Address.parse(value);
    return true;
  } catch {
    return false;
  }
}
/** An address in any form @ton/core parses (raw or user-friendly). */
const tonAddress = z.string().refine(isTonAddress, 'not a TON address');

export const BlockSchema = z.looseObject({
  workchain: z.number().int(),
  shard: z.string(),
  seqno: z.number().int().nonnegative(),
  root_hash: base64,
  gen_utime: z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]).transform((v) => Number(v)),
  global_id: z.number().int().optional(),
});
export type TonBlock = z.infer<typeof BlockSchema>;

const MessageSchema = z.looseObject({
  hash: z.string().optional(),
  source: tonAddress.nullable().optional(),
  destination: tonAddress.nullable().optional(),
  value: decimal.nullable().optional(),
  opcode,
  bounce: z.boolean().nullable().optional(),
  bounced: z.boolean().nullable().optional(),
  message_content: z.looseObject({ body: base64.nullable().optional() }).nullable().optional(),
});

const ComputePhaseSchema = z.looseObject({
  skipped: z.boolean().optional(),
  success: z.boolean().optional(),
  /** Why a skipped compute phase was skipped: "no_state", "bad_state", "no_gas" (older indexers: "cskip_no_state", …). */
  reason: z.string().optional(),
  exit_code: z.number().int().optional(),
});

export const TransactionSchema = z.looseObject({
  account: tonAddress,
  hash: base64,
  lt: decimal,
  now: z.number().int().nonnegative(),
  mc_block_seqno: z.number().int().nonnegative().nullable(),
  description: z.looseObject({
    aborted: z.boolean().optional(),
    // Absent on transactions without one (storage, split/merge), which a whole block may hold.
    compute_ph: ComputePhaseSchema.optional(),
    action: z.looseObject({ success: z.boolean().optional(), result_code: z.number().int().optional() }).nullable().optional(),
    bounce: z.looseObject({ type: z.string() }).nullable().optional(),
  }),
  in_msg: MessageSchema.nullable(),
});
export type TonTransaction = z.infer<typeof TransactionSchema>;

const TransactionsSchema = z.looseObject({ transactions: z.array(TransactionSchema) });
const BlocksSchema = z.looseObject({ blocks: z.array(BlockSchema) });
const MasterchainInfoSchema = z.looseObject({ last: BlockSchema, first: BlockSchema.optional() });
const GetMethodSchema = z.looseObject({ exit_code: z.number().int(), stack: z.array(z.looseObject({ type: z.string(), value: z.unknown() })) });

/** toncenter answers at most 1000 rows per page (`limit`). */
export const PAGE = 1000;
/** Accounts per GET /api/v3/transactions: 100 raw addresses keep the URL near 7.5 kB, under common proxy limits. */
export const ACCOUNTS_PER_CALL = 100;

/** A toncenter answer the reader cannot use (malformed, or missing what it must hold): logged and retried. */
export class TonApiError extends ChainError {
  override readonly name = 'TonApiError';
}

export interface ToncenterV3 {
  /** The newest masterchain block and the oldest one the API holds (`first`; null when not said). */
  masterchainInfo(): Promise<{ last: TonBlock; first: TonBlock | null }>;
  masterchainHead(): Promise<TonBlock>;
  masterchainBlock(seqno: bigint): Promise<TonBlock | null>;
  /** Masterchain blocks generated at or after a time, oldest first, one page. */
  masterchainBlocks(startUtime: number, offset: number): Promise<TonBlock[]>;
  /** Every transaction committed by one masterchain block (all shards), one page. */
  transactionsByMasterchainBlock(seqno: bigint, offset: number): Promise<TonTransaction[]>;
  /** Transactions of these accounts since a time, oldest first, one page. */
  transactions(accounts: string[], startUtime: number, offset: number): Promise<TonTransaction[]>;
  runGetMethod(address: string, method: string, stack: { type: 'slice' | 'cell' | 'num'; value: string }[]): Promise<{ exitCode: number; stack: { type: string; value: unknown }[] }>;
}

export function createToncenterV3(http: HttpClient): ToncenterV3 {
  async function get<T extends z.ZodType>(path: string, schema: T): Promise<z.infer<T>> {
    const text = await http.text(path);
    return parse(path.split('?')[0]!, text, schema);
  }

  function parse<T extends z.ZodType>(path: string, text: string | null, schema: T): z.infer<T> {
    let raw: unknown;
    try {
      raw = JSON.parse(text ?? '');
    } catch {
      throw new TonApiError(`malformed answer to ${path}: not JSON`);
    }
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TonApiError(`malformed answer to ${path}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape'}`);
    }
    return parsed.data;
  }

  const info = async () => {
    const answer = await get('/api/v3/masterchainInfo', MasterchainInfoSchema);
    return { last: answer.last, first: answer.first ?? null };
  };

  return {
    masterchainInfo: info,
    async masterchainHead() {
      return (await info()).last;
    },
    async masterchainBlock(seqno) {
      const answer = await get(`/api/v3/blocks?workchain=-1&shard=8000000000000000&seqno=${seqno}&limit=1`, BlocksSchema);
      const block = answer.blocks[0] ?? null;
      if (block && BigInt(block.seqno) !== seqno) throw new TonApiError(`malformed answer to /api/v3/blocks: asked for masterchain block ${seqno}, got ${block.seqno}`);
      return block;
    },
    async masterchainBlocks(startUtime, offset) {
      const path = `/api/v3/blocks?workchain=-1&shard=8000000000000000&start_utime=${Math.max(0, startUtime)}&limit=${PAGE}&offset=${offset}&sort=asc`;
      return (await get(path, BlocksSchema)).blocks;
    },
    async transactionsByMasterchainBlock(seqno, offset) {
      return (await get(`/api/v3/transactionsByMasterchainBlock?seqno=${seqno}&limit=${PAGE}&offset=${offset}&sort=asc`, TransactionsSchema)).transactions;
    },
    async transactions(accounts, startUtime, offset) {
      const query = new URLSearchParams();
      for (const a of accounts) query.append('account', a);
      query.set('start_utime', String(Math.max(0, startUtime)));
      query.set('limit', String(PAGE));
      query.set('offset', String(offset));
      query.set('sort', 'asc');
      return (await get(`/api/v3/transactions?${query.toString()}`, TransactionsSchema)).transactions;
    },
    async runGetMethod(address, method, stack) {
      const path = '/api/v3/runGetMethod';
      const answer = parse(path, await http.post(path, { address, method, stack }), GetMethodSchema);
      return { exitCode: answer.exit_code, stack: answer.stack };
    },
  };
}
