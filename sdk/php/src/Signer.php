<?php

declare(strict_types=1);

namespace Chaingate;

/**
 * Request signing for the chaingate gateway (docs/api.md#authentication).
 *
 * The canonical string is t, METHOD, path (without the query string), the Idempotency-Key (writes
 * only) and the lowercase hex SHA-256 of the raw body, joined by LF. X-Signature is
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(apiSecret, canonical string)>`. Serialise the body once and
 * send exactly the bytes you signed: the server hashes what it receives.
 */
final class Signer
{
    public const WRITE_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'];

    public static function sha256Hex(string $body = ''): string
    {
        return hash('sha256', $body);
    }

    /** A GET has no Idempotency-Key line: it signs 4 lines, a write 5. */
    public static function canonicalString(int|string $t, string $method, string $path, ?string $idempotencyKey, string $bodyHash): string
    {
        $m = strtoupper($method);
        $lines = [(string) $t, $m, explode('?', $path, 2)[0]];
        if (in_array($m, self::WRITE_METHODS, true)) {
            $lines[] = $idempotencyKey ?? '';
        }
        $lines[] = $bodyHash;
        return implode("\n", $lines);
    }

    /** Lowercase hex HMAC-SHA256 keyed with the secret's bytes (never hex-decoded). */
    public static function hmacHex(string $secret, string $message): string
    {
        return hash_hmac('sha256', $message, $secret);
    }

    /**
     * The headers of one signed request. Call it right before sending: t is "now". Writes get an
     * Idempotency-Key (a fresh UUID unless given); a GET never sends or signs one.
     *
     * @return array<string, string>
     */
    public static function sign(string $apiKey, string $apiSecret, string $method, string $path, string $body = '', ?string $idempotencyKey = null, ?int $timestamp = null): array
    {
        $m = strtoupper($method);
        $t = (string) ($timestamp ?? time());
        $key = in_array($m, self::WRITE_METHODS, true) ? ($idempotencyKey ?? self::uuid()) : null;
        $signature = self::hmacHex($apiSecret, self::canonicalString($t, $m, $path, $key, self::sha256Hex($body)));
        $headers = ['X-API-Key' => $apiKey, 'X-Signature' => "t={$t},v1={$signature}", 'Accept' => 'application/json'];
        if ($body !== '') {
            $headers['Content-Type'] = 'application/json';
        }
        if ($key !== null) {
            $headers['Idempotency-Key'] = $key;
        }
        return $headers;
    }

    /** A random UUID (version 4): one per logical operation. */
    public static function uuid(): string
    {
        $b = random_bytes(16);
        $b[6] = chr((ord($b[6]) & 0x0f) | 0x40);
        $b[8] = chr((ord($b[8]) & 0x3f) | 0x80);
        $h = bin2hex($b);
        return substr($h, 0, 8) . '-' . substr($h, 8, 4) . '-' . substr($h, 12, 4) . '-' . substr($h, 16, 4) . '-' . substr($h, 20);
    }
}
