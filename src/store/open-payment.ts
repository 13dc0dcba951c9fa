import { GatewayError } from '../domain/errors.ts';
import type { Executor, SqlValue } from './executor.ts';
import type { BuyerPayment, PaymentTerms } from '../domain/views.ts';
import { nextReference } from './reference-ids.ts';
import { checkOutInvoice, leasePoolAddress } from './lifecycle.ts';

// A checkout's writes in hand-written SQL (docs/performance.md): the claim of the invoice, the lease
// of a deposit address, the day's reference number and the payment row, in one write
// transaction (the gateway's idempotent write, or one of its own). Everything that reads or
// prices (src/app/checkout.ts planCheckout) happens before, outside the transaction.

/** Everything a payment row needs, decided before the transaction opens. */
export interface PaymentPlan extends PaymentTerms {
  id: string;
  invoiceId: string;
  merchantId: string;
  /** Contract payments: the treasury wallet, no lease. Null for a direct payment (leased). */
  treasury: string | null;
  contractAddress: string | null;
  externalId: string | null;
  externalIdUuid: string | null;
  metadata: Record<string, unknown>;
  expiresAt: Date;
  now: Date;
  /** Taken before the transaction (ReferenceBlocks, PostgreSQL); null: from the day's counter in it. */
  referenceId: string | null;
}

export interface OpenedPayment extends BuyerPayment {
  expectedAmount: string;
  receivedAmount: string;
}


const INSERT_SQL = `insert into payment (id, reference_id, invoice_id, merchant_id, status, payment_type, method, blockchain, network, is_testnet,
    crypto_currency, decimals, token_address, amount, expected_amount, received_amount, address, confirmations, required_confirmations,
    transaction_hash, block_number, contract_address, external_id, external_id_uuid, metadata, expires_at, completed_at, created_at, updated_at)
  values (?, ?, ?, ?, 'PENDING', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '0', ?, 0, ?, null, null, ?, ?, ?, ?, ?, null, ?, ?)`;

const notClaimed = () => new GatewayError('INVOICE_NOT_AVAILABLE', 'Invoice was claimed by another checkout or is no longer open');
const noWallet = (plan: PaymentPlan) => new GatewayError('NO_AVAILABLE_WALLET', `No free deposit address for ${plan.blockchain} (${plan.network}); try later`);

function insertParams(plan: PaymentPlan, referenceId: string, address: string): SqlValue[] {
  return [
    plan.id, referenceId, plan.invoiceId, plan.merchantId, plan.paymentType, plan.method, plan.blockchain, plan.network, plan.isTestnet,
    plan.cryptoCurrency, plan.decimals, plan.tokenAddress, plan.amount, plan.amount, address, plan.requiredConfirmations,
    plan.contractAddress, plan.externalId, plan.externalIdUuid, JSON.stringify(plan.metadata), plan.expiresAt, plan.now, plan.now,
  ];
}

function opened(plan: PaymentPlan, referenceId: string, address: string): OpenedPayment {
  return {
    id: plan.id,
    referenceId,
    status: 'PENDING',
    paymentType: plan.paymentType,
    method: plan.method,
    blockchain: plan.blockchain,
    network: plan.network,
    isTestnet: plan.isTestnet,
    cryptoCurrency: plan.cryptoCurrency,
    decimals: plan.decimals,
    tokenAddress: plan.tokenAddress,
    amount: plan.amount,
    expectedAmount: plan.amount,
    receivedAmount: '0',
    address,
    confirmations: 0,
    requiredConfirmations: plan.requiredConfirmations,
    transactionHash: null,
    contractAddress: plan.contractAddress,
    externalId: plan.externalId,
    externalIdUuid: plan.externalIdUuid,
    expiresAt: plan.expiresAt,
    createdAt: plan.now,
    completedAt: null,
  };
}

/** The checkout's writes inside the write's transaction (rolled back with it on any error). */
export async function openPayment(x: Executor, plan: PaymentPlan): Promise<OpenedPayment> {
  if (!(await checkOutInvoice(x, plan.invoiceId, plan.now))) throw notClaimed();
  let address = plan.treasury;
  if (address === null) {
    const leased = await leasePoolAddress(x, { chain: plan.blockchain, isTestnet: plan.isTestnet }, plan.id, plan.now);
    if (!leased) throw noWallet(plan);
    address = leased.address;
  }
  // The day's counter last: its row lock is held only until the commit that follows.
  const referenceId = plan.referenceId ?? (await nextReference(x, 'PAY', plan.now));
  await x.run(INSERT_SQL, insertParams(plan, referenceId, address));
  return opened(plan, referenceId, address);
}
