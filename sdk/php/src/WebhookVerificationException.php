<?php

declare(strict_types=1);

namespace Chaingate;

/** A delivery that must be refused (answer 400). getReason(): missing, malformed, expired or mismatch. */
final class WebhookVerificationException extends \RuntimeException
{
    private const TEXT = ['missing' => 'is missing', 'malformed' => 'is malformed', 'expired' => 'is outside the time tolerance', 'mismatch' => 'does not match'];

    public function __construct(private readonly string $reason)
    {
        parent::__construct('webhook signature ' . (self::TEXT[$reason] ?? $reason));
    }

    public function getReason(): string
    {
        return $this->reason;
    }
}
