import { z } from 'zod';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../logger.ts';
import { createHttpClient } from '../http-client.ts';
import { parseLossless, SolanaRpcError } from './solana-source.ts';

// The cluster's JSON-RPC as the sweep's server steps use it: the shared client's retries for
// transport faults, answers parsed with u64 intact (parseLossless) and checked with a schema.

export type SolanaCall = <T extends z.ZodType>(method: string, params: unknown[], schema: T) => Promise<z.infer<T>>;
/** Like SolanaCall, but a JSON-RPC error comes back to the caller (sendTransaction's preflight failures). */
export type SolanaTry = <T extends z.ZodType>(method: string, params: unknown[], schema: T) => Promise<{ ok: true; result: z.infer<T> } | { ok: false; code: number; message: string; data: unknown }>;

const EnvelopeSchema = z.looseObject({ result: z.unknown().optional(), error: z.looseObject({ code: z.number(), message: z.string().catch(''), data: z.unknown().optional() }).optional() });

/** A u64 as Agave writes it: a number, a bigint beyond 2^53 (parseLossless), or a string. */
export const u64 = z.union([z.number().int().nonnegative(), z.bigint().nonnegative(), z.string().regex(/^\d+$/)]).transform((v) => BigInt(v));
export const pubkey = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'a base58 public key');

/** `deadlineMs`: the whole step gives up on an endpoint that keeps failing, instead of retrying for ever. */
export function solanaRpc(network: ResolvedNetwork, config: Config, log: Logger, deadlineMs = 300_000): { call: SolanaCall; attempt: SolanaTry } {
  const http = createHttpClient({ baseUrl: network.rpcUrl, timeoutMs: config.indexer.rpcTimeoutMs, log, signal: AbortSignal.timeout(deadlineMs), maxBackoffMs: 5_000 });
  const attempt: SolanaTry = async (method, params, schema) => {
    const text = (await http.post('', { jsonrpc: '2.0', id: 1, method, params })) ?? '';
    let body: unknown;
    try {
      body = parseLossless(text);
    } catch {
      throw new SolanaRpcError(`${method}: the answer is not JSON (${text.slice(0, 80)})`);
    }
    const envelope = EnvelopeSchema.safeParse(body);
    if (!envelope.success || !('result' in envelope.data || envelope.data.error)) throw new SolanaRpcError(`${method}: not a JSON-RPC response`);
    const { error, result } = envelope.data;
    if (error) return { ok: false, code: error.code, message: error.message, data: error.data };
    const parsed = schema.safeParse(result);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new SolanaRpcError(`malformed answer to ${method}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape'}`);
    }
    return { ok: true, result: parsed.data };
  };
  const call: SolanaCall = async (method, params, schema) => {
    const res = await attempt(method, params, schema);
    if (!res.ok) throw new SolanaRpcError(`${method}: ${res.code} ${res.message}`);
    return res.result;
  };
  return { call, attempt };
}
