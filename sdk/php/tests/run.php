<?php

declare(strict_types=1);

// The PHP library's own tests, a plain script (no PHPUnit): `php sdk/php/tests/run.php`.
// The shared table of cases (sdk/cases/*.json) that the TypeScript, Python and PHP libraries all
// run, and the client's retry discipline against a scripted server (`php -S`). Also run as
// `php -n` (no extensions loaded, so no bcmath and no curl): the pure parts must still hold.

require __DIR__ . '/../autoload.php';

// A notice or warning anywhere is a failure, not noise.
set_error_handler(static function (int $no, string $message, string $file, int $line): bool {
    if ((error_reporting() & $no) === 0) {
        return false; // silenced with @ (the port probe)
    }
    throw new \ErrorException($message, 0, $no, $file, $line);
});

use Chaingate\ChaingateException;
use Chaingate\Client;
use Chaingate\Settlement;
use Chaingate\Signer;
use Chaingate\Webhook;
use Chaingate\WebhookVerificationException;

$failures = 0;
$passed = 0;
$section = '';

function check(bool $ok, string $what): void
{
    global $failures, $passed, $section;
    if ($ok) {
        $passed++;
    } else {
        $failures++;
        fwrite(STDERR, "FAIL [{$section}] {$what}\n");
    }
}

function same(mixed $expected, mixed $actual, string $what): void
{
    check($expected === $actual, $what . ($expected === $actual ? '' : ': expected ' . var_export($expected, true) . ', got ' . var_export($actual, true)));
}

function cases(string $name): array
{
    $dir = getenv('CHAINGATE_SDK_CASES') ?: __DIR__ . '/../../cases';
    return json_decode((string) file_get_contents("{$dir}/{$name}.json"), true, 512, JSON_THROW_ON_ERROR);
}

// --- signing ------------------------------------------------------------------------------------
$section = 'signing';
$signing = cases('signing')['cases'];
check(count($signing) >= 10, 'the table has its cases');
foreach ($signing as $c) {
    $n = $c['name'];
    same($c['expect']['bodySha256'], Signer::sha256Hex($c['body']), "{$n}: body hash");
    $isWrite = in_array(strtoupper($c['method']), Signer::WRITE_METHODS, true);
    same($c['expect']['canonical'], Signer::canonicalString($c['timestamp'], $c['method'], $c['path'], $isWrite ? $c['idempotencyKey'] : null, Signer::sha256Hex($c['body'])), "{$n}: canonical string");
    $headers = Signer::sign($c['apiKey'], $c['apiSecret'], $c['method'], $c['path'], $c['body'], $c['idempotencyKey'], $c['timestamp']);
    same($c['expect']['signature'], $headers['X-Signature'], "{$n}: X-Signature");
    same($c['expect']['idempotencyKey'], $headers['Idempotency-Key'] ?? null, "{$n}: Idempotency-Key");
}
check(preg_match('/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/', Signer::uuid()) === 1, 'a fresh key is a v4 UUID');
check(Signer::uuid() !== Signer::uuid(), 'fresh keys differ');

// --- webhooks -----------------------------------------------------------------------------------
$section = 'webhooks';
$reasons = [];
$hooks = cases('webhooks')['cases'];
check(count($hooks) >= 20, 'the table has its cases');
foreach ($hooks as $c) {
    $n = $c['name'];
    try {
        $event = Webhook::verify($c['headers'], $c['body'], $c['secret'], $c['tolerance'], $c['now']);
        check($c['expect']['ok'], "{$n}: accepted but should be refused (" . ($c['expect']['reason'] ?? '') . ')');
        if ($c['expect']['ok']) {
            same($c['expect']['eventId'], $event['id'], "{$n}: event id");
        }
    } catch (WebhookVerificationException $e) {
        check(!$c['expect']['ok'], "{$n}: refused ({$e->getReason()}) but should be accepted");
        if (!$c['expect']['ok']) {
            same($c['expect']['reason'], $e->getReason(), "{$n}: reason");
            $reasons[$e->getReason()] = true;
        }
    }
}
$all = array_keys($reasons);
sort($all);
same(['expired', 'malformed', 'mismatch', 'missing'], $all, 'every reason is exercised');
same(['x-webhook-signature' => 't=1,v1=ab', 'webhook-id' => 'e1'], Webhook::headersFromServer(['HTTP_X_WEBHOOK_SIGNATURE' => 't=1,v1=ab', 'HTTP_WEBHOOK_ID' => 'e1', 'REQUEST_METHOD' => 'POST']), 'headers from $_SERVER');

