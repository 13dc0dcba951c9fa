import type { AvailableCurrencies, ResolvedNetwork } from '../../chains/registry.ts';
import type { BuyerInvoice, BuyerPayment, InvoiceRecord } from '../../domain/views.ts';
import { maskEmail, maskName } from './mask.ts';
import { paymentUri } from './payment-uri.ts';

// Wire shapes of the buyer checkout surface (docs/checkout.md). Nothing here carries metadata,
// customerMetadata, orderId or the merchant's other settings.

const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);

/** GET /checkout/api/v1/invoices/{id}, in the spec's field order. */
export function publicInvoiceView(inv: BuyerInvoice, offered: AvailableCurrencies) {
  return {
    id: inv.id,
    referenceId: inv.referenceId,
    amount: inv.amount,
    currency: inv.currency,
    description: inv.description,
    merchant: { name: inv.merchant.name },
    availableBlockchains: offered.availableBlockchains,
    availableCurrencies: offered.availableCurrencies,
    customerEmail: inv.customerEmail ? maskEmail(inv.customerEmail) : null,
    customerName: inv.customerName ? maskName(inv.customerName) : null,
    status: inv.status,
    expiresAt: iso(inv.expiresAt)!,
    returnUrl: inv.returnUrl ?? null,
    cancelUrl: inv.cancelUrl ?? null,
  };
}

/** GET /checkout/api/v1/invoices/{id}/status: the cheap poll, 200 in every invoice state. */
export function invoiceStatusView(inv: Pick<InvoiceRecord, 'status' | 'paidAt'>, latest: { id: string } | null) {
  return { status: inv.status, paymentId: latest?.id ?? null, paidAt: iso(inv.paidAt) };
}

type Payment = BuyerPayment;

function isContract(p: Payment): boolean {
  return p.paymentType === 'SMART_CONTRACT';
}

function uriOf(p: Payment, network: ResolvedNetwork): string {
  return paymentUri({ family: network.family, chainId: network.chainId, address: p.address, amount: p.amount, decimals: p.decimals, tokenAddress: p.tokenAddress ?? null });
}

/** Fields a contract payment (web3, service_wallet) carries instead of a deposit address. */
function contractFields(p: Payment) {
  return {
    contractAddress: p.contractAddress ?? null,
    externalId: p.externalId ?? null,
    externalIdUuid: p.externalIdUuid ?? null,
    treasuryWallet: p.address,
  };
}

/** `payment` of POST /checkout/api/v1/invoices/{id}/checkout. */
export function checkoutPaymentView(p: Payment, network: ResolvedNetwork) {
  const contract = isContract(p);
  return {
    id: p.id,
    referenceId: p.referenceId,
    method: p.method,
    status: p.status,
    // Contract payments are paid through the contract, never by a transfer to an address.
    paymentAddress: contract ? null : p.address,
    paymentUri: contract ? null : uriOf(p, network),
    amount: p.amount,
    cryptoCurrency: p.cryptoCurrency,
    blockchain: p.blockchain,
    network: p.network,
    /** What the page shows: "Ethereum Sepolia" for a testnet payment, never a mainnet label. */
    networkLabel: network.label,
    decimals: p.decimals,
    tokenAddress: p.tokenAddress ?? null,
    chainId: network.chainId,
    requiredConfirmations: p.requiredConfirmations,
    expiresAt: iso(p.expiresAt)!,
    createdAt: iso(p.createdAt)!,
    ...(contract ? contractFields(p) : {}),
    ...(p.method === 'service_wallet' ? { requiresConfirmation: true as const } : {}),
  };
}

/**
 * GET /checkout/api/v1/payments/{id}/status. The leased address must never be shown after
 * payment.expiresAt (spec), so from that instant paymentAddress and paymentUri are null whatever the
 * status; before it, paymentAddress is the deposit address (direct) or the treasury wallet (contract).
 */
export function publicPaymentStatusView(p: Payment, network: ResolvedNetwork, now = new Date()) {
  const visible = now < p.expiresAt;
  const contract = isContract(p);
  return {
    id: p.id,
    status: p.status,
    confirmations: p.confirmations,
    requiredConfirmations: p.requiredConfirmations,
    transactionHash: p.transactionHash ?? null,
    blockchain: p.blockchain,
    amount: p.amount,
    cryptoCurrency: p.cryptoCurrency,
    paymentAddress: visible ? p.address : null,
    expiresAt: iso(p.expiresAt)!,
    method: p.method,
    network: p.network,
    networkLabel: network.label,
    decimals: p.decimals,
    tokenAddress: p.tokenAddress ?? null,
    chainId: network.chainId,
    paymentUri: visible && !contract ? uriOf(p, network) : null,
    createdAt: iso(p.createdAt)!,
    completedAt: iso(p.completedAt),
    ...(contract ? { ...contractFields(p), treasuryWallet: visible ? p.address : null } : {}),
  };
}
