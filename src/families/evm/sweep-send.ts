import { z } from 'zod';
import type { ResolvedNetwork } from '../../chains/registry.ts';
import type { Config } from '../../config/schema.ts';
import { createLogger } from '../../logger.ts';
import { createRpc, type Rpc } from '../jsonrpc/rpc.ts';
import { data32, quantity } from '../jsonrpc/schemas.ts';
import type { FamilySweepSender } from '../sweep.ts';
import { EvmSweepPayloadSchema, type EvmSweepPayload } from './sweep-payload.ts';

// The server's last step of an EVM sweep: eth_sendRawTransaction, then the receipt and its depth
// against the network's requiredConfirmations. Sending the same raw transaction twice is harmless:
// a node that already has it answers "already known" (geth) or "nonce too low" once it is mined,
// and both count as accepted when the node knows the transaction by its hash.

const ALREADY_SENT = /already known|known transaction|already imported|nonce too low|transaction already exists|tx already in mempool/i;

const ReceiptSchema = z.looseObject({
  status: quantity,
  blockNumber: quantity,
  gasUsed: quantity,
  effectiveGasPrice: quantity.optional(),
  /** OP Stack chains (optimism, base) charge the L1 data fee beside the L2 gas. */
  l1Fee: quantity.optional(),
});
const KnownTxSchema = z.looseObject({ hash: data32 });

function withRpc<T>(network: ResolvedNetwork, config: Config, fn: (rpc: Rpc) => Promise<T>): Promise<T> {
  const log = createLogger(config.log.level, { component: 'sweep', chain: network.chain }, config.log.format, [network.rpcUrl]);
  const rpc = createRpc({ url: network.rpcUrl, chainId: network.chainId, log, timeoutMs: config.indexer.rpcTimeoutMs, maxBackoffMs: 2_000 });
  return fn(rpc).finally(() => rpc.close());
}

async function known(rpc: Rpc, txid: string): Promise<boolean> {
  const tx = await rpc.call('eth_getTransactionByHash', [txid], { schema: KnownTxSchema.nullable(), allowNull: true, maxAttempts: 3 });
  return tx !== null && tx !== undefined;
}

export const evmSweepSender: FamilySweepSender = {
  broadcast(network, config, tx) {
    return withRpc(network, config, async (rpc) => {
      try {
        // One attempt: a node's refusal (nonce too low, insufficient funds) is an answer to record, not a fault to retry.
        await rpc.call('eth_sendRawTransaction', [tx.raw], { schema: data32, maxAttempts: 1 });
        return { accepted: true } as const;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (ALREADY_SENT.test(message) && (await known(rpc, tx.txid))) return { accepted: true } as const;
        return { accepted: false, error: message } as const;
      }
    });
  },

  // Before the first send: every sender's next nonce must still be the one the plan signed, and a
  // deposit sending its native coin must still hold the amount and its fee reserve (counting the
  // gas top-up a refund sends it first).
  stale(network, config, plan) {
    return withRpc(network, config, async (rpc) => {
      const firstNonce = new Map<string, { nonce: number; id: string }>();
      const payloads = new Map<string, EvmSweepPayload>();
      for (const tx of plan.transactions) {
        const parsed = EvmSweepPayloadSchema.safeParse(tx.payload);
        if (!parsed.success) return `${tx.id} is not an EVM sweep transaction`;
        payloads.set(tx.id, parsed.data);
      }
      for (const tx of plan.transactions) {
        const p = payloads.get(tx.id) as EvmSweepPayload;
        const seen = firstNonce.get(p.from.toLowerCase());
        if (!seen || p.nonce < seen.nonce) firstNonce.set(p.from.toLowerCase(), { nonce: p.nonce, id: tx.id });
        if (p.kind === 'native') {
          const balance = BigInt(await rpc.call('eth_getBalance', [p.from, 'latest'], { schema: quantity, maxAttempts: 3 }));
          const topUps = tx.after
            .map((id) => payloads.get(id))
            .reduce((sum, q) => sum + (q?.kind === 'top-up' && q.to.toLowerCase() === p.from.toLowerCase() ? BigInt(q.value) : 0n), 0n);
          if (balance + topUps < BigInt(p.value) + BigInt(p.gasLimit) * BigInt(p.maxFeePerGas)) return `${tx.id}: the deposit no longer holds the planned amount and its fee; plan again`;
        }
      }
      for (const [from, { nonce, id }] of firstNonce) {
        const current = Number(BigInt(await rpc.call('eth_getTransactionCount', [from, 'pending'], { schema: quantity, maxAttempts: 3 })));
        if (current !== nonce) return `${id}: its sender's next nonce is ${current}, the plan signed ${nonce} (something was sent from it since planning); plan again`;
      }
      return null;
    });
  },

  status(network, config, txid) {
    return withRpc(network, config, async (rpc) => {
      const receipt = await rpc.call('eth_getTransactionReceipt', [txid], { schema: ReceiptSchema.nullable(), allowNull: true, maxAttempts: 3 });
      if (receipt === null || receipt === undefined) return { state: (await known(rpc, txid)) ? 'pending' : 'unknown' } as const;
      const fee = (BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice ?? '0x0') + BigInt(receipt.l1Fee ?? '0x0')).toString();
      if (BigInt(receipt.status) !== 1n) return { state: 'failed', fee, error: 'the transaction reverted' } as const;
      const head = BigInt(await rpc.call('eth_blockNumber', [], { schema: quantity, maxAttempts: 3 }));
      const confirmations = head - BigInt(receipt.blockNumber) + 1n;
      return { state: confirmations >= BigInt(network.requiredConfirmations) ? 'final' : 'pending', fee } as const;
    });
  },
};
