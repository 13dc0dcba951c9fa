import { Address, Cell } from '@ton/core';
import { z } from 'zod';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Config } from '../../config/schema.ts';
import { originsOnly, withoutCredentials } from '../../domain/http-url.ts';
import type { Logger } from '../../logger.ts';
import { createHttpClient } from '../http-client.ts';
import { createToncenterV3, TonApiError, type ToncenterV3 } from './toncenter-v3.ts';

// toncenter API v3 as the sweep's server steps use it (ton-org/docs ecosystem/rpc/toncenter/v3.yaml):
// /api/v3/addressInformation (balance, status and code of any account, deployed or not),
// runGetMethod `seqno` and `get_public_key` on a deployed wallet, /api/v3/jetton/wallets (jetton balances by jetton
// wallet address; the addresses themselves come from get_wallet_address on each master),
// POST /api/v3/message (a signed external message, BOC base64), /api/v3/transactionsByMessage
// (the transaction a message caused) and masterchainInfo. Every answer is checked at this
// boundary; the shared client retries transport faults until the step's deadline.

const decimal = z.union([z.string().regex(/^\d+$/), z.number().int().nonnegative()]).transform((v) => BigInt(v));

const AddressInformationSchema = z.looseObject({
  balance: decimal,
  /** "active", "uninit" (v2: "uninitialized"), "frozen", "nonexist". */
  status: z.string(),
  code: z.string().nullable().optional(),
});
const JettonWalletsSchema = z.looseObject({
  jetton_wallets: z.array(z.looseObject({ address: z.string(), balance: decimal, owner: z.string(), jetton: z.string() })),
});
const MessageSent = z.looseObject({ message_hash: z.string().optional() });
const ErrorSchema = z.looseObject({ error: z.string().optional(), detail: z.unknown().optional() });

// fwd_fee / ihr_fee: what the sender paid to forward an internal message beyond the share in
// total_fees (null on an external-out message, which has none); see sender-fee.ts.
const Msg = z.looseObject({
  hash: z.string(),
  destination: z.string().nullable().optional(),
  opcode: z.union([z.string(), z.number()]).nullable().optional(),
  fwd_fee: decimal.nullable().optional(),
  ihr_fee: decimal.nullable().optional(),
});
/** One transaction as toncenter v3 answers it (/api/v3/transactionsByMessage, /api/v3/transactions), the fields the sweep reads. */
export const SweepTransactionSchema = z.looseObject({
  account: z.string(),
  hash: z.string(),
  mc_block_seqno: z.number().int().nullable(),
  total_fees: decimal.optional(),
  description: z.looseObject({
    aborted: z.boolean().optional(),
    compute_ph: z.looseObject({ skipped: z.boolean().optional(), success: z.boolean().optional(), exit_code: z.number().int().optional(), reason: z.string().optional() }).optional(),
    action: z.looseObject({ success: z.boolean().optional(), result_code: z.number().int().optional() }).nullable().optional(),
  }),
  out_msgs: z.array(Msg).optional(),
});
export type SweepTransaction = z.infer<typeof SweepTransactionSchema>;
const TxsSchema = z.looseObject({ transactions: z.array(SweepTransactionSchema) });

export interface AccountState {
  balance: bigint;
  status: 'active' | 'uninit' | 'frozen' | 'nonexist';
  /** The code cell's hash (hex), for a deployed account. */
  codeHash: string | null;
}

export interface TonSweepApi {
  account(address: string): Promise<AccountState>;
  seqno(address: string): Promise<number>;
  /** A deployed wallet's ed25519 public key (get_public_key), hex. */
  publicKey(address: string): Promise<string>;
  /** Balances of these jetton wallets (raw address -> balance, owner and master as the index holds them); a wallet not deployed is absent. */
  jettonBalances(wallets: string[]): Promise<Map<string, { balance: bigint; owner: string; master: string }>>;
  /** POST /api/v3/message; the node's refusal comes back as text. */
  send(boc: string): Promise<{ ok: true } | { ok: false; error: string }>;
  /** The transaction a message (hash hex) caused at its destination, or null. */
  transactionOf(messageHashHex: string): Promise<SweepTransaction | null>;
  masterchainSeqno(): Promise<number>;
  v3: ToncenterV3;
}

const raw = (a: string) => Address.parse(a).toRawString().toUpperCase();

