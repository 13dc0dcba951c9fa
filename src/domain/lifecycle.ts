// The payment and invoice lifecycles: which status may move to which, on what fact, with which
// event. Pure data and functions; src/store applies them with conditional updates
// (`where status in (from)`), so racing writers can never double-apply a transition.

export const PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'CONFIRMING', 'COMPLETED', 'FAILED', 'EXPIRED', 'REFUNDED'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

export const INVOICE_STATUSES = ['DRAFT', 'OPEN', 'PAYMENT_PENDING', 'PAID', 'EXPIRED', 'CANCELLED'] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

/** A payment that may still receive credit: an address leased (PENDING) or money in flight. */
export const LIVE_PAYMENT_STATUSES = ['PENDING', 'PROCESSING', 'CONFIRMING'] as const satisfies readonly PaymentStatus[];
/** Money seen on chain and counting confirmations. */
export const IN_FLIGHT_PAYMENT_STATUSES = ['PROCESSING', 'CONFIRMING'] as const satisfies readonly PaymentStatus[];

export function isLivePayment(status: string): boolean {
  return (LIVE_PAYMENT_STATUSES as readonly string[]).includes(status);
}

export function isInFlight(status: string): boolean {
  return (IN_FLIGHT_PAYMENT_STATUSES as readonly string[]).includes(status);
}

export type PaymentEventType = 'payment.confirming' | 'payment.completed' | 'payment.failed' | 'payment.expired' | 'payment.refunded';
export type InvoiceEventType = 'invoice.paid' | 'invoice.expired' | 'invoice.cancelled';

export interface Transition<S extends string, E extends string> {
  from: readonly S[];
  to: S;
  event: E | null;
}

/**
 * Every payment transition, named by the fact that causes it:
 * - credited: a transfer was credited (by the indexer, or claimed by /confirm and then re-checked
 *   by the indexer). An EXPIRED payment is revived: its window was judged by the wall clock, but
 *   the chain says the money was sent in time (docs/expiry.md).
 * - uncredited: a reorg removed every credited transfer.
 * - deepened: confirmations > 0 but below the required count.
 * - settled: confirmations reached the required count and the chain calls the block final.
 * - reverted: the transaction the payment is matched with reverted on chain. A reverted transfer
 *   to a PENDING payment changes nothing (anyone can send one; it is recorded, never credited).
 * - windowClosed: nothing seen before payment.expiresAt.
 * - refunded: refunds final on chain add up to everything the payment received (docs/refunds.md).
 *   Only an ended payment is refunded; new funds to a REFUNDED payment are LATE, as after FAILED.
 */
export const PAYMENT_TRANSITIONS = {
  credited: { from: ['PENDING', 'EXPIRED'], to: 'PROCESSING', event: null },
  uncredited: { from: ['PROCESSING', 'CONFIRMING'], to: 'PENDING', event: null },
  deepened: { from: ['PROCESSING'], to: 'CONFIRMING', event: 'payment.confirming' },
  settled: { from: ['PROCESSING', 'CONFIRMING'], to: 'COMPLETED', event: 'payment.completed' },
  reverted: { from: ['PROCESSING', 'CONFIRMING'], to: 'FAILED', event: 'payment.failed' },
  windowClosed: { from: ['PENDING'], to: 'EXPIRED', event: 'payment.expired' },
  refunded: { from: ['COMPLETED', 'FAILED', 'EXPIRED'], to: 'REFUNDED', event: 'payment.refunded' },
} as const satisfies Record<string, Transition<PaymentStatus, PaymentEventType>>;
export type PaymentFact = keyof typeof PAYMENT_TRANSITIONS;

/**
 * Every invoice transition:
 * - checkedOut: a checkout leased an address (within the invoice's expiresAt, checked by the caller).
 * - revived: an EXPIRED payment was revived by funds sent within its window.
 * - paid: a payment of the invoice completed. Money outranks the clock: an invoice that expired
 *   or reopened meanwhile is still PAID.
 * - attemptEnded: no live payment is left and the invoice is within its expiresAt: OPEN again.
 * - expired: past expiresAt with no live payment.
 * - cancelled: the merchant cancelled it before any payment.
 */
export const INVOICE_TRANSITIONS = {
  checkedOut: { from: ['OPEN'], to: 'PAYMENT_PENDING', event: null },
  revived: { from: ['OPEN', 'EXPIRED'], to: 'PAYMENT_PENDING', event: null },
  paid: { from: ['PAYMENT_PENDING', 'OPEN', 'EXPIRED'], to: 'PAID', event: 'invoice.paid' },
  attemptEnded: { from: ['PAYMENT_PENDING'], to: 'OPEN', event: null },
  expired: { from: ['OPEN', 'PAYMENT_PENDING'], to: 'EXPIRED', event: 'invoice.expired' },
  cancelled: { from: ['OPEN', 'DRAFT'], to: 'CANCELLED', event: 'invoice.cancelled' },
} as const satisfies Record<string, Transition<InvoiceStatus, InvoiceEventType>>;
export type InvoiceFact = keyof typeof INVOICE_TRANSITIONS;

