<?php

declare(strict_types=1);

namespace Chaingate;

/**
 * The one exception of the client: every refused or failed call.
 *
 * getCode() is the gateway's error code as a string (docs/errors.md), like PDOException's:
 * `HTTP_<status>` for an answer without the envelope, `NETWORK_ERROR` when no answer arrived
 * (then getStatus() is 0). getRequestId() is the answer's requestId: quote it to the operator.
 */
final class ChaingateException extends \RuntimeException
{
    /** @param list<array{path: string, message: string}>|null $details */
    public function __construct(
        string $message,
        string $errorCode,
        private readonly int $status,
        private readonly ?string $requestId = null,
        private readonly ?array $details = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, 0, $previous);
        $this->code = $errorCode;
    }

    public function getStatus(): int
    {
        return $this->status;
    }

    public function getRequestId(): ?string
    {
        return $this->requestId;
    }

    /** @return list<array{path: string, message: string}>|null the fields of a VALIDATION_ERROR */
    public function getDetails(): ?array
    {
        return $this->details;
    }
}