// --- settlement ---------------------------------------------------------------------------------
$section = 'settlement';
$modes = extension_loaded('bcmath') ? ['bcmath' => true, 'strings' => false] : ['strings' => false];
$table = cases('settlement');
foreach ($modes as $mode => $useBcmath) {
    foreach ($table['cases'] as $c) {
        $s = Settlement::of($c['payment'], $useBcmath);
        same($c['expect']['status'], $s->status, "{$mode}: {$c['name']}: status");
        same($c['expect']['difference'], $s->difference, "{$mode}: {$c['name']}: difference");
    }
    foreach ($table['refused'] as $c) {
        try {
            Settlement::of($c['payment'], $useBcmath);
            check(false, "{$mode}: {$c['name']}: refused");
        } catch (\InvalidArgumentException) {
            check(true, "{$mode}: {$c['name']}: refused");
        }
    }
}
same(true, Settlement::of(['expectedAmount' => '1.50', 'receivedAmount' => '1.5'])->isExact(), 'the default mode compares decimals, not strings');

// --- the client against a scripted server (needs ext-curl) -----------------------------------------
$section = 'client';
if (!extension_loaded('curl')) {
    echo "client tests need ext-curl: left to the run with extensions\n";
} else {
    /** Starts `php -S` on a free port with the router above; returns [url, stateFile, stop]. */
    $stub = static function (array $answers): array {
        $state = tempnam(sys_get_temp_dir(), 'cg-stub-');
        file_put_contents($state, json_encode(['answers' => $answers, 'seen' => []]));
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr(strrchr(stream_socket_get_name($probe, false), ':'), 1);
        fclose($probe);
        $proc = proc_open([PHP_BINARY, '-S', "127.0.0.1:{$port}", __DIR__ . '/stub-router.php'], [0 => ['file', '/dev/null', 'r'], 1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']], $pipes, null, ['CHAINGATE_STUB_STATE' => $state] + getenv());
        for ($i = 0; $i < 200 && !@fsockopen('127.0.0.1', $port); $i++) {
            usleep(20_000);
        }
        $seen = static fn (): array => json_decode((string) file_get_contents($state), true)['seen'];
        $stop = static function () use ($proc, $state): void {
            proc_terminate($proc);
            proc_close($proc);
            @unlink($state);
        };
        return ["http://127.0.0.1:{$port}", $seen, $stop];
    };
    $inFlight = ['status' => 409, 'body' => ['success' => false, 'error' => ['code' => 'IDEMPOTENCY_KEY_CONFLICT', 'message' => 'A request with this Idempotency-Key is still being processed; back off and retry'], 'requestId' => 'req_a']];
    $created = ['status' => 201, 'body' => ['success' => true, 'data' => ['id' => 'inv1', 'status' => 'OPEN', 'amount' => '2500'], 'requestId' => 'req_b']];
    $sleeps = [];
    $options = ['sleepMs' => static function (int $ms) use (&$sleeps): void {
        $sleeps[] = $ms;
    }];

    // A write is retried with one key while the first attempt runs; each attempt signed over its bytes.
    [$url, $seen, $stop] = $stub([$inFlight, $inFlight, $created]);
    $invoice = (new Client($url, 'key', 'secret', $options))->createInvoice(['orderId' => 'o-1', 'amount' => '2500', 'currency' => 'USD', 'metadata' => []], 'order-7');
    same('inv1', $invoice['id'], 'the third attempt answers');
    $requests = $seen();
    same(['order-7', 'order-7', 'order-7'], array_map(static fn ($r) => $r['idempotency-key'] ?? null, array_column($requests, 'headers')), 'one key for every attempt');
    same([250, 500], $sleeps, 'exponential back-off');
    foreach ($requests as $r) {
        [$t, $v1] = explode(',v1=', substr($r['headers']['x-signature'], 2));
        same(Signer::hmacHex('secret', Signer::canonicalString($t, 'POST', '/api/v1/invoices', 'order-7', Signer::sha256Hex($r['body']))), $v1, 'the signature covers the bytes sent');
        same('application/json', $r['headers']['content-type'] ?? null, 'a body is sent as JSON');
    }
    same('{"orderId":"o-1","amount":"2500","currency":"USD","metadata":{}}', $requests[0]['body'], 'empty metadata is sent as an object');
    $stop();

    // Other errors are not retried and carry code, status, request id and details.
    [$url, $seen, $stop] = $stub([['status' => 400, 'body' => ['success' => false, 'error' => ['code' => 'VALIDATION_ERROR', 'message' => 'Invalid request body', 'details' => [['path' => 'body.amount', 'message' => 'bad']]], 'requestId' => 'req_z']]]);
    try {
        (new Client($url, 'key', 'secret', $options))->createInvoice(['orderId' => 'o', 'amount' => 'x', 'currency' => 'USD']);
        check(false, 'a 400 throws');
    } catch (ChaingateException $e) {
        same(['VALIDATION_ERROR', 400, 'req_z', 'body.amount'], [$e->getCode(), $e->getStatus(), $e->getRequestId(), $e->getDetails()[0]['path'] ?? null], 'code, status, request id, details');
    }
    same(1, count($seen()), 'a 400 is not retried');
    $stop();

    // 5xx and 429 are retried (429 after Retry-After), then reported; a GET carries no key or body type.
    $sleeps = [];
    [$url, $seen, $stop] = $stub([['status' => 503, 'body' => ['success' => false, 'error' => ['code' => 'NO_AVAILABLE_WALLET', 'message' => 'later']]], ['status' => 429, 'body' => ['success' => false, 'error' => ['code' => 'RATE_LIMITED', 'message' => 'slow']], 'headers' => ['Retry-After' => '2']], ['status' => 500, 'body' => 'oops']]);
    try {
        (new Client($url, 'key', 'secret', ['maxAttempts' => 3] + $options))->listPayments(['status' => 'PENDING', 'take' => 5]);
        check(false, 'a 500 after the last attempt throws');
    } catch (ChaingateException $e) {
        same(['HTTP_500', 500], [$e->getCode(), $e->getStatus()], 'the last answer is reported');
    }
    same([250, 2000], $sleeps, 'back-off, then Retry-After');
    $get = $seen()[0];
    same('/api/v1/payments?status=PENDING&take=5', $get['path'], 'the query string is sent');
    check(!isset($get['headers']['idempotency-key']) && !isset($get['headers']['content-type']), 'a GET has no Idempotency-Key and no Content-Type');
    $stop();

    // Network errors are retried, then thrown as NETWORK_ERROR with status 0.
    $sleeps = [];
    $probe = stream_socket_server('tcp://127.0.0.1:0');
    $closed = (int) substr(strrchr(stream_socket_get_name($probe, false), ':'), 1);
    fclose($probe);
    try {
        (new Client("http://127.0.0.1:{$closed}", 'key', 'secret', ['maxAttempts' => 3] + $options))->getInvoice('x');
        check(false, 'a refused connection throws');
    } catch (ChaingateException $e) {
        same(['NETWORK_ERROR', 0, null], [$e->getCode(), $e->getStatus(), $e->getRequestId()], 'a network error');
    }
    same(2, count($sleeps), 'retried until the last attempt');

    // A redirect is not followed; path ids are percent-encoded.
    [$url, $seen, $stop] = $stub([['status' => 302, 'body' => '', 'headers' => ['Location' => 'http://127.0.0.1:1/elsewhere']]]);
    try {
        (new Client($url, 'key', 'secret', $options))->getInvoice('a/b?c');
        check(false, 'a 302 throws');
    } catch (ChaingateException $e) {
        same(302, $e->getStatus(), 'a redirect is an error');
    }
    same('/api/v1/invoices/a%2Fb%3Fc', $seen()[0]['path'], 'the id is percent-encoded');
    $stop();

    try {
        (new Client('http://127.0.0.1:1', 'k', 's'))->createInvoice(['orderId' => 'o', 'amount' => 25.0, 'currency' => 'USD']);
        check(false, 'a float amount is refused');
    } catch (\InvalidArgumentException) {
        check(true, 'a float amount is refused');
    }
}

echo "{$passed} passed, {$failures} failed" . (extension_loaded('bcmath') ? '' : ' (without bcmath)') . "\n";
exit($failures === 0 ? 0 : 1);
