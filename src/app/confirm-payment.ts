import { getNetwork, type ResolvedNetwork } from '../chains/registry.ts';
import { GatewayError } from '../domain/errors.ts';
import { isInFlight, sameCoin } from '../domain/lifecycle.ts';
import { openReceiptReader } from '../families/families.ts';
import { MalformedAnswerError, type ClaimedReceipt } from '../families/source.ts';
import { applyClaim } from '../indexer/ledger.ts';
import type { Logger } from '../logger.ts';
import { loadPayment } from '../store/payments.ts';
import type { DaemonDeps } from './deps.ts';

export interface ConfirmResult {
  status: string;
  transactionHash: string | null;
  confirmations: number;
  requiredConfirmations: number;
  message: string;
}

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
  const contract = payment.contractAddress ?? '';
  const receipt = await readReceipt(network, deps.common.log, txHash, contract);
  if (!receipt) throw new GatewayError('TX_NOT_FOUND', 'Transaction is not mined yet; retry in a few seconds');
  if (!receipt.succeeded) throw new GatewayError('TX_FAILED', 'Transaction reverted on chain');
  if (!receipt.calledContract) throw new GatewayError('TX_CONTRACT_MISMATCH', 'Transaction was not sent to the payment contract');
  const externalId = (payment.externalId ?? '').toLowerCase();
  const transfer = receipt.payments.find((t) => t.externalId === externalId && sameCoin(t.token, payment.tokenAddress));
  if (!transfer) throw new GatewayError('TX_PAYMENT_MISMATCH', "Transaction holds no PaymentReceived event for this payment's externalId and coin");

  const key = { chain: payment.blockchain, network: payment.network };
  const updated = await applyClaim(db, key, { transfer, paymentId: payment.id, symbol: payment.cryptoCurrency }, now);
  // A block the indexer already holds with another hash is refused now.
  if (!updated) throw new GatewayError('TX_NOT_FOUND', 'Transaction is not in the canonical chain; retry in a few seconds');
  return {
    status: updated.status,
    transactionHash: updated.transactionHash ?? null,
    confirmations: updated.confirmations,
    requiredConfirmations: updated.requiredConfirmations,
    message: 'Transaction verified; the payment is confirming on chain',
  };
}

/** The receipt through the network's family; a node that cannot answer is the server's problem, coded, never a 500. */
async function readReceipt(network: ResolvedNetwork, log: Logger, txHash: string, contract: string): Promise<ClaimedReceipt | null> {
  const reader = await openReceiptReader(network, log);
  if (!reader) throw new GatewayError('PAYMENT_NOT_CONFIRMABLE', `${network.chain} has no payment contract`);
  try {
    return await reader.receipt(txHash, contract);
  } catch (cause) {
    if (cause instanceof MalformedAnswerError) throw new GatewayError('SERVICE_UNAVAILABLE', 'The chain node answered a malformed receipt; retry shortly', { cause });
    throw new GatewayError('SERVICE_UNAVAILABLE', 'The chain node could not be reached; retry shortly', { cause });
  } finally {
    reader.close();
  }
}
