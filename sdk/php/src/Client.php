<?php

declare(strict_types=1);

namespace Chaingate;

/**
 * A client of the chaingate merchant gateway (/api/v1), needing ext-curl and ext-json only.
 *
 * Every attempt is signed when it is sent (t must be within 300 s of the server's clock). Every
 * write carries an Idempotency-Key, yours or a fresh UUID, kept across that call's own retries, so
 * a retry can never create a second invoice. Retried with exponential back-off: network errors,
 * 409 "still being processed" (the first attempt is running), 429 (after Retry-After) and 5xx.
 * Anything else throws ChaingateException with the gateway's code, the HTTP status and the
 * requestId. Results are arrays exactly as on the wire (docs/api.md#objects): camelCase keys,
 * amounts as strings.
 */
final class Client
{
    public const VERSION = '0.1.0';

    private readonly string $baseUrl;
    private readonly int $maxAttempts;
    private readonly int $retryBaseMs;
    private readonly int $timeoutSeconds;
    /** @var callable(int): void */
    private $sleepMs;

    /**
     * @param array{maxAttempts?: int, retryBaseMs?: int, timeoutSeconds?: int, sleepMs?: callable(int): void} $options
     */
    public function __construct(string $baseUrl, private readonly string $apiKey, private readonly string $apiSecret, array $options = [])
    {
        $this->baseUrl = rtrim($baseUrl, '/');
        $this->maxAttempts = max(1, (int) ($options['maxAttempts'] ?? 5));
        $this->retryBaseMs = (int) ($options['retryBaseMs'] ?? 250);
        $this->timeoutSeconds = (int) ($options['timeoutSeconds'] ?? 30);
        $this->sleepMs = $options['sleepMs'] ?? static function (int $ms): void {
            usleep($ms * 1000);
        };
    }

    /**
     * POST /api/v1/invoices. `amount` is a string of minor units of `currency` ("2500" is USD 25.00).
     * Pass your order's own $idempotencyKey (store it with the order) so a retry of this operation,
     * even from another process, replays the first invoice instead of making a second.
     *
     * @param array{orderId: string, amount: string|int, currency: string, description?: string, customerEmail?: string, customerName?: string, customerMetadata?: array<string, mixed>, metadata?: array<string, mixed>, returnUrl?: string, cancelUrl?: string, expiresInMinutes?: int} $input
     * @return array<string, mixed> the Invoice
     */
    public function createInvoice(array $input, ?string $idempotencyKey = null): array
    {
        if (!array_key_exists('amount', $input) || is_float($input['amount']) || is_bool($input['amount'])) {
            throw new \InvalidArgumentException('amount is a string of minor units (e.g. "2500"), never a float');
        }
        $input['amount'] = (string) $input['amount'];
        foreach (['metadata', 'customerMetadata'] as $object) {
            // An empty PHP array would be sent as [] where an object is expected.
            if (isset($input[$object]) && $input[$object] === []) {
                $input[$object] = new \stdClass();
            }
        }
        return $this->request('POST', '/api/v1/invoices', $input, $idempotencyKey)->data;
    }

    /** @return array<string, mixed> the Invoice with its `payments` */
    public function getInvoice(string $invoiceId): array
    {
        return $this->request('GET', '/api/v1/invoices/' . rawurlencode($invoiceId))->data;
    }

    /** @return array{id: string, referenceId: string, status: string, paymentId: ?string, paidAt: ?string, expiresAt: string} */
    public function invoiceStatus(string $invoiceId): array
    {
        return $this->request('GET', '/api/v1/invoices/' . rawurlencode($invoiceId) . '/status')->data;
    }

    /** @return array<string, mixed> the cancelled Invoice */
    public function cancelInvoice(string $invoiceId, ?string $idempotencyKey = null): array
    {
        return $this->request('DELETE', '/api/v1/invoices/' . rawurlencode($invoiceId), null, $idempotencyKey)->data;
    }

    /**
     * POST /api/v1/invoices/{id}/checkout: open a payment in a chosen chain and coin.
     *
     * @param array{blockchain: string, cryptoCurrency: string, testnet?: bool} $input
     * @return array{invoice: array<string, mixed>, payment: array<string, mixed>}
     */
    public function checkout(string $invoiceId, array $input, ?string $idempotencyKey = null): array
    {
        return $this->request('POST', '/api/v1/invoices/' . rawurlencode($invoiceId) . '/checkout', $input, $idempotencyKey)->data;
    }

    /**
     * @param array{status?: string, blockchain?: string, skip?: int, take?: int} $query
     * @return array{items: list<array<string, mixed>>, pagination: array{total: int, page: int, limit: int, hasMore: bool}}
     */
    public function listPayments(array $query = []): array
    {
        $q = http_build_query(array_filter($query, static fn ($v) => $v !== null), '', '&', PHP_QUERY_RFC3986);
        return $this->request('GET', '/api/v1/payments' . ($q === '' ? '' : '?' . $q))->data;
    }

    /** @return array<string, mixed> the Payment, the same shape as a listPayments item */
    public function getPayment(string $paymentId): array
    {
        return $this->request('GET', '/api/v1/payments/' . rawurlencode($paymentId))->data;
    }

    /** @return array{items: list<array<string, mixed>>} the payment's refunds, oldest first (chaingate's addition) */
    public function paymentRefunds(string $paymentId): array
    {
        return $this->request('GET', '/api/v1/payments/' . rawurlencode($paymentId) . '/refunds')->data;
    }

