import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  classifyTransfer,
  confirmationsAt,
  evaluateDepth,
  INVOICE_STATUSES,
  INVOICE_TRANSITIONS,
  invoiceTransition,
  PAYMENT_STATUSES,
  PAYMENT_TRANSITIONS,
  paymentTransition,
  settleHeight,
  type PaymentFacts,
  type PaymentStatus,
} from './lifecycle.ts';

describe('payment transitions, one fact at a time', () => {
  const allowed: Record<keyof typeof PAYMENT_TRANSITIONS, [PaymentStatus[], PaymentStatus, string | null]> = {
    credited: [['PENDING', 'EXPIRED'], 'PROCESSING', null],
    uncredited: [['PROCESSING', 'CONFIRMING'], 'PENDING', null],
    deepened: [['PROCESSING'], 'CONFIRMING', 'payment.confirming'],
    settled: [['PROCESSING', 'CONFIRMING'], 'COMPLETED', 'payment.completed'],
    reverted: [['PROCESSING', 'CONFIRMING'], 'FAILED', 'payment.failed'],
    windowClosed: [['PENDING'], 'EXPIRED', 'payment.expired'],
    refunded: [['COMPLETED', 'FAILED', 'EXPIRED'], 'REFUNDED', 'payment.refunded'],
  };
  for (const [fact, [from, to, event]] of Object.entries(allowed) as [keyof typeof PAYMENT_TRANSITIONS, [PaymentStatus[], PaymentStatus, string | null]][]) {
    test(`${fact}: ${from.join('/')} -> ${to}${event ? ` with ${event}` : ''}; every other status stays`, () => {
      for (const status of PAYMENT_STATUSES) {
        const t = paymentTransition(status, fact);
        if (from.includes(status)) {
          assert.equal(t?.to, to, `${status} --${fact}-->`);
          assert.equal(t?.event, event);
        } else {
          assert.equal(t, null, `${status} must not move on ${fact}`);
        }
      }
    });
  }

  test('COMPLETED, FAILED and REFUNDED are final for the chain watchers; REFUNDED is final for everything', () => {
    const chainFacts = (Object.keys(PAYMENT_TRANSITIONS) as (keyof typeof PAYMENT_TRANSITIONS)[]).filter((f) => f !== 'refunded');
    for (const status of ['COMPLETED', 'FAILED', 'REFUNDED'] as const) {
      for (const fact of chainFacts) assert.equal(paymentTransition(status, fact), null, `${status} on ${fact}`);
    }
    assert.equal(paymentTransition('REFUNDED', 'refunded'), null);
  });
});

describe('invoice transitions, one fact at a time', () => {
  test('each fact moves only from its listed statuses', () => {
    const expected: Record<keyof typeof INVOICE_TRANSITIONS, [string[], string, string | null]> = {
      checkedOut: [['OPEN'], 'PAYMENT_PENDING', null],
      revived: [['OPEN', 'EXPIRED'], 'PAYMENT_PENDING', null],
      paid: [['PAYMENT_PENDING', 'OPEN', 'EXPIRED'], 'PAID', 'invoice.paid'],
      attemptEnded: [['PAYMENT_PENDING'], 'OPEN', null],
      expired: [['OPEN', 'PAYMENT_PENDING'], 'EXPIRED', 'invoice.expired'],
      cancelled: [['OPEN', 'DRAFT'], 'CANCELLED', 'invoice.cancelled'],
    };
    for (const [fact, [from, to, event]] of Object.entries(expected) as [keyof typeof INVOICE_TRANSITIONS, [string[], string, string | null]][]) {
      for (const status of INVOICE_STATUSES) {
        const t = invoiceTransition(status, fact);
        if (from.includes(status)) assert.deepEqual([t?.to, t?.event], [to, event], `${status} --${fact}-->`);
        else assert.equal(t, null, `${status} must not move on ${fact}`);
      }
    }
  });

  test('PAID and CANCELLED are final', () => {
    for (const status of ['PAID', 'CANCELLED'] as const) {
      for (const fact of Object.keys(INVOICE_TRANSITIONS) as (keyof typeof INVOICE_TRANSITIONS)[]) assert.equal(invoiceTransition(status, fact), null);
    }
  });
});