/** The transition a fact causes from this status, or null when it does not apply. */
export function paymentTransition(status: PaymentStatus, fact: PaymentFact): Transition<PaymentStatus, PaymentEventType> | null {
  const t: Transition<PaymentStatus, PaymentEventType> = PAYMENT_TRANSITIONS[fact];
  return t.from.includes(status) ? t : null;
}

export function invoiceTransition(status: InvoiceStatus, fact: InvoiceFact): Transition<InvoiceStatus, InvoiceEventType> | null {
  const t: Transition<InvoiceStatus, InvoiceEventType> = INVOICE_TRANSITIONS[fact];
  return t.from.includes(status) ? t : null;
}

/** Confirmations of a block at `height`, as of processed height `at`: at - height + 1, never negative. */
export function confirmationsAt(blockNumber: bigint, at: bigint): number {
  const depth = at - blockNumber + 1n;
  return depth <= 0n ? 0 : Number(depth > 1_000_000n ? 1_000_000n : depth);
}

/** The height at which funds credited in `lastCreditBlock` reach `required` confirmations. */
export function settleHeight(lastCreditBlock: bigint, required: number): bigint {
  return lastCreditBlock + BigInt(Math.max(1, required)) - 1n;
}

export interface DepthInput {
  status: PaymentStatus;
  /** Block of the newest credited transfer (new funds need their own confirmations). */
  lastCreditBlock: bigint;
  required: number;
  /** The height the indexer has processed. */
  at: bigint;
  /** The chain's finalized height, or null where it has no finality signal (counts alone decide). */
  finalized: bigint | null;
}

export interface DepthOutcome {
  /** Shown confirmations: capped at the required count, so completion always stamps the same value. */
  confirmations: number;
  /** Transitions to apply in order (PROCESSING passes through CONFIRMING whenever required > 1). */
  steps: PaymentFact[];
  /** Height whose block time stamps completedAt: where the required depth was reached. */
  settledAt: bigint | null;
}

/**
 * Evaluates an in-flight payment at the processed height. Completion needs the required count
 * (the floor) and, where the chain has one, its finality signal over the newest credited block.
 * The outcome depends only on chain facts, never on when the indexer happened to look.
 */
export function evaluateDepth(input: DepthInput): DepthOutcome {
  if (!isInFlight(input.status)) return { confirmations: 0, steps: [], settledAt: null };
  const raw = confirmationsAt(input.lastCreditBlock, input.at);
  const confirmations = Math.min(raw, input.required);
  const steps: PaymentFact[] = [];
  const reached = raw >= input.required;
  const final = input.finalized === null || input.finalized >= input.lastCreditBlock;
  // Funds in block b have one confirmation at height b: with more than one required, the payment
  // is CONFIRMING before it completes, whatever range size brought the indexer past b.
  if (input.status === 'PROCESSING' && raw > 0 && input.required > 1) steps.push('deepened');
  if (reached && final) steps.push('settled');
  return { confirmations, steps, settledAt: reached ? settleHeight(input.lastCreditBlock, input.required) : null };
}

/** OWN: the deployment's own money reaching a deposit (a fee payer's top-up, a refund's change): never the buyer's. */
export const TRANSFER_STATUSES = ['CREDITED', 'UNMATCHED', 'LATE', 'EXTRA', 'NOT_CREDITED', 'OWN', 'REORGED', 'REVERTED'] as const;
export type TransferStatus = (typeof TRANSFER_STATUSES)[number];

/**
 * An observed transfer is written once with its classification (classifyTransfer); the one move is
 * reorged: its block left the canonical chain. A transfer seen again in the new chain is a new
 * classification of the same row (the ledger re-records it), never a move out of REORGED here.
 */
export const TRANSFER_TRANSITIONS = {
  reorged: { from: ['CREDITED', 'UNMATCHED', 'LATE', 'EXTRA', 'NOT_CREDITED', 'OWN', 'REVERTED'], to: 'REORGED', event: null },
} as const satisfies Record<string, Transition<TransferStatus, never>>;

/**
 * The blockHash of a cursor row an indexer wrote before it read any block (it failed first, see
 * recordIndexerFailure in src/indexer/run-indexer.ts): a failure to show, no position, no report.
 */
export const NO_BLOCK_YET = '';