export function tonSweepApi(network: ResolvedNetwork, config: Config, log: Logger, deadlineMs = 300_000): TonSweepApi {
  const headers: Record<string, string> = network.apiKey ? { 'X-API-Key': network.apiKey } : {};
  const http = createHttpClient({ baseUrl: network.rpcUrl, timeoutMs: config.indexer.rpcTimeoutMs, log, signal: AbortSignal.timeout(deadlineMs), maxBackoffMs: 5_000, headers });
  const v3 = createToncenterV3(http);
  async function get<T extends z.ZodType>(path: string, schema: T): Promise<z.infer<T>> {
    const endpoint = path.split('?')[0]!;
    let body: unknown;
    try {
      body = JSON.parse((await http.text(path)) ?? '');
    } catch {
      throw new TonApiError(`malformed answer to ${endpoint}: not JSON`);
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TonApiError(`malformed answer to ${endpoint}: ${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'unexpected shape'}`);
    }
    return parsed.data;
  }

  return {
    v3,
    async account(address) {
      const info = await get(`/api/v3/addressInformation?address=${encodeURIComponent(address)}&use_v2=false`, AddressInformationSchema);
      const status = info.status === 'uninitialized' ? 'uninit' : info.status;
      if (status !== 'active' && status !== 'uninit' && status !== 'frozen' && status !== 'nonexist') throw new TonApiError(`malformed answer to /api/v3/addressInformation: status ${info.status}`);
      let codeHash: string | null = null;
      if (status === 'active' && info.code) {
        try {
          codeHash = Cell.fromBase64(info.code).hash().toString('hex');
        } catch {
          throw new TonApiError('malformed answer to /api/v3/addressInformation: code is not a BOC');
        }
      }
      return { balance: info.balance, status, codeHash };
    },
    async seqno(address) {
      const res = await v3.runGetMethod(address, 'seqno', []);
      const value = res.stack[0]?.value;
      if (res.exitCode !== 0 || typeof value !== 'string') throw new TonApiError(`/api/v3/runGetMethod: seqno of ${address} failed (exit code ${res.exitCode})`);
      return Number(BigInt(value));
    },
    async publicKey(address) {
      const res = await v3.runGetMethod(address, 'get_public_key', []);
      const value = res.stack[0]?.value;
      if (res.exitCode !== 0 || typeof value !== 'string') throw new TonApiError(`/api/v3/runGetMethod: get_public_key of ${address} failed (exit code ${res.exitCode})`);
      let key: bigint;
      try {
        key = BigInt(value);
      } catch {
        throw new TonApiError(`malformed answer to /api/v3/runGetMethod: get_public_key of ${address} is ${value.slice(0, 80)}`);
      }
      if (key < 0n || key >= 1n << 256n) throw new TonApiError(`malformed answer to /api/v3/runGetMethod: get_public_key of ${address} is not 256 bits`);
      return key.toString(16).padStart(64, '0');
    },
    async jettonBalances(wallets) {
      const out = new Map<string, { balance: bigint; owner: string; master: string }>();
      for (let i = 0; i < wallets.length; i += 100) {
        const query = new URLSearchParams();
        for (const w of wallets.slice(i, i + 100)) query.append('address', w);
        query.set('limit', '1000');
        const answer = await get(`/api/v3/jetton/wallets?${query.toString()}`, JettonWalletsSchema);
        for (const w of answer.jetton_wallets) out.set(raw(w.address), { balance: w.balance, owner: raw(w.owner), master: raw(w.jetton) });
      }
      return out;
    },
    async send(boc) {
      // Not through the retrying client: a refusal (HTTP 4xx/5xx with the node's reason) is an answer to record, not a fault to retry.
      let res: Response;
      try {
        const { url, authorization } = withoutCredentials(network.rpcUrl);
        res = await fetch(`${url.replace(/\/+$/, '')}/api/v3/message`, {
          method: 'POST',
          headers: { ...headers, ...(authorization ? { authorization } : {}), 'content-type': 'application/json' },
          body: JSON.stringify({ boc }),
          signal: AbortSignal.timeout(config.indexer.rpcTimeoutMs),
          redirect: 'error',
        });
      } catch (err) {
        return { ok: false, error: `toncenter did not answer: ${originsOnly((err as Error).message)}` };
      }
      const text = await res.text();
      let body: unknown = null;
      try {
        body = JSON.parse(text);
      } catch {
        // toncenter answers JSON; anything else is shown as it came.
      }
      if (res.ok && MessageSent.safeParse(body).success) return { ok: true };
      const reason = ErrorSchema.safeParse(body);
      const detail = reason.success ? (reason.data.error ?? JSON.stringify(reason.data.detail ?? body)) : text.slice(0, 300);
      return { ok: false, error: `HTTP ${res.status}: ${detail}` };
    },
    async transactionOf(hashHex) {
      const hash = Buffer.from(hashHex, 'hex').toString('base64url');
      const answer = await get(`/api/v3/transactionsByMessage?msg_hash=${hash}&direction=in&limit=10`, TxsSchema);
      return answer.transactions[0] ?? null;
    },
    async masterchainSeqno() {
      return (await v3.masterchainHead()).seqno;
    },
  };
}

