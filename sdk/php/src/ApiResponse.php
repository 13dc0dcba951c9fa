<?php

declare(strict_types=1);

namespace Chaingate;

/** One successful answer: the envelope's data and the exact bytes the server sent. */
final class ApiResponse
{
    /** @param array<string, string> $headers lower-cased names */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
        public readonly mixed $data,
        public readonly ?string $requestId,
        /** True when the server replayed the stored answer of an earlier request with this Idempotency-Key. */
        public readonly bool $replayed,
        public readonly ?string $idempotencyKey,
    ) {
    }
}
