import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Config } from '../../config/schema.ts';
import { createLogger } from '../../logger.ts';
import type { FamilySweepSender, SignedSweepTx, SweepPlan } from '../sweep.ts';
import { AccountSchema, BroadcastSchema, ConstantSchema, InfoSchema, NowBlockSchema, PendingSchema, readMessage, tronSweepApi, type TronCall } from './sweep-api.ts';
import { to41, TronSweepPayloadSchema } from './sweep-payload.ts';
import { decodeRaw, decodeSigned } from './sweep-proto.ts';

// The server's last step of a Tron sweep: /wallet/broadcasthex with the signed protobuf (the exact
// bytes signed; /wallet/broadcasttransaction would rebuild them from JSON), then
// /wallet/gettransactioninfobyid until the block is solidified (or, on a node without
// /walletsolidity, the network's confirmations deep). java-tron answers a transaction it already
// has with DUP_TRANSACTION_ERROR, which counts as sent. A transaction past its expiration can never
// land: broadcast refuses it with "plan again" and sends nothing.

const quiet = () => createLogger('warn', { module: 'tron-sweep' });

async function headTime(call: TronCall): Promise<bigint> {
  return (await call('/wallet/getnowblock', {}, NowBlockSchema)).block_header.raw_data.timestamp;
}

function expirationOf(raw: string): bigint {
  return decodeRaw(decodeSigned(Uint8Array.from(Buffer.from(raw, 'hex'))).raw).expiration;
}

const EXPIRED = 'the plan has expired (a Tron transaction is good for 24 h after its reference block): nothing was sent; run sweep plan again, sign and broadcast the new plan';

/**
 * Before the first send: not expired, and each deposit still holds what the plan moves (a
 * TRC-20 transfer of more than the balance reverts and burns its energy; a TRX transfer fails).
 */
export async function tronSweepStale(network: ResolvedNetwork, config: Config, plan: SweepPlan): Promise<string | null> {
  const { call } = tronSweepApi(network, config, quiet());
  const first = TronSweepPayloadSchema.safeParse(plan.transactions[0]?.payload);
  if (first.success && BigInt(first.data.expiration) <= (await headTime(call))) return EXPIRED;
  for (const d of plan.deposits) {
    for (const move of d.moves) {
      let now: bigint;
      if (move.token === null) now = (await call('/wallet/getaccount', { address: to41(d.address) }, AccountSchema)).balance - ownTrxBurn(plan, d.address);
      else {
        const res = await call('/wallet/triggerconstantcontract', { owner_address: to41(d.address), contract_address: to41(move.token), function_selector: 'balanceOf(address)', parameter: to41(d.address).slice(2).padStart(64, '0') }, ConstantSchema);
        now = BigInt(`0x${res.constant_result?.[0] ?? '0'}`);
      }
      if (now < BigInt(move.amount)) return `deposit ${d.address} holds ${now} ${move.symbol} (atomic, after fees), the plan moves ${move.amount}: plan again`;
    }
  }
  return null;
}

/** What the deposit's own TRX transfers burn (their bandwidth): `fee` also counts the fee payer's transactions and energy limits. */
function ownTrxBurn(plan: SweepPlan, deposit: string): bigint {
  let burn = 0n;
  for (const tx of plan.transactions) {
    const p = TronSweepPayloadSchema.safeParse(tx.payload);
    if (p.success && p.data.kind === 'trx' && p.data.from === deposit) burn += BigInt(p.data.fee);
  }
  return burn;
}

async function info(call: TronCall, txid: string) {
  return call('/wallet/gettransactioninfobyid', { value: txid }, InfoSchema);
}

export const tronSweepSender: FamilySweepSender = {
  async broadcast(network: ResolvedNetwork, config: Config, tx: SignedSweepTx) {
    const { call } = tronSweepApi(network, config, quiet());
    if ((await info(call, tx.txid)).blockNumber !== undefined) return { accepted: true } as const;
    let expiration: bigint;
    try {
      expiration = expirationOf(tx.raw);
    } catch (err) {
      return { accepted: false, error: `not a signed Tron transaction: ${(err as Error).message}` } as const;
    }
    if (expiration <= (await headTime(call))) return { accepted: false, error: EXPIRED } as const;
    const answer = await call('/wallet/broadcasthex', { transaction: tx.raw }, BroadcastSchema);
    if (answer.result === true || answer.code === 'DUP_TRANSACTION_ERROR') return { accepted: true } as const;
    return { accepted: false, error: `${answer.code ?? 'refused'}: ${readMessage(answer.message)}` } as const;
  },

  async status(network: ResolvedNetwork, config: Config, txid: string) {
    const { call } = tronSweepApi(network, config, quiet());
    const seen = await info(call, txid);
    if (seen.blockNumber === undefined) {
      // Not in a block: in this node's pending pool, or unknown to it.
      const pending: { txID?: string } | null = await call('/wallet/gettransactionfrompending', { value: txid }, PendingSchema.nullable(), { optional: true });
      return { state: pending?.txID ? 'pending' : 'unknown' } as const;
    }
    const fee = seen.fee.toString();
    const outcome = seen.receipt?.result;
    if (seen.result === 'FAILED' || (outcome !== undefined && outcome !== 'SUCCESS')) {
      return { state: 'failed', fee, error: [outcome, readMessage(seen.resMessage)].filter(Boolean).join(': ') || 'failed on chain' } as const;
    }
    const solid = (await call('/walletsolidity/getnowblock', {}, NowBlockSchema.nullable(), { optional: true })) ?? null;
    if (solid) return { state: solid.block_header.raw_data.number >= seen.blockNumber ? 'final' : 'pending', fee } as const;
    const head = (await call('/wallet/getnowblock', {}, NowBlockSchema)).block_header.raw_data.number;
    return { state: head - seen.blockNumber + 1n >= BigInt(network.requiredConfirmations) ? 'final' : 'pending', fee } as const;
  },

  stale: tronSweepStale,
};
