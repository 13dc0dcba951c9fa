import { getCompiledTransactionMessageDecoder } from '@solana/kit';
import { z } from 'zod';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Config } from '../../config/schema.ts';
import type { FamilySweepSender, SignedSweepTx, SweepPlan } from '../sweep.ts';
import { createLogger } from '../../logger.ts';
import { TOKEN_PROGRAMS } from './sweep-message.ts';
import { TokenAccountsSchema } from './sweep-accounts.ts';
import { pubkey, solanaRpc, u64 } from './sweep-rpc.ts';
import { short } from './sweep-sign.ts';

// The server's last step of a Solana sweep: sendTransaction (base64, with the node's preflight
// simulation, so a transaction that would fail is refused with the runtime's reason and costs
// nothing), then getSignatureStatuses until the cluster calls it finalized. A signature already
// known to the cluster is never sent again, and a plan whose blockhash has expired is refused
// with "plan again": its transactions can no longer land, and nothing was sent.

const StatusesSchema = z.looseObject({
  value: z.array(z.looseObject({ slot: z.number().int().nonnegative(), err: z.unknown(), confirmationStatus: z.enum(['processed', 'confirmed', 'finalized']).nullish() }).nullable()),
});
const ValidSchema = z.looseObject({ value: z.boolean() });
const TransactionSchema = z.looseObject({ meta: z.looseObject({ fee: u64, err: z.unknown() }).nullable() }).nullable();

/** The recent blockhash the signed message carries (its lifetime). */
function blockhashOf(raw: string): string {
  const bytes = new Uint8Array(Buffer.from(raw, 'base64'));
  const count = bytes[0] ?? 0;
  if (count === 0 || count > 127) throw new Error('not a signed Solana transaction (no signatures)');
  return getCompiledTransactionMessageDecoder().decode(bytes.subarray(1 + 64 * count)).lifetimeToken;
}

const quiet = () => createLogger('warn', { module: 'solana-sweep' });

/** The node's refusal, with the program log line that says why when there is one. */
function refusal(code: number, message: string, data: unknown): string {
  const logs = (data as { logs?: unknown } | undefined)?.logs;
  const line = Array.isArray(logs) ? logs.filter((l): l is string => typeof l === 'string').find((l) => /error|failed|insufficient/i.test(l)) : undefined;
  return `${code} ${message}${line ? ` (${line})` : ''}`;
}

/**
 * Before the first send: the blockhash still valid, and each deposit's token balances what the
 * plan moves. A token account holding more than planned (a late payment) would fail closeAccount,
 * less would fail transferChecked: either way the plan is stale and is made again. More SOL is
 * fine (the next plan sweeps it). A refund closes nothing, so only less than it moves is stale.
 */
export async function solanaSweepStale(network: ResolvedNetwork, config: Config, plan: SweepPlan): Promise<string | null> {
  const { call } = solanaRpc(network, config, quiet());
  const first = plan.transactions[0]?.payload as { blockhash?: unknown } | undefined;
  if (typeof first?.blockhash === 'string' && !(await call('isBlockhashValid', [first.blockhash, { commitment: 'processed' }], ValidSchema)).value) {
    return 'the blockhash has expired (a Solana plan is good for about 1 minute): plan again, sign and broadcast the new plan';
  }
  for (const deposit of plan.deposits) {
    const lists = await Promise.all(TOKEN_PROGRAMS.map((programId) => call('getTokenAccountsByOwner', [deposit.address, { programId }, { encoding: 'jsonParsed', commitment: 'confirmed' }], TokenAccountsSchema)));
    const live = new Map<string, bigint>();
    for (const a of lists.flatMap((l) => l.value)) {
      const info = a.account.data.parsed.info;
      live.set(info.mint, (live.get(info.mint) ?? 0n) + BigInt(info.tokenAmount.amount));
    }
    for (const move of deposit.moves) {
      if (move.token === null) continue;
      const now = live.get(move.token) ?? 0n;
      if (plan.kind === 'refund' ? now < BigInt(move.amount) : now !== BigInt(move.amount)) return `deposit ${short(deposit.address)} holds ${now} ${move.symbol} (atomic), the plan moves ${move.amount}: plan again`;
    }
  }
  return null;
}

const sender = {
  async broadcast(network: ResolvedNetwork, config: Config, tx: SignedSweepTx): Promise<{ accepted: true } | { accepted: false; error: string }> {
    const { call, attempt } = solanaRpc(network, config, quiet());
    const known = await call('getSignatureStatuses', [[tx.txid], { searchTransactionHistory: true }], StatusesSchema);
    if (known.value[0]) return { accepted: true };
    let blockhash: string;
    try {
      blockhash = blockhashOf(tx.raw);
    } catch (err) {
      return { accepted: false, error: (err as Error).message };
    }
    const valid = await call('isBlockhashValid', [blockhash, { commitment: 'processed' }], ValidSchema);
    if (!valid.value) {
      return { accepted: false, error: 'the plan\'s blockhash has expired (a Solana plan is good for about 150 slots, ≈ 1 minute): nothing was sent; run sweep plan again, sign and broadcast the new plan' };
    }
    const sent = await attempt('sendTransaction', [tx.raw, { encoding: 'base64', preflightCommitment: 'confirmed' }], pubkey.or(z.string()));
    if (sent.ok) {
      return sent.result === tx.txid ? { accepted: true } : { accepted: false, error: `the node answered signature ${sent.result}, not ${tx.txid}` };
    }
    // Sent before by another run whose answer was lost: the cluster has it, which is what we wanted.
    if (/already been processed/i.test(sent.message) || (sent.data as { err?: unknown } | undefined)?.err === 'AlreadyProcessed') return { accepted: true };
    return { accepted: false, error: refusal(sent.code, sent.message, sent.data) };
  },

  async status(network: ResolvedNetwork, config: Config, txid: string): Promise<{ state: 'pending' | 'final' | 'failed' | 'unknown'; fee?: string; error?: string }> {
    const { call } = solanaRpc(network, config, quiet());
    const status = (await call('getSignatureStatuses', [[txid], { searchTransactionHistory: true }], StatusesSchema)).value[0];
    if (!status) return { state: 'unknown' };
    if (status.err !== null && status.err !== undefined) return { state: 'failed', error: JSON.stringify(status.err) };
    if (status.confirmationStatus !== 'finalized') return { state: 'pending' };
    const tx = await call('getTransaction', [txid, { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 }], TransactionSchema);
    return tx?.meta ? { state: 'final', fee: tx.meta.fee.toString() } : { state: 'final' };
  },

  stale: solanaSweepStale,
};

export const solanaSweepSender: FamilySweepSender = sender;
