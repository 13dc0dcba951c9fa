import { Address } from '@ton/core';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Config } from '../../config/schema.ts';
import type { FamilySweepSender, SignedSweepTx, SweepPlan } from '../sweep.ts';
import { createLogger } from '../../logger.ts';
import { tonSweepApi, type SweepTransaction } from './sweep-api.ts';
import { decodeMessage, OP_JETTON_TRANSFER, readJettonTransfer, readSignedExternal, TonSweepPayloadSchema } from './sweep-messages.ts';
import { senderFee } from './sender-fee.ts';
import { short } from './sweep-sign.ts';

// The server's last step of a TON sweep: POST /api/v3/message with the signed external message,
// then the transaction it caused (transactionsByMessage) until a masterchain block commits it, and
// for a jetton transfer also the jetton wallet's transaction, since that is where a transfer can
// still fail. A message whose valid_until has passed is refused with "plan again" before anything
// is sent: the wallet would drop it. Sending the same message twice is harmless (the seqno).

const quiet = () => createLogger('warn', { module: 'ton-sweep' });
const now = () => Math.floor(Date.now() / 1000);
const expired = (validUntil: number) =>
  `the plan's messages expired at ${new Date(validUntil * 1000).toISOString()} (valid_until; a TON plan is good for 6 hours): nothing was sent; run sweep plan again, sign and broadcast the new plan`;

/** Why a transaction did not do what it was sent for, or null. */
function failure(tx: SweepTransaction, what: string): string | null {
  const d = tx.description;
  const compute = d.compute_ph;
  if (compute?.skipped) return `${what}: compute phase skipped (${compute.reason ?? 'no reason given'})`;
  if (compute && compute.success === false) return `${what}: exit code ${compute.exit_code ?? '?'}`;
  if (d.action && d.action.success === false) return `${what}: action phase failed with result code ${d.action.result_code ?? '?'}${d.action.result_code === 37 ? ' (not enough TON)' : ''}`;
  if (d.aborted) return `${what}: aborted`;
  return null;
}

const hexOf = (b64: string) => Buffer.from(b64, 'base64').toString('hex');

/**
 * Before the first send: the plan not expired, every wallet's seqno and deployment as planned (a
 * wallet that sent since would refuse the order), and every jetton wallet still holding what its
 * transfer moves (less would fail the transfer and bounce its TON back to the deposit).
 */
export async function tonSweepStale(network: ResolvedNetwork, config: Config, plan: SweepPlan): Promise<string | null> {
  const api = tonSweepApi(network, config, quiet());
  const payloads = plan.transactions.map((t) => TonSweepPayloadSchema.parse(t.payload));
  const first = payloads[0];
  if (first && first.validUntil <= now() + 30) return expired(first.validUntil);
  for (const p of payloads) {
    const state = await api.account(p.wallet);
    if (p.deploy && state.status === 'active') return `wallet ${short(p.wallet)} was deployed after planning (it sent something): plan again`;
    if (!p.deploy && state.status === 'active') {
      const seqno = await api.seqno(p.wallet);
      if (seqno !== p.seqno) return `wallet ${short(p.wallet)} is at seqno ${seqno}, the plan signed ${p.seqno}: plan again`;
    }
    const transfers = p.messages.filter((m) => m.jetton !== undefined).map((m) => {
      const msg = decodeMessage(m.message, 'plan');
      return { wallet: msg.info.type === 'internal' ? msg.info.dest.toRawString().toUpperCase() : '', amount: readJettonTransfer(msg.body, 'plan').amount };
    });
    if (transfers.length === 0) continue;
    const live = await api.jettonBalances(transfers.map((t) => t.wallet));
    for (const t of transfers) {
      const balance = live.get(t.wallet)?.balance ?? 0n;
      if (balance < t.amount) return `deposit ${short(p.wallet)}'s jetton wallet ${short(t.wallet)} holds ${balance} (atomic), the plan moves ${t.amount}: plan again`;
    }
  }
  return null;
}

export const tonSweepSender: FamilySweepSender = {
  async broadcast(network: ResolvedNetwork, config: Config, tx: SignedSweepTx) {
    const api = tonSweepApi(network, config, quiet());
    let signed: ReturnType<typeof readSignedExternal>;
    try {
      signed = readSignedExternal(tx.raw);
    } catch (err) {
      return { accepted: false, error: `not a signed wallet v4r2 message: ${(err as Error).message}` };
    }
    if (signed.hash !== tx.txid) return { accepted: false, error: `the message's hash is ${signed.hash}, not ${tx.txid}` };
    if (await api.transactionOf(tx.txid)) return { accepted: true };
    if (signed.validUntil <= now()) return { accepted: false, error: expired(signed.validUntil) };
    const sent = await api.send(tx.raw);
    return sent.ok ? { accepted: true } : { accepted: false, error: sent.error };
  },

  async status(network: ResolvedNetwork, config: Config, txid: string) {
    const api = tonSweepApi(network, config, quiet());
    const tx = await api.transactionOf(txid);
    if (!tx) return { state: 'unknown' };
    // What the order cost the wallet, forwarding fees included (sender-fee.ts: TON's fee rule).
    const fee = tx.total_fees === undefined ? undefined : senderFee(tx).toString();
    const failed = failure(tx, 'the wallet refused the order');
    if (failed) return { state: 'failed', error: failed, ...(fee ? { fee } : {}) };
    if (tx.mc_block_seqno === null) return { state: 'pending' };
    // A jetton transfer can still fail in the jetton wallet (its TON then bounces back to the deposit).
    for (const out of tx.out_msgs ?? []) {
      const op = out.opcode === null || out.opcode === undefined ? null : Number(BigInt(out.opcode) & 0xffffffffn);
      if (op !== OP_JETTON_TRANSFER) continue;
      const child = await api.transactionOf(hexOf(out.hash));
      if (!child) return { state: 'pending' };
      const refused = failure(child, `the jetton wallet ${short(Address.parse(child.account).toString())} refused the transfer`);
      if (refused) return { state: 'failed', error: `${refused}; its TON bounced back to the deposit`, ...(fee ? { fee } : {}) };
      if (child.mc_block_seqno === null) return { state: 'pending' };
    }
    return { state: 'final', ...(fee ? { fee } : {}) };
  },

  stale: tonSweepStale,
};
