import { getAddress, JsonRpcProvider, Network } from 'ethers';
import { z } from 'zod';
import { getNetwork } from '../chains/registry.ts';
import { GatewayError } from '../domain/errors.ts';
import { isInFlight } from '../domain/lifecycle.ts';
import { claimIsOffChain, findTransfer } from '../store/ledger-rows.ts';
import { recordTransfer } from '../store/lifecycle.ts';
import { loadPayment } from '../store/payments.ts';
import { recomputeCredit } from '../store/payment-transitions.ts';
import { PAYMENT_RECEIVED_TOPIC } from '../families/evm/evm-source.ts';
import { credentialedRequest } from '../families/jsonrpc/rpc.ts';
import type { DaemonDeps } from './deps.ts';

export interface ConfirmResult {
  status: string;
  transactionHash: string | null;
  confirmations: number;
  requiredConfirmations: number;
  message: string;
}

const hexQuantity = z.string().regex(/^0x[0-9a-fA-F]+$/);
const hex32 = z.string().regex(/^0x[0-9a-fA-F]{64}$/);
const hexAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
/** eth_getTransactionReceipt as the node must answer it; anything else is the node's fault, coded, never a 500. */
const ReceiptSchema = z.looseObject({
  status: hexQuantity,
  to: hexAddress.nullable(),
  blockNumber: hexQuantity,
  blockHash: hex32,
  transactionHash: hex32,
  from: hexAddress,
  logs: z.array(z.looseObject({ address: hexAddress, topics: z.array(hex32), data: z.string().regex(/^0x[0-9a-fA-F]*$/), logIndex: hexQuantity })),
});
type Receipt = z.infer<typeof ReceiptSchema>;

const ZERO_WORD = `0x${'0'.repeat(64)}`;

/**
 * POST /checkout/api/v1/payments/{id}/confirm, after the id token and body were checked: verifies
 * the receipt on chain and moves the payment to PROCESSING. The transfer is recorded like the
 * indexer records it (same unique row), so the indexer's later sighting of the event adds nothing.
 */
export async function confirmContractPayment(deps: DaemonDeps, paymentId: string, txHash: string, now = new Date()): Promise<ConfirmResult> {
  const { db } = deps.common;
  const payment = await loadPayment(db, paymentId, null, now);
  const current = (message: string): ConfirmResult => ({
    status: payment.status,
    transactionHash: payment.transactionHash ?? null,
    confirmations: payment.confirmations,
    requiredConfirmations: payment.requiredConfirmations,
    message,
  });
  if (payment.paymentType !== 'SMART_CONTRACT') throw new GatewayError('PAYMENT_NOT_CONFIRMABLE', 'Only web3 and service_wallet payments are confirmed with a transaction hash');
  if (isInFlight(payment.status) || payment.status === 'COMPLETED') return current('Payment is already being processed');
  if (payment.status === 'EXPIRED' || (payment.status === 'PENDING' && payment.expiresAt <= now)) throw new GatewayError('PAYMENT_EXPIRED', 'The payment window has closed');
  if (payment.status !== 'PENDING') throw new GatewayError('PAYMENT_NOT_CONFIRMABLE', `Payment is ${payment.status}`);

  const network = getNetwork(deps.registry, payment.blockchain, payment.isTestnet);
  const receipt = await fetchReceipt(network.rpcUrl, network.chainId, txHash);
  if (!receipt) throw new GatewayError('TX_NOT_FOUND', 'Transaction is not mined yet; retry in a few seconds');
  if (BigInt(receipt.status) !== 1n) throw new GatewayError('TX_FAILED', 'Transaction reverted on chain');
  const contract = payment.contractAddress ?? '';
  if (!receipt.to || receipt.to.toLowerCase() !== contract.toLowerCase()) {
    throw new GatewayError('TX_CONTRACT_MISMATCH', 'Transaction was not sent to the payment contract');
  }
  const wantToken = payment.tokenAddress ? `0x${'0'.repeat(24)}${payment.tokenAddress.slice(2).toLowerCase()}` : ZERO_WORD;
  const log = receipt.logs.find(
    (l) =>
      l.address.toLowerCase() === contract.toLowerCase() &&
      l.topics[0]?.toLowerCase() === PAYMENT_RECEIVED_TOPIC &&
      l.topics[1]?.toLowerCase() === (payment.externalId ?? '').toLowerCase() &&
      l.topics[3]?.toLowerCase() === wantToken,
  );
  if (!log) throw new GatewayError('TX_PAYMENT_MISMATCH', "Transaction holds no PaymentReceived event for this payment's externalId and coin");

  const key = { chain: payment.blockchain, network: payment.network };
  const logIndex = Number(BigInt(log.logIndex));
  const updated = await db.write(async (x) => {
    // A claim, not a fact: the indexer re-checks this block like any other and un-credits the
    // transfer if it leaves the canonical chain before completion. A block the indexer already
    // holds with another hash is refused now.
    if (await claimIsOffChain(x, key, BigInt(receipt.blockNumber), receipt.blockHash)) {
      throw new GatewayError('TX_NOT_FOUND', 'Transaction is not in the canonical chain; retry in a few seconds');
    }
    if (!(await findTransfer(x, key, receipt.transactionHash, logIndex))) {
      await recordTransfer(x, {
        ...key,
        txHash: receipt.transactionHash,
        logIndex,
        blockNumber: BigInt(receipt.blockNumber).toString(),
        blockHash: receipt.blockHash,
        fromAddress: getAddress(`0x${log.topics[2]!.slice(-40)}`),
        toAddress: getAddress(contract),
        tokenAddress: payment.tokenAddress ?? null,
        symbol: payment.cryptoCurrency,
        amount: BigInt(log.data).toString(),
        paymentId: payment.id,
        status: 'CREDITED',
        note: 'claimed by the buyer (/confirm); re-checked by the indexer',
      });
    }
    return recomputeCredit(x, payment.id, now);
  });
  return {
    status: updated.status,
    transactionHash: updated.transactionHash ?? null,
    confirmations: updated.confirmations,
    requiredConfirmations: updated.requiredConfirmations,
    message: 'Transaction verified; the payment is confirming on chain',
  };
}

async function fetchReceipt(url: string, chainId: number | null, txHash: string): Promise<Receipt | null> {
  const request = credentialedRequest(url);
  request.timeout = 10_000;
  const network = chainId ? Network.from(chainId) : undefined;
  const provider = new JsonRpcProvider(request, network, { staticNetwork: network, batchMaxCount: 1, cacheTimeout: -1 });
  let answer: unknown;
  try {
    answer = await provider.send('eth_getTransactionReceipt', [txHash]);
  } catch (cause) {
    throw new GatewayError('SERVICE_UNAVAILABLE', 'The chain node could not be reached; retry shortly', { cause });
  } finally {
    provider.destroy();
  }
  if (answer === null || answer === undefined) return null;
  const parsed = ReceiptSchema.safeParse(answer);
  if (!parsed.success) throw new GatewayError('SERVICE_UNAVAILABLE', 'The chain node answered a malformed receipt; retry shortly');
  return parsed.data;
}