describe('depth at the processed height', () => {
  test('confirmations count the block itself and never go negative', () => {
    assert.equal(confirmationsAt(100n, 99n), 0);
    assert.equal(confirmationsAt(100n, 100n), 1);
    assert.equal(confirmationsAt(100n, 111n), 12);
    assert.equal(settleHeight(100n, 12), 111n);
  });

  test('PROCESSING passes through CONFIRMING, then completes at the required count', () => {
    const base = { status: 'PROCESSING' as const, lastCreditBlock: 100n, required: 12, finalized: null };
    assert.deepEqual(evaluateDepth({ ...base, at: 99n }), { confirmations: 0, steps: [], settledAt: null });
    assert.deepEqual(evaluateDepth({ ...base, at: 100n }), { confirmations: 1, steps: ['deepened'], settledAt: null });
    // A catch-up that jumps past the required depth in one range emits the same steps as a live indexer.
    assert.deepEqual(evaluateDepth({ ...base, at: 500n }), { confirmations: 12, steps: ['deepened', 'settled'], settledAt: 111n });
    assert.deepEqual(evaluateDepth({ ...base, status: 'CONFIRMING', at: 110n }), { confirmations: 11, steps: [], settledAt: null });
  });

  test('with one confirmation required a payment completes straight from PROCESSING', () => {
    assert.deepEqual(evaluateDepth({ status: 'PROCESSING', lastCreditBlock: 5n, required: 1, at: 5n, finalized: null }).steps, ['settled']);
  });

  test('finality gates completion; the count stays the floor', () => {
    const base = { status: 'CONFIRMING' as const, lastCreditBlock: 100n, required: 12, at: 200n };
    assert.deepEqual(evaluateDepth({ ...base, finalized: 99n }).steps, [], 'not final yet: waits');
    assert.deepEqual(evaluateDepth({ ...base, finalized: 100n }).steps, ['settled']);
    assert.deepEqual(evaluateDepth({ ...base, at: 105n, finalized: 105n }).steps, [], 'final but below the count: waits');
  });

  test('only in-flight payments are evaluated', () => {
    for (const status of ['PENDING', 'COMPLETED', 'FAILED', 'EXPIRED'] as const) {
      assert.deepEqual(evaluateDepth({ status, lastCreditBlock: 1n, required: 1, at: 10n, finalized: null }).steps, []);
    }
  });
});

describe('classifyTransfer', () => {
  const expiresAt = new Date('2026-11-23T12:00:00Z');
  const inWindow = Math.floor(expiresAt.getTime() / 1000) - 60;
  const afterWindow = Math.floor(expiresAt.getTime() / 1000) + 1;
  const payment = (over: Partial<PaymentFacts> = {}): PaymentFacts => ({
    status: 'PENDING',
    tokenAddress: '0xToken',
    cryptoCurrency: 'USDT',
    expiresAt,
    requiredConfirmations: 12,
    lastCreditBlock: null,
    ...over,
  });
  const transfer = (over: Partial<{ token: string | null; blockNumber: bigint; blockTime: number; reverted: boolean; revertReason: string }> = {}) => ({
    token: '0xtoken',
    blockNumber: 100n,
    blockTime: inWindow,
    reverted: false,
    ...over,
  });

  test('no payment: UNMATCHED; reverted: REVERTED; another coin: NOT_CREDITED', () => {
    assert.equal(classifyTransfer(transfer(), null).status, 'UNMATCHED');
    assert.equal(classifyTransfer(transfer({ reverted: true }), payment()).status, 'REVERTED');
    assert.equal(classifyTransfer(transfer({ reverted: true, revertReason: 'bounced: the deposit wallet is not deployed' }), payment()).note, 'bounced: the deposit wallet is not deployed');
    assert.equal(classifyTransfer(transfer({ token: '0xother' }), payment()).status, 'NOT_CREDITED');
    assert.equal(classifyTransfer(transfer({ token: null }), payment()).status, 'NOT_CREDITED');
    assert.equal(classifyTransfer(transfer({ token: '0xtoken' }), payment({ tokenAddress: null })).status, 'NOT_CREDITED');
  });

  test('in the window: CREDITED (the token address compares case-insensitively)', () => {
    assert.deepEqual(classifyTransfer(transfer(), payment()), { status: 'CREDITED', note: null, lateReason: null });
  });

  test('after the window with nothing credited: LATE, reported', () => {
    const v = classifyTransfer(transfer({ blockTime: afterWindow }), payment());
    assert.equal(v.status, 'LATE');
    assert.equal(v.lateReason, 'after_window');
  });

  test('a payment the clock expired is still credited for funds sent within its window', () => {
    assert.equal(classifyTransfer(transfer(), payment({ status: 'EXPIRED' })).status, 'CREDITED');
    assert.equal(classifyTransfer(transfer({ blockTime: afterWindow }), payment({ status: 'EXPIRED' })).status, 'LATE');
  });

  test('more funds before the required depth are credited; after it, EXTRA', () => {
    const inFlight = payment({ status: 'CONFIRMING', lastCreditBlock: 100n });
    assert.equal(classifyTransfer(transfer({ blockNumber: 111n, blockTime: afterWindow }), inFlight).status, 'CREDITED', 'at the settle height: still counts');
    const v = classifyTransfer(transfer({ blockNumber: 112n }), inFlight);
    assert.equal(v.status, 'EXTRA');
    assert.equal(v.lateReason, 'after_completion');
    assert.equal(classifyTransfer(transfer(), payment({ status: 'COMPLETED', lastCreditBlock: 90n })).status, 'EXTRA');
  });

  test('after a failure: not credited, reported', () => {
    const v = classifyTransfer(transfer(), payment({ status: 'FAILED' }));
    assert.equal(v.status, 'LATE');
    assert.equal(v.lateReason, 'after_failure');
  });
});
