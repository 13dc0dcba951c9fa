import { createRpc, type Rpc } from '../jsonrpc/rpc.ts';
import { ReceiptSchema } from '../jsonrpc/schemas.ts';
import { MalformedAnswerError, type ClaimedReceipt, type ReceiptReaderFactory } from '../source.ts';
import { PAYMENT_RECEIVED_TOPIC, paymentEventParties } from './payment-event.ts';

// A buyer's claim (POST /checkout/…/confirm) is read from the transaction's receipt: one call, one
// attempt, so the buyer hears at once that the node is down and retries, instead of a request held
// open by the indexer's retry loop.

/** How long a claim waits for the node. */
const CLAIM_TIMEOUT_MS = 10_000;

/** The transaction's receipt, with the payment contract's events in it; null while it is not mined. */
export async function readClaimReceipt(rpc: Rpc, txHash: string, paymentContract: string): Promise<ClaimedReceipt | null> {
  const answer = await rpc.call<unknown>('eth_getTransactionReceipt', [txHash], { allowNull: true, maxAttempts: 1 });
  if (answer === null || answer === undefined) return null;
  const parsed = ReceiptSchema.safeParse(answer);
  if (!parsed.success) throw new MalformedAnswerError('malformed answer to eth_getTransactionReceipt');
  const receipt = parsed.data;
  const contract = paymentContract.toLowerCase();
  return {
    txHash: receipt.transactionHash,
    succeeded: BigInt(receipt.status) === 1n,
    calledContract: receipt.to !== null && receipt.to.toLowerCase() === contract,
    blockNumber: BigInt(receipt.blockNumber),
    blockHash: receipt.blockHash,
    payments: receipt.logs
      .filter((log) => log.address.toLowerCase() === contract && log.topics.length === 4 && log.data.length === 66 && log.topics[0]!.toLowerCase() === PAYMENT_RECEIVED_TOPIC)
      .map((log) => ({
        txHash: receipt.transactionHash,
        logIndex: Number(BigInt(log.logIndex)),
        blockNumber: BigInt(receipt.blockNumber),
        blockHash: receipt.blockHash,
        amount: BigInt(log.data),
        reverted: false,
        ...paymentEventParties(log),
      })),
  };
}

/** The EVM family's reader of claims: a JSON-RPC client of the network's endpoint, pinned to its chain id. */
export const evmReceiptReader: ReceiptReaderFactory = (network, log) => {
  const rpc = createRpc({ url: network.rpcUrl, chainId: network.chainId, log, timeoutMs: CLAIM_TIMEOUT_MS });
  return { receipt: (txHash, paymentContract) => readClaimReceipt(rpc, txHash, paymentContract), close: () => rpc.close() };
};