export type PoolAddressStatus = 'FREE' | 'LEASED';
/** A pool address is leased once, to one payment, for good (docs/wallets.md): nothing moves it back. */
export const POOL_TRANSITIONS = {
  leased: { from: ['FREE'], to: 'LEASED', event: null },
} as const satisfies Record<string, Transition<PoolAddressStatus, never>>;

export type DeliveryStatus = 'PENDING' | 'DELIVERED' | 'FAILED';
/**
 * A webhook delivery: each attempt leaves it PENDING (retried later), DELIVERED (a 2xx) or FAILED
 * (out of attempts). A replay is a new delivery of the same event, never a move back.
 */
export const DELIVERY_TRANSITIONS = {
  retried: { from: ['PENDING'], to: 'PENDING', event: null },
  delivered: { from: ['PENDING'], to: 'DELIVERED', event: null },
  gaveUp: { from: ['PENDING'], to: 'FAILED', event: null },
} as const satisfies Record<string, Transition<DeliveryStatus, never>>;
export type DeliveryFact = keyof typeof DELIVERY_TRANSITIONS;

export type KeyStatus = 'IN_FLIGHT' | 'COMPLETED';
/** An Idempotency-Key is claimed IN_FLIGHT and completed with its answer in the same transaction. */
export const KEY_TRANSITIONS = {
  completed: { from: ['IN_FLIGHT'], to: 'COMPLETED', event: null },
} as const satisfies Record<string, Transition<KeyStatus, never>>;

export interface TransferFacts {
  /** Token contract; null for the native coin. */
  token: string | null;
  blockNumber: bigint;
  /** Unix seconds. */
  blockTime: number;
  reverted: boolean;
  /** The chain's reason for a reverted transfer (e.g. a TON bounce), kept as its note. */
  revertReason?: string;
}

export interface PaymentFacts {
  status: PaymentStatus;
  tokenAddress: string | null;
  cryptoCurrency: string;
  expiresAt: Date;
  requiredConfirmations: number;
  /** Block of the newest credited transfer; null when nothing is credited. */
  lastCreditBlock: bigint | null;
}

export interface Classification {
  status: TransferStatus;
  note: string | null;
  /** Funds that reached the payment's address but are not credited: the merchant hears of them (payment.late_funds). */
  lateReason: 'after_window' | 'after_completion' | 'after_failure' | null;
}

function sameAddress(a: string | null | undefined, b: string | null | undefined): boolean {
  return (a ?? '').toLowerCase() === (b ?? '').toLowerCase();
}

/** A transfer's coin is the payment's: the native coin (no token) for a native payment, else the same token contract. */
export function sameCoin(token: string | null, paymentToken: string | null | undefined): boolean {
  return token === null ? !paymentToken : sameAddress(token, paymentToken);
}

/**
 * What a transfer means for its payment, from chain facts alone (spec rules 10 and 12): amounts
 * never block; funds sent after the window closed are not credited; funds after the payment
 * reached its required depth are extra. Judged by block time and height, so an indexer that was
 * down decides exactly as a live one did.
 */
export function classifyTransfer(t: TransferFacts, payment: PaymentFacts | null): Classification {
  if (!payment) return { status: 'UNMATCHED', note: 'no payment uses this address or externalId', lateReason: null };
  if (t.reverted) return { status: 'REVERTED', note: t.revertReason ?? 'transaction reverted on chain', lateReason: null };
  const coinMatches = sameCoin(t.token, payment.tokenAddress);
  if (!coinMatches) {
    const note = t.token ? `token ${t.token} is not the registry's ${payment.cryptoCurrency} contract` : `native coin sent to a ${payment.cryptoCurrency} payment`;
    return { status: 'NOT_CREDITED', note, lateReason: null };
  }
  const settledBefore =
    payment.status === 'COMPLETED' ||
    (isInFlight(payment.status) && payment.lastCreditBlock !== null && settleHeight(payment.lastCreditBlock, payment.requiredConfirmations) < t.blockNumber);
  if (settledBefore) return { status: 'EXTRA', note: 'arrived after the payment reached its required confirmations', lateReason: 'after_completion' };
  if (payment.status === 'FAILED' || payment.status === 'REFUNDED') return { status: 'LATE', note: `payment is ${payment.status}`, lateReason: 'after_failure' };
  const nothingCredited = payment.status === 'PENDING' || payment.status === 'EXPIRED';
  if (nothingCredited && t.blockTime * 1000 > payment.expiresAt.getTime()) {
    return { status: 'LATE', note: 'sent after the payment window closed', lateReason: 'after_window' };
  }
  return { status: 'CREDITED', note: null, lateReason: null };
}
