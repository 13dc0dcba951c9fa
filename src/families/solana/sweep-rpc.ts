import { z } from 'zod';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../logger.ts';
import { createHttpClient } from '../http-client.ts';
import { checkResult, readAnswer, SolanaRpcError } from './solana-source.ts';

// The cluster's JSON-RPC as the sweep's server steps use it: the shared client's retries for
// transport faults, answers parsed with u64 intact (parseLossless) and checked with a schema.

export type SolanaCall = <T extends z.ZodType>(method: string, params: unknown[], schema: T) => Promise<z.infer<T>>;
/** Like SolanaCall, but a JSON-RPC error comes back to the caller (sendTransaction's preflight failures). */
export type SolanaTry = <T extends z.ZodType>(method: string, params: unknown[], schema: T) => Promise<{ ok: true; result: z.infer<T> } | { ok: false; code: number; message: string; data: unknown }>;

/** A u64 as Agave writes it: a number, a bigint beyond 2^53 (parseLossless), or a string. */
export const u64 = z.union([z.number().int().nonnegative(), z.bigint().nonnegative(), z.string().regex(/^\d+$/)]).transform((v) => BigInt(v));
export const pubkey = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'a base58 public key');

/** `deadlineMs`: the whole step gives up on an endpoint that keeps failing, instead of retrying for ever. */
export function solanaRpc(network: ResolvedNetwork, config: Config, log: Logger, deadlineMs = 300_000): { call: SolanaCall; attempt: SolanaTry } {
  const http = createHttpClient({ baseUrl: network.rpcUrl, timeoutMs: config.indexer.rpcTimeoutMs, log, signal: AbortSignal.timeout(deadlineMs), maxBackoffMs: 5_000 });
  const attempt: SolanaTry = async (method, params, schema) => {
    const answer = readAnswer(method, (await http.post('', { jsonrpc: '2.0', id: 1, method, params })) ?? '');
    if (answer.error) return { ok: false, code: answer.error.code, message: answer.error.message, data: answer.error.data };
    return { ok: true, result: checkResult(method, schema, answer.result) };
  };
  const call: SolanaCall = async (method, params, schema) => {
    const res = await attempt(method, params, schema);
    if (!res.ok) throw new SolanaRpcError(`${method}: ${res.code} ${res.message}`);
    return res.result;
  };
  return { call, attempt };
}