    /** @return array{id: string, referenceId: string, status: string, confirmations: int, requiredConfirmations: int, expiresAt: string, completedAt: ?string} */
    public function paymentStatus(string $paymentId): array
    {
        return $this->request('GET', '/api/v1/payments/' . rawurlencode($paymentId) . '/status')->data;
    }

    /**
     * Webhook::verify with this client's apiSecret.
     *
     * @param array<string, string|list<string>> $headers
     * @return array<string, mixed>
     */
    public function verifyWebhook(array $headers, string $rawBody, int $tolerance = Webhook::TOLERANCE_SECONDS): array
    {
        return Webhook::verify($headers, $rawBody, $this->apiSecret, $tolerance);
    }

    public function standardWebhookSecret(): string
    {
        return Webhook::standardSecret($this->apiSecret);
    }

    /**
     * One logical operation: serialised once, signed at each attempt, retried as documented.
     * $path starts with /api/v1 and may carry a query string (it is not signed).
     *
     * @param array<string, mixed>|null $payload
     */
    public function request(string $method, string $path, ?array $payload = null, ?string $idempotencyKey = null): ApiResponse
    {
        $m = strtoupper($method);
        $body = $payload === null ? '' : json_encode($payload, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
        // One key for every attempt of this operation.
        $key = in_array($m, Signer::WRITE_METHODS, true) ? ($idempotencyKey ?? Signer::uuid()) : null;
        for ($attempt = 1; ; $attempt++) {
            $backoff = min($this->retryBaseMs * 2 ** ($attempt - 1), 30_000);
            $headers = Signer::sign($this->apiKey, $this->apiSecret, $m, $path, $body, $key);
            $headers['User-Agent'] = 'chaingate-php/' . self::VERSION;
            try {
                [$status, $answerHeaders, $raw] = $this->send($m, $this->baseUrl . $path, $headers, $body);
            } catch (\RuntimeException $err) {
                if ($attempt >= $this->maxAttempts) {
                    throw new ChaingateException('network error: ' . $err->getMessage(), 'NETWORK_ERROR', 0, null, null, $err);
                }
                ($this->sleepMs)($backoff);
                continue;
            }
            $envelope = json_decode($raw, true, 512, JSON_BIGINT_AS_STRING);
            $envelope = is_array($envelope) ? $envelope : null;
            if ($envelope !== null && ($envelope['success'] ?? null) === true) {
                $replayed = strtolower($answerHeaders['idempotent-replayed'] ?? '') === 'true';
                $requestId = is_string($envelope['requestId'] ?? null) ? $envelope['requestId'] : null;
                return new ApiResponse($status, $answerHeaders, $raw, $envelope['data'] ?? null, $requestId, $replayed, $key);
            }
            $error = is_array($envelope['error'] ?? null) ? $envelope['error'] : [];
            $code = is_string($error['code'] ?? null) ? $error['code'] : "HTTP_{$status}";
            $message = is_string($error['message'] ?? null) ? $error['message'] : substr($raw, 0, 200);
            $inFlight = $status === 409 && stripos($message, 'still being processed') !== false;
            if (($inFlight || $status === 429 || $status >= 500) && $attempt < $this->maxAttempts) {
                $after = (int) ($answerHeaders['retry-after'] ?? 0);
                ($this->sleepMs)($after > 0 ? min($after * 1000, 30_000) : $backoff);
                continue;
            }
            $requestId = is_string($envelope['requestId'] ?? null) ? $envelope['requestId'] : ($answerHeaders['x-request-id'] ?? null);
            $details = is_array($error['details'] ?? null) ? $error['details'] : null;
            throw new ChaingateException("{$status} {$code}: {$message}", $code, $status, $requestId, $details);
        }
    }

    /**
     * @param array<string, string> $headers
     * @return array{0: int, 1: array<string, string>, 2: string}
     */
    private function send(string $method, string $url, array $headers, string $body): array
    {
        $lines = ['Expect:']; // no 100-continue round trip before larger bodies
        foreach ($headers as $name => $value) {
            $lines[] = "{$name}: {$value}";
        }
        $answerHeaders = [];
        $ch = curl_init($url);
        curl_setopt_array($ch, [
            CURLOPT_CUSTOMREQUEST => $method,
            CURLOPT_HTTPHEADER => $lines,
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_FOLLOWLOCATION => false, // a signed request is never re-sent elsewhere
            CURLOPT_CONNECTTIMEOUT => min(10, $this->timeoutSeconds),
            CURLOPT_TIMEOUT => $this->timeoutSeconds,
            CURLOPT_HEADERFUNCTION => static function ($ch, string $line) use (&$answerHeaders): int {
                if (str_starts_with($line, 'HTTP/')) {
                    $answerHeaders = []; // a new response (after a 100 Continue)
                } elseif (($colon = strpos($line, ':')) !== false) {
                    $answerHeaders[strtolower(trim(substr($line, 0, $colon)))] = trim(substr($line, $colon + 1));
                }
                return strlen($line);
            },
        ]);
        if ($body !== '') {
            curl_setopt($ch, CURLOPT_POSTFIELDS, $body);
        }
        $raw = curl_exec($ch);
        if (!is_string($raw)) {
            $message = curl_error($ch);
            curl_close($ch);
            throw new \RuntimeException($message);
        }
        $status = (int) curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
        curl_close($ch);
        return [$status, $answerHeaders, $raw];
    }
}
