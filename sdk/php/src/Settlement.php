<?php

declare(strict_types=1);

namespace Chaingate;

/**
 * What a payment received against what it asked for, exactly. chaingate records the difference and
 * never resolves it (docs/api.md, rule 10): fulfil on payment.completed, and decide yourself what an
 * under- or overpayment means for the order.
 */
final class Settlement
{
    public const EXACT = 'exact';
    public const UNDERPAID = 'underpaid';
    public const OVERPAID = 'overpaid';

    /**
     * @param string $status exact, underpaid or overpaid
     * @param string $difference received − expected, a plain decimal string ("-0.5", "0", "1.25")
     */
    public function __construct(
        public readonly string $status,
        public readonly string $expected,
        public readonly string $received,
        public readonly string $difference,
    ) {
    }

    /**
     * Classify a payment: a gateway Payment, or `$event['data']['payment']` of a webhook. The
     * expected amount is expectedAmount (expected_amount, else amount); the received one
     * receivedAmount (received_amount). Throws InvalidArgumentException for anything but
     * non-negative decimal strings.
     *
     * @param array<string, mixed> $payment
     */
    public static function of(array $payment, ?bool $useBcmath = null): self
    {
        $expected = self::amount($payment, ['expectedAmount', 'expected_amount', 'amount']);
        $received = self::amount($payment, ['receivedAmount', 'received_amount']);
        $cmp = Decimal::compare($received, $expected, $useBcmath);
        $status = $cmp === 0 ? self::EXACT : ($cmp < 0 ? self::UNDERPAID : self::OVERPAID);
        return new self($status, $expected, $received, Decimal::subtract($received, $expected, $useBcmath));
    }

    public function isExact(): bool
    {
        return $this->status === self::EXACT;
    }

    /**
     * @param array<string, mixed> $payment
     * @param list<string> $names
     */
    private static function amount(array $payment, array $names): string
    {
        foreach ($names as $name) {
            if (!array_key_exists($name, $payment) || $payment[$name] === null) {
                continue;
            }
            if (!Decimal::isDecimal($payment[$name])) {
                throw new \InvalidArgumentException("payment {$name} must be a non-negative decimal string, got " . json_encode($payment[$name]));
            }
            return $payment[$name];
        }
        throw new \InvalidArgumentException('payment has no ' . implode(' or ', $names));
    }
}
