<?php

declare(strict_types=1);

namespace Chaingate;

/**
 * Verification of chaingate webhook deliveries (docs/webhooks.md#verifying-a-delivery).
 *
 * Two schemes travel on every delivery; either proves it came from chaingate:
 * - chaingate's: `X-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(apiSecret, "<t>.<raw body>")>`
 *   (and `X-Webhook-Timestamp`, which must equal t when present);
 * - Standard Webhooks: `webhook-id`, `webhook-timestamp` and
 *   `webhook-signature: v1,<base64 HMAC-SHA256(apiSecret, "<id>.<timestamp>.<raw body>")>`.
 * The first is checked when present, else the second. Digests are compared with hash_equals.
 */
final class Webhook
{
    public const TOLERANCE_SECONDS = 300;

    /**
     * Verifies the delivery of a plain PHP endpoint: the body from php://input, the headers from
     * $_SERVER. Returns the event; throws WebhookVerificationException (answer 400 then).
     *
     * @return array<string, mixed>
     */
    public static function verifyRequest(string $secret, int $tolerance = self::TOLERANCE_SECONDS): array
    {
        $rawBody = file_get_contents('php://input');
        return self::verify(self::headersFromServer($_SERVER), $rawBody === false ? '' : $rawBody, $secret, $tolerance);
    }

    /**
     * The request headers of a $_SERVER array (HTTP_X_WEBHOOK_SIGNATURE => x-webhook-signature).
     *
     * @param array<string, mixed> $server
     * @return array<string, string>
     */
    public static function headersFromServer(array $server): array
    {
        $headers = [];
        foreach ($server as $name => $value) {
            if (is_string($value) && str_starts_with((string) $name, 'HTTP_')) {
                $headers[strtolower(str_replace('_', '-', substr((string) $name, 5)))] = $value;
            }
        }
        return $headers;
    }

    /**
     * Verify a delivery and return its event; throw WebhookVerificationException otherwise.
     * $rawBody must be the exact bytes received: never decode and re-encode first. $secret is the
     * merchant point's current apiSecret. Deduplicate on the event's `id`: a retry or replay
     * carries the same id.
     *
     * @param array<string, string|list<string>> $headers any case (a PSR-7 getHeaders() works too)
     * @return array<string, mixed>
     */
    public static function verify(array $headers, string $rawBody, string $secret, int $tolerance = self::TOLERANCE_SECONDS, ?int $now = null): array
    {
        $h = [];
        foreach ($headers as $name => $value) {
            $key = strtolower((string) $name);
            foreach (is_array($value) ? $value : [$value] as $v) {
                $h[$key][] = (string) $v;
            }
        }
        $now ??= time();
        $chaingate = self::single($h, 'x-webhook-signature');
        $standard = self::single($h, 'webhook-signature');
        if ($chaingate !== null) {
            self::verifyChaingate($h, $chaingate, $rawBody, $secret, $tolerance, $now);
        } elseif ($standard !== null) {
            self::verifyStandard($h, $standard, $rawBody, $secret, $tolerance, $now);
        } else {
            throw new WebhookVerificationException('missing');
        }
        try {
            $event = json_decode($rawBody, true, 512, JSON_BIGINT_AS_STRING | JSON_THROW_ON_ERROR);
        } catch (\JsonException) {
            throw new WebhookVerificationException('malformed');
        }
        if (!is_array($event)) {
            throw new WebhookVerificationException('malformed');
        }
        return $event;
    }

    /** Lowercase hex HMAC-SHA256 of "<t>.<raw body>" keyed with the apiSecret. */
    public static function signatureHex(string $secret, int|string $t, string $rawBody): string
    {
        return hash_hmac('sha256', $t . '.' . $rawBody, $secret);
    }

    /** The apiSecret in the form Standard Webhooks libraries take: whsec_ + base64 of its bytes. */
    public static function standardSecret(string $secret): string
    {
        return 'whsec_' . base64_encode($secret);
    }

    /** @param array<string, list<string>> $h */
    private static function single(array $h, string $name): ?string
    {
        if (!isset($h[$name]) || count($h[$name]) !== 1) {
            return null;
        }
        $value = trim($h[$name][0]);
        return $value === '' ? null : $value;
    }

    private static function checkTime(string $t, int $tolerance, int $now): void
    {
        if (abs($now - (int) $t) > $tolerance) {
            throw new WebhookVerificationException('expired');
        }
    }

    /** @param array<string, list<string>> $h */
    private static function verifyChaingate(array $h, string $header, string $body, string $secret, int $tolerance, int $now): void
    {
        $t = null;
        $candidates = [];
        foreach (explode(',', $header) as $part) {
            $eq = strpos($part, '=');
            if ($eq === false) {
                continue;
            }
            $key = trim(substr($part, 0, $eq));
            $value = trim(substr($part, $eq + 1));
            if ($key === 't') {
                $t = $value;
            } elseif ($key === 'v1') {
                $candidates[] = $value;
            }
        }
        if ($t === null || preg_match('/^[0-9]{1,12}$/D', $t) !== 1 || $candidates === []) {
            throw new WebhookVerificationException('malformed');
        }
        if (isset($h['x-webhook-timestamp']) && self::single($h, 'x-webhook-timestamp') !== $t) {
            throw new WebhookVerificationException('malformed');
        }
        self::checkTime($t, $tolerance, $now);
        $expected = self::signatureHex($secret, $t, $body);
        $match = false;
        foreach ($candidates as $candidate) {
            // Every candidate is compared (no early exit), each in constant time.
            if (preg_match('/^[0-9a-f]{64}$/D', $candidate) === 1 && hash_equals($expected, $candidate)) {
                $match = true;
            }
        }
        if (!$match) {
            throw new WebhookVerificationException('mismatch');
        }
    }

    /** @param array<string, list<string>> $h */
    private static function verifyStandard(array $h, string $header, string $body, string $secret, int $tolerance, int $now): void
    {
        $id = self::single($h, 'webhook-id');
        $ts = self::single($h, 'webhook-timestamp');
        $candidates = [];
        foreach (explode(' ', $header) as $part) {
            if (str_starts_with($part, 'v1,')) {
                $candidates[] = substr($part, 3);
            }
        }
        if ($id === null || $ts === null || preg_match('/^[0-9]{1,12}$/D', $ts) !== 1 || $candidates === []) {
            throw new WebhookVerificationException('malformed');
        }
        self::checkTime($ts, $tolerance, $now);
        $expected = base64_encode(hash_hmac('sha256', $id . '.' . $ts . '.' . $body, $secret, true));
        $match = false;
        foreach ($candidates as $candidate) {
            if (hash_equals($expected, $candidate)) {
                $match = true;
            }
        }
        if (!$match) {
            throw new WebhookVerificationException('mismatch');
        }
    }
}
