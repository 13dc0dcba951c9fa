import { GatewayError } from '../domain/errors.ts';
import type { DaemonDeps } from './deps.ts';

export interface ConfirmResult {
  status: string;
  transactionHash: string | null;
  confirmations: number;
  requiredConfirmations: number;
  message: string;
}

/**
 * POST /checkout/api/v1/payments/{id}/confirm after the id token and body were checked: verifies the
 * receipt on chain and moves the payment to PROCESSING. Implemented with the EVM indexer (issue 6).
 */
export async function confirmContractPayment(_deps: DaemonDeps, _paymentId: string, _txHash: string): Promise<ConfirmResult> {
  throw new GatewayError('SERVICE_UNAVAILABLE', 'On-chain confirmation is not available on this server yet');
}
