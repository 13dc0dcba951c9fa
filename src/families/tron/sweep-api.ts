import { z } from 'zod';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Config } from '../../config/schema.ts';
import type { Logger } from '../../logger.ts';
import { createHttpClient } from '../http-client.ts';
import { parseJson, TronApiError } from './java-tron-api.ts';

// The java-tron HTTP API calls a sweep makes (framework/src/main/java/org/tron/core/services/http/,
// visible=false: addresses as 41-prefixed hex): accounts, resources, TRC-20 balances and energy
// estimates by triggerconstantcontract, the head block for the reference, chain parameters for the
// prices, then broadcasthex and the transaction's info. TronGrid's key goes in TRON-PRO-API-KEY.

const num = z.union([z.number().int(), z.string().regex(/^\d+$/)]).transform((v) => BigInt(v));
const opt = num.optional().transform((v) => v ?? 0n);

// protobuf JSON leaves zero fields out: a new account has no `balance`, an unknown one is `{}`.
export const AccountSchema = z.looseObject({ address: z.string().optional(), balance: opt });
export const ResourceSchema = z.looseObject({
  freeNetLimit: opt,
  freeNetUsed: opt,
  NetLimit: opt,
  NetUsed: opt,
  EnergyLimit: opt,
  EnergyUsed: opt,
  TotalEnergyLimit: opt,
  TotalEnergyWeight: opt,
});
export const ConstantSchema = z.looseObject({
  result: z.looseObject({ result: z.boolean().optional(), code: z.string().optional(), message: z.string().optional() }),
  energy_used: opt,
  constant_result: z.array(z.string()).optional(),
});
export const NowBlockSchema = z.looseObject({
  blockID: z.string().regex(/^[0-9a-f]{64}$/),
  block_header: z.looseObject({ raw_data: z.looseObject({ number: opt, timestamp: opt }) }),
});
export const ParametersSchema = z.looseObject({ chainParameter: z.array(z.looseObject({ key: z.string(), value: num.optional() })) });
export const MaxSizeSchema = z.looseObject({ max_size: opt });
/** /wallet/gettransactionfrompending: the transaction, or `{}` when the pool has none by that id. */
export const PendingSchema = z.looseObject({ txID: z.string().optional() });
export const BroadcastSchema = z.looseObject({ result: z.boolean().optional(), code: z.string().optional(), message: z.string().optional(), txid: z.string().optional() });
export const InfoSchema = z.looseObject({
  id: z.string().optional(),
  fee: opt,
  blockNumber: num.optional(),
  result: z.string().optional(),
  resMessage: z.string().optional(),
  receipt: z.looseObject({ result: z.string().optional(), energy_usage_total: opt, net_usage: opt, net_fee: opt, energy_fee: opt }).optional(),
});

/** java-tron renders bytes (Return.message, resMessage) as hex in some servlets and as text in others. */
export function readMessage(message: string | undefined): string {
  if (!message) return '';
  if (/^([0-9a-fA-F]{2})+$/.test(message)) {
    const text = Buffer.from(message, 'hex').toString('utf8');
    if (/^[\x20-\x7e\s]+$/.test(text)) return text;
  }
  return message;
}

/** A POST to the HTTP API; with `optional`, a node that does not serve the path (404) answers null. */
export type TronCall = <T extends z.ZodType>(path: string, body: unknown, schema: T, options?: { optional?: boolean }) => Promise<z.infer<T>>;

export function tronSweepApi(network: ResolvedNetwork, config: Config, log: Logger): { call: TronCall; apiUrl: string } {
  const apiUrl = network.apiUrl ?? network.rpcUrl.replace(/\/jsonrpc\/?$/, '');
  const headers = network.apiKey ? { 'TRON-PRO-API-KEY': network.apiKey } : undefined;
  const http = createHttpClient({ baseUrl: apiUrl, timeoutMs: config.indexer.rpcTimeoutMs, log, maxBackoffMs: 2_000, ...(headers ? { headers } : {}) });
  const call: TronCall = async (path, body, schema, options) => {
    const text = await http.post(path, body, { allowNotFound: options?.optional === true });
    if (text === null) return schema.parse(null) as z.infer<typeof schema>; // only nullable schemas pass `optional`
    let raw: unknown;
    try {
      raw = parseJson(text ?? '');
    } catch {
      throw new TronApiError(`malformed answer to ${path}: not JSON`);
    }
    if (raw && typeof raw === 'object' && 'Error' in raw) throw new TronApiError(`${path} refused: ${String((raw as { Error: unknown }).Error).slice(0, 200)}`);
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TronApiError(`malformed answer to ${path}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape'}`);
    }
    return parsed.data;
  };
  return { call, apiUrl };
}

/** The chain parameters a sweep prices with, by their java-tron names, with mainnet's values when a node leaves one out. */
export async function chainPrices(call: TronCall) {
  const params = new Map((await call('/wallet/getchainparameters', {}, ParametersSchema)).chainParameter.map((p) => [p.key, p.value ?? 0n]));
  const get = (key: string, fallback: bigint) => params.get(key) ?? fallback;
  return {
    /** sun per energy point burned */
    energyFee: get('getEnergyFee', 100n),
    /** sun per bandwidth byte burned */
    transactionFee: get('getTransactionFee', 1_000n),
    /** free bandwidth per account per day */
    freeNetLimit: get('getFreeNetLimit', 600n),
    /** burned for the bandwidth of a transaction that creates an account */
    createAccountFee: get('getCreateAccountFee', 100_000n),
    /** burned by a system contract that creates an account */
    createNewAccountFee: get('getCreateNewAccountFeeInSystemContract', 1_000_000n),
    /** staked bandwidth points per byte of a transaction that creates an account */
    createAccountBandwidthRate: get('getCreateNewAccountBandwidthRate', 1n),
  };
}
