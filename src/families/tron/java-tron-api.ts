import { z } from 'zod';
import type { HttpClient } from '../http-client.ts';
import { ChainError } from '../../domain/errors.ts';

// java-tron's HTTP API (framework/src/main/java/org/tron/core/services/http/*Servlet.java, served
// by every full node and by TronGrid at https://api.trongrid.io): blocks as protocol.Block rendered
// by java-tron's JsonFormat without `visible`, so addresses are 21-byte hex with the 0x41 prefix and
// bytes fields (asset_name) hex. A missing block is `{}`; a refused request is HTTP 200 with
// `{"Error": "..."}`. Only this API tells a TRX TransferContract from a TRC-10
// TransferAssetContract or a resource delegation, which its /jsonrpc renders alike.

const hash = z.string().regex(/^[0-9a-fA-F]{64}$/, 'a 32-byte hex hash');
const address41 = z.string().regex(/^41[0-9a-fA-F]{40}$/, 'a 41-prefixed hex address');
/** int64 values are read as digit strings (see parseJson), so no amount loses precision above 2^53. */
const int64 = z.string().regex(/^\d+$/, 'an integer');
const int = z.union([z.number().int(), int64]).transform((v) => BigInt(v));

const ContractSchema = z.looseObject({
  type: z.string(),
  parameter: z.looseObject({ value: z.record(z.string(), z.unknown()), type_url: z.string().optional() }),
});
const TransactionSchema = z.looseObject({
  txID: hash,
  ret: z.array(z.looseObject({ contractRet: z.string().optional() })).optional(),
  raw_data: z.looseObject({ contract: z.array(ContractSchema).min(1) }),
});
export const BlockSchema = z.looseObject({
  blockID: hash,
  block_header: z.looseObject({
    raw_data: z.looseObject({
      // protobuf JSON omits zero values: the genesis block has no `number`
      number: int.optional().transform((n) => n ?? 0n),
      parentHash: hash,
      timestamp: int.optional().transform((t) => t ?? 0n),
    }),
  }),
  transactions: z.array(TransactionSchema).optional(),
});
export type TronBlock = z.infer<typeof BlockSchema>;
export type TronTransaction = z.infer<typeof TransactionSchema>;

export const TransferValueSchema = z.looseObject({ amount: int64, owner_address: address41, to_address: address41 });
export const AssetTransferValueSchema = z.looseObject({ amount: int64, asset_name: z.string(), owner_address: address41, to_address: address41 });

const RangeSchema = z.looseObject({ block: z.array(BlockSchema).optional() });
/** Only the id: the genesis block's transactions (allocations) carry neither ret nor the fields above. */
const BlockIdSchema = z.looseObject({ blockID: hash });

/** java-tron serves at most this many blocks per getblockbylimitnext (BLOCK_LIMIT_NUM). */
export const BLOCKS_PER_CALL = 100;

export class TronApiError extends ChainError {
  override readonly name = 'TronApiError';
}

/** JSON with every int64 amount field kept as its digits (JSON.parse would round above 2^53 sun). */
export function parseJson(text: string): unknown {
  return JSON.parse(text.replace(/("(?:amount|balance|frozen_balance|call_value|number|timestamp)"\s*:\s*)(\d+)/g, '$1"$2"'));
}

function decode<T extends z.ZodType>(path: string, text: string | null, schema: T): z.infer<T> | null {
  if (text === null) return null;
  let raw: unknown;
  try {
    raw = parseJson(text);
  } catch {
    throw new TronApiError(`malformed answer to ${path}: not JSON`);
  }
  if (raw && typeof raw === 'object' && 'Error' in raw) throw new TronApiError(`${path} refused: ${String((raw as { Error: unknown }).Error).slice(0, 200)}`);
  if (raw && typeof raw === 'object' && Object.keys(raw).length === 0) return null; // "no such block"
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TronApiError(`malformed answer to ${path}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape'}`);
  }
  return parsed.data;
}

export interface JavaTronApi {
  /** The block at a height, or null when the node has none there. */
  block(n: bigint): Promise<TronBlock | null>;
  /** The id of a block (the network check reads block 0), or null. */
  blockId(n: bigint): Promise<string | null>;
  /** Blocks from..to (inclusive) in order; shorter when the node's chain ends earlier. */
  blocks(from: bigint, to: bigint): Promise<TronBlock[]>;
  /** The newest solidified block (19 of 27 super representatives built on it), or null when the node serves no /walletsolidity. */
  solidified(): Promise<bigint | null>;
}

export function createJavaTronApi(http: HttpClient): JavaTronApi {
  return {
    async block(n) {
      const path = '/wallet/getblockbynum';
      return decode(path, await http.post(path, { num: Number(n) }), BlockSchema);
    },
    async blockId(n) {
      const path = '/wallet/getblockbynum';
      return (await decode(path, await http.post(path, { num: Number(n) }), BlockIdSchema))?.blockID.toLowerCase() ?? null;
    },
    async blocks(from, to) {
      const path = '/wallet/getblockbylimitnext';
      const out: TronBlock[] = [];
      for (let start = from; start <= to; start += BigInt(BLOCKS_PER_CALL)) {
        const end = start + BigInt(BLOCKS_PER_CALL) - 1n < to ? start + BigInt(BLOCKS_PER_CALL) - 1n : to;
        const answer = decode(path, await http.post(path, { startNum: Number(start), endNum: Number(end + 1n) }), RangeSchema);
        const got = [...(answer?.block ?? [])].sort((a, b) => (a.block_header.raw_data.number < b.block_header.raw_data.number ? -1 : 1));
        for (const [i, b] of got.entries()) {
          if (b.block_header.raw_data.number !== start + BigInt(i)) throw new TronApiError(`${path} answered block ${b.block_header.raw_data.number} where ${start + BigInt(i)} belongs`);
        }
        out.push(...got);
        if (got.length < Number(end - start + 1n)) break;
      }
      return out;
    },
    async solidified() {
      const path = '/walletsolidity/getnowblock';
      const block = decode(path, await http.post(path, {}, { allowNotFound: true }), BlockSchema);
      return block ? block.block_header.raw_data.number : null;
    },
  };
}
